#include "broker/route.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace plimsoll::broker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

RouteTemplate Route(std::string_view text) {
  auto route = RouteTemplate::Parse(text);
  EXPECT_TRUE(route.ok()) << text << ": " << route.error().ToString();
  return *route;
}

CanonicalPath Path(std::string_view raw) {
  auto path = CanonicalizePath(raw);
  EXPECT_TRUE(path.ok()) << raw << ": " << path.error().ToString();
  return *path;
}

TEST(HttpMethodTest, NamesRoundTripAndAreCaseSensitive) {
  for (HttpMethod method : {HttpMethod::kGet, HttpMethod::kHead, HttpMethod::kPost,
                            HttpMethod::kPut, HttpMethod::kPatch, HttpMethod::kDelete}) {
    EXPECT_EQ(ParseHttpMethod(HttpMethodName(method)), method);
  }
  EXPECT_FALSE(ParseHttpMethod("get").has_value());
  EXPECT_FALSE(ParseHttpMethod("OPTIONS").has_value());
  EXPECT_FALSE(ParseHttpMethod("CONNECT").has_value());
  EXPECT_FALSE(ParseHttpMethod("").has_value());
}

TEST(RouteTemplateTest, ParsesMethodAndSegments) {
  RouteTemplate route = Route("GET /items/*/reviews");
  EXPECT_EQ(route.method(), HttpMethod::kGet);
  EXPECT_EQ(route.path(), "/items/*/reviews");
  EXPECT_EQ(route.text(), "GET /items/*/reviews");
  EXPECT_THAT(route.segments(), ElementsAre("items", "*", "reviews"));
  EXPECT_TRUE(route.HasWildcard());

  RouteTemplate root = Route("HEAD /");
  EXPECT_TRUE(root.segments().empty());
  EXPECT_FALSE(root.HasWildcard());
  EXPECT_EQ(Route("DELETE /a-b_c~d.e/x:y@z!$&'()+,=").segments().size(), 2u);
}

TEST(RouteTemplateTest, RefusesMalformedRoutes) {
  struct Case {
    std::string_view text;
    std::string_view says;
  };
  for (const Case& bad : std::vector<Case>{
           {"GET", "METHOD /path"},
           {"get /items", "is not one of"},
           {"OPTIONS /items", "is not one of"},
           {"GET items", "must start with"},
           {"GET  /items", "must start with"},
           {"GET /items/", "empty segment"},
           {"GET //items", "empty segment"},
           {"GET /a/../b", "only of dots"},
           {"GET /a/./b", "only of dots"},
           {"GET /a/.../b", "only of dots"},
           {"GET /items?x=1", "'?'"},
           {"GET /items#top", "'#'"},
           {"GET /items/%2e", "'%'"},
           {"GET /items/a*", "'*'"},
           {"GET /items/**", "'*'"},
           {"GET /a;b", "';'"},
           {"GET /a\\b", "'\\'"},
           {"GET /a b", "' '"},
           {"GET /caf\xc3\xa9", "non-ASCII"},
       }) {
    auto route = RouteTemplate::Parse(bad.text);
    ASSERT_FALSE(route.ok()) << bad.text;
    EXPECT_THAT(route.error().message(), HasSubstr(bad.says)) << bad.text;
    EXPECT_EQ(route.error().code(), ErrorCode::kInvalidArgument);
  }
}

TEST(CanonicalizePathTest, AcceptsPlainPaths) {
  CanonicalPath path = Path("/items/42");
  EXPECT_THAT(path.segments(), ElementsAre("items", "42"));
  EXPECT_EQ(path.encoded(), "/items/42");
  EXPECT_TRUE(Path("/").segments().empty());
  EXPECT_EQ(Path("/").encoded(), "/");
  EXPECT_EQ(Path("/a.b/..c/c..").segments().size(), 3u);  // dots beside other characters are fine
  // White space beside other characters is fine too: trimmed, they are not dot segments.
  EXPECT_THAT(Path("/files/..%20a/a%C2%A0../. x").segments(),
              ElementsAre("files", ".. a", "a\xc2\xa0..", ". x"));
}

TEST(CanonicalizePathTest, DecodesExactlyOnceAndReencodesForUpstream) {
  CanonicalPath cafe = Path("/caf%C3%A9");
  EXPECT_THAT(cafe.segments(), ElementsAre("caf\xc3\xa9"));
  EXPECT_EQ(cafe.encoded(), "/caf%C3%A9");
  // Raw UTF-8 and the encoded form are the same path.
  EXPECT_EQ(Path("/caf\xc3\xa9"), cafe);
  // Unreserved characters are decoded and sent plain.
  EXPECT_EQ(Path("/%41%62c").encoded(), "/Abc");
  EXPECT_EQ(Path("/a%20b").segments()[0], "a b");
  EXPECT_EQ(Path("/a%20b").encoded(), "/a%20b");
  EXPECT_EQ(Path("/a b").encoded(), "/a%20b");
  EXPECT_EQ(Path("/*").encoded(), "/%2A");
  // Other non-ASCII text, four-byte sequences included, is fine.
  EXPECT_EQ(Path("/%E2%82%AC/%F0%9F%98%80/\xe6\x97\xa5").encoded(),
            "/%E2%82%AC/%F0%9F%98%80/%E6%97%A5");
}

struct RefusedPath {
  std::string_view raw;
  std::string_view says;
};

class CanonicalizePathRefusalTest : public ::testing::TestWithParam<RefusedPath> {};

TEST_P(CanonicalizePathRefusalTest, IsRefusedWithAWholeSentence) {
  auto path = CanonicalizePath(GetParam().raw);
  ASSERT_FALSE(path.ok()) << GetParam().raw;
  EXPECT_THAT(path.error().message(), HasSubstr(GetParam().says));
  EXPECT_EQ(path.error().message().back(), '.');
  EXPECT_EQ(NotDispatchedReason(path.error()), NotDispatched::kRequest);
}

INSTANTIATE_TEST_SUITE_P(
    Hostile, CanonicalizePathRefusalTest,
    ::testing::Values(
        RefusedPath{"", "empty"}, RefusedPath{"items", "start with"},
        RefusedPath{"%2fitems", "start with"}, RefusedPath{"/a?x=1", "query"},
        RefusedPath{"/a?", "query"}, RefusedPath{"/a%3Fx", "query"},
        RefusedPath{"/a#frag", "fragment"}, RefusedPath{"/a%23b", "fragment"},
        RefusedPath{"/a\\b", "backslash"}, RefusedPath{"/a%5cb", "encoded backslash"},
        RefusedPath{"/a%5Cb", "encoded backslash"}, RefusedPath{"/a;b", "';'"},
        RefusedPath{"/a%3bb", "';'"}, RefusedPath{"/a%00b", "control"},
        RefusedPath{std::string_view("/a\0b", 4), "control"},
        RefusedPath{"/a\r\nHost: evil", "control"}, RefusedPath{"/a%0d%0aX: y", "control"},
        RefusedPath{"/a\tb", "control"}, RefusedPath{"/a%7f", "control"},
        RefusedPath{"/a\x7f", "control"}, RefusedPath{"/a//b", "empty segment"},
        RefusedPath{"//a", "empty segment"}, RefusedPath{"/a/", "empty segment"},
        RefusedPath{"/a/./b", "dots"}, RefusedPath{"/a/../b", "dots"}, RefusedPath{"/..", "dots"},
        RefusedPath{"/a/...", "dots"}, RefusedPath{"/items/%2e%2e/admin", "dots"},
        RefusedPath{"/items/%2E%2E/admin", "dots"}, RefusedPath{"/items/.%2e/admin", "dots"},
        RefusedPath{"/items/%2e/admin", "dots"}, RefusedPath{"/items%2fadmin", "encoded '/'"},
        RefusedPath{"/items%2Fadmin", "encoded '/'"},
        RefusedPath{"/items/%252e%252e", "encoded '%'"}, RefusedPath{"/a%", "malformed"},
        RefusedPath{"/a%4", "malformed"}, RefusedPath{"/a%zz", "malformed"},
        RefusedPath{"/a%g0", "malformed"}, RefusedPath{"/a%%41", "malformed"},
        RefusedPath{"/%C0%AF", "UTF-8"}, RefusedPath{"/%C0%AE%C0%AE", "UTF-8"},
        RefusedPath{"/%E0%80%AF", "UTF-8"}, RefusedPath{"/%ED%A0%80", "UTF-8"},
        RefusedPath{"/%C3", "UTF-8"}, RefusedPath{"/%FF", "UTF-8"},
        RefusedPath{"/\xc0\xaf", "UTF-8"}, RefusedPath{"/%F4%90%80%80", "UTF-8"},
        RefusedPath{"/items/%EF%BC%8F", "normalisation"},  // U+FF0F fullwidth solidus
        RefusedPath{"/items/..\xef\xbc\x8f"
                    "admin",
                    "normalisation"},                               // raw, after dots
        RefusedPath{"/items/%EF%BC%8E%EF%BC%8E", "normalisation"},  // U+FF0E fullwidth dots
        RefusedPath{"/a%E2%80%A5", "normalisation"},                // U+2025 two dot leader
        RefusedPath{"/a%EF%BC%BC", "normalisation"},                // U+FF3C fullwidth backslash
        RefusedPath{"/a%CD%BE", "normalisation"},                   // U+037E Greek question mark
        RefusedPath{"/a%F0%9F%84%80", "normalisation"}));           // U+1F100 digit zero full stop

// Dot segments hidden by padding (issue 39): an upstream that trims white
// space, or trailing dots as Windows file APIs do, reads "..". Refused once
// every white-space code point (ASCII or Unicode, raw or percent-encoded) is
// set aside and only dots, or nothing, are left.
INSTANTIATE_TEST_SUITE_P(
    PaddedDots, CanonicalizePathRefusalTest,
    ::testing::Values(RefusedPath{"/files/..%20", "dots"}, RefusedPath{"/files/.. ", "dots"},
                      RefusedPath{"/files/%20..", "dots"}, RefusedPath{"/files/ .. ", "dots"},
                      RefusedPath{"/files/..%C2%A0", "dots"},      // U+00A0 no-break space
                      RefusedPath{"/files/..\xc2\xa0", "dots"},    // the same, raw
                      RefusedPath{"/files/%C2%A0%2E%2E", "dots"},  // leading NBSP, encoded dots
                      RefusedPath{"/files/..%E3%80%80", "dots"},   // U+3000 ideographic space
                      RefusedPath{"/files/..%E2%80%AF", "dots"},   // U+202F narrow no-break space
                      RefusedPath{"/files/..%E2%80%8B", "dots"},   // U+200B zero width space
                      RefusedPath{"/files/..%EF%BB%BF", "dots"},   // U+FEFF (JavaScript's trim)
                      RefusedPath{"/files/..%E1%9A%80", "dots"},   // U+1680 ogham space mark
                      RefusedPath{"/files/..%C2%85", "dots"},      // U+0085 next line
                      RefusedPath{"/files/..%E2%80%A8", "dots"},   // U+2028 line separator
                      RefusedPath{"/files/.. . .", "dots"},        // Windows trims dots and spaces
                      RefusedPath{"/files/. .", "dots"}, RefusedPath{"/files/...%20", "dots"},
                      RefusedPath{"/files/..%20/admin", "dots"},
                      RefusedPath{"/files/%20", "dots"},  // only white space: an empty segment
                      RefusedPath{"/files/%C2%A0%20", "dots"}));

TEST(CanonicalizePathTest, RefusesPathsOverTheLengthLimit) {
  std::string longest = "/" + std::string(kMaxPathBytes - 1, 'a');
  EXPECT_TRUE(CanonicalizePath(longest).ok());
  auto too_long = CanonicalizePath(longest + "a");
  ASSERT_FALSE(too_long.ok());
  EXPECT_THAT(too_long.error().message(), HasSubstr("2048"));
}

TEST(MatchTest, MatchesLiteralsAndOneSegmentWildcards) {
  RouteTemplate item = Route("GET /items/*");
  EXPECT_TRUE(Match(item, HttpMethod::kGet, Path("/items/42")));
  EXPECT_TRUE(Match(item, HttpMethod::kGet, Path("/items/caf%C3%A9")));
  EXPECT_FALSE(Match(item, HttpMethod::kPost, Path("/items/42")));
  EXPECT_FALSE(Match(item, HttpMethod::kHead, Path("/items/42")));
  EXPECT_FALSE(Match(item, HttpMethod::kGet, Path("/items")));
  EXPECT_FALSE(Match(item, HttpMethod::kGet, Path("/items/42/secret")));
  EXPECT_FALSE(Match(item, HttpMethod::kGet, Path("/Items/42")));
  EXPECT_FALSE(Match(item, HttpMethod::kGet, Path("/other/42")));

  RouteTemplate root = Route("GET /");
  EXPECT_TRUE(Match(root, HttpMethod::kGet, Path("/")));
  EXPECT_FALSE(Match(root, HttpMethod::kGet, Path("/a")));

  // An encoded literal matches its decoded template.
  EXPECT_TRUE(Match(Route("GET /items"), HttpMethod::kGet, Path("/%69tems")));
}

TEST(RouteMatcherTest, ReturnsTheMostSpecificTemplate) {
  RouteMatcher matcher({Route("GET /items/*"), Route("GET /items/new"), Route("GET /items"),
                        Route("POST /items"), Route("GET /*/meta")});
  const RouteTemplate* found = matcher.Find(HttpMethod::kGet, Path("/items/new"));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->text(), "GET /items/new");

  found = matcher.Find(HttpMethod::kGet, Path("/items/7"));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->text(), "GET /items/*");

  found = matcher.Find(HttpMethod::kPost, Path("/items"));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->text(), "POST /items");

  found = matcher.Find(HttpMethod::kGet, Path("/items/meta"));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->text(), "GET /items/*");  // the literal "items" comes first

  EXPECT_EQ(matcher.Find(HttpMethod::kDelete, Path("/items/7")), nullptr);
  EXPECT_EQ(matcher.Find(HttpMethod::kGet, Path("/admin")), nullptr);
}

}  // namespace
}  // namespace plimsoll::broker
