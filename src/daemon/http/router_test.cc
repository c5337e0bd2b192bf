#include "daemon/http/router.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "daemon/http/errors_to_http.h"

namespace plimsoll::daemon::http {
namespace {

TEST(PathSegments, DropsTheQueryAndSplitsOnSlashes) {
  EXPECT_EQ(PathSegments("/v1/sessions/ab/runs?x=1"),
            (std::vector<std::string_view>{"v1", "sessions", "ab", "runs"}));
  EXPECT_EQ(PathSegments("/"), (std::vector<std::string_view>{""}));
  EXPECT_EQ(PathSegments("/v1//runs"), (std::vector<std::string_view>{"v1", "", "runs"}));
}

TEST(IsJsonContentType, AcceptsJsonInUtf8Only) {
  EXPECT_TRUE(IsJsonContentType("application/json"));
  EXPECT_TRUE(IsJsonContentType("Application/JSON; charset=UTF-8"));
  EXPECT_TRUE(IsJsonContentType("application/json;charset=\"utf-8\""));
  EXPECT_FALSE(IsJsonContentType("application/json; charset=latin1"));
  EXPECT_FALSE(IsJsonContentType("text/json"));
  EXPECT_FALSE(IsJsonContentType("application/jsonx"));
  EXPECT_FALSE(IsJsonContentType(""));
}

TEST(HttpStatusFor, EveryCodeHasItsStatus) {
  EXPECT_EQ(HttpStatusFor(ErrorCode::kInvalidArgument), HttpStatus::bad_request);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUnauthenticated), HttpStatus::unauthorized);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kPermissionDenied), HttpStatus::forbidden);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kNotFound), HttpStatus::not_found);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kFailedPrecondition), HttpStatus::conflict);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kResourceExhausted), HttpStatus::too_many_requests);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUnimplemented), HttpStatus::not_implemented);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kDeadlineExceeded), HttpStatus::gateway_timeout);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kInternal), HttpStatus::internal_server_error);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kDataLoss), HttpStatus::bad_gateway);
}

class RefuseEveryone final : public Authenticator {
 public:
  Expected<Caller> Authenticate(std::optional<std::string_view> authorization) override {
    seen = authorization ? std::string(*authorization) : "<none>";
    return Refusal(NotDispatched::kPermission, ErrorCode::kUnauthenticated, "no");
  }
  std::string seen;
};

boost::asio::awaitable<Answer> Nothing(RequestContext&) {
  co_return Answer{};
}

TEST(Router, AuthenticatesBeforeCheckingTheContentType) {
  std::ostringstream sink;
  Log log(sink);
  RefuseEveryone authenticator;
  Router router(&authenticator, log);
  router.Add({Verb::post,
              "/v1/runs",
              {.authenticate = true, .scope = "runs", .json_body = true},
              Nothing});
  RequestHeader header;
  header.method(Verb::post);
  header.target("/v1/runs");
  header.set(boost::beast::http::field::authorization, "Bearer abc");
  auto admitted = router.Admit(header, "");
  ASSERT_TRUE(std::holds_alternative<Answer>(admitted));
  EXPECT_EQ(std::get<Answer>(admitted).status, HttpStatus::unauthorized);
  EXPECT_EQ(authenticator.seen, "Bearer abc");

  header.insert(boost::beast::http::field::authorization, "Bearer def");
  auto twice = router.Admit(header, "");
  ASSERT_TRUE(std::holds_alternative<Answer>(twice));
  EXPECT_EQ(std::get<Answer>(twice).not_dispatched, NotDispatched::kPermission);
}

TEST(Router, MatchesPathParameters) {
  std::ostringstream sink;
  Log log(sink);
  Router router(nullptr, log);
  router.Add({Verb::delete_,
              "/v1/sessions/{id}",
              {.authenticate = false, .scope = {}, .json_body = false},
              Nothing});
  RequestHeader header;
  header.method(Verb::delete_);
  header.target("/v1/sessions/s-123");
  auto admitted = router.Admit(header, "");
  ASSERT_TRUE(std::holds_alternative<Admitted>(admitted));
  EXPECT_EQ(std::get<Admitted>(admitted).path_params, std::vector<std::string>{"s-123"});
  header.target("/v1/sessions/");
  EXPECT_TRUE(std::holds_alternative<Answer>(router.Admit(header, "")));
}

// A method the contract does not declare on a known path (TRACE, OPTIONS, a
// verb Beast does not know) is 405 with Allow and the nothing-ran mark; on an
// unknown path it stays 404.
TEST(Router, AnUndeclaredMethodOnAKnownPathIs405WithAllow) {
  std::ostringstream sink;
  Log log(sink);
  Router router(nullptr, log);
  RouteOptions open{.authenticate = false, .scope = {}, .json_body = false};
  router.Add({Verb::get, "/v1/describe", open, Nothing});
  router.Add({Verb::post, "/v1/runs", open, Nothing});
  router.Add({Verb::delete_, "/v1/sessions/{id}", open, Nothing});
  struct Case {
    std::string method, target, allow;
  };
  for (const Case& c :
       {Case{"TRACE", "/v1/describe", "GET"}, Case{"OPTIONS", "/v1/runs", "POST"},
        Case{"BREW", "/v1/runs?x=1", "POST"}, Case{"TRACE", "/v1/sessions/abc", "DELETE"}}) {
    SCOPED_TRACE(c.method + " " + c.target);
    RequestHeader header;
    header.method_string(c.method);
    header.target(c.target);
    auto admitted = router.Admit(header, "0123456789abcdef0123456789abcdef");
    ASSERT_TRUE(std::holds_alternative<Answer>(admitted));
    const Answer& answer = std::get<Answer>(admitted);
    EXPECT_EQ(answer.status, HttpStatus::method_not_allowed);
    EXPECT_EQ(answer.not_dispatched, NotDispatched::kRequest);
    EXPECT_THAT(answer.headers,
                ::testing::Contains(std::pair<std::string, std::string>("Allow", c.allow)));
    EXPECT_THAT(answer.body, ::testing::HasSubstr("\"not_dispatched\":\"request\""));
  }
  RequestHeader unknown;
  unknown.method_string("TRACE");
  unknown.target("/v1/nothing");
  auto admitted = router.Admit(unknown, "");
  ASSERT_TRUE(std::holds_alternative<Answer>(admitted));
  EXPECT_EQ(std::get<Answer>(admitted).status, HttpStatus::not_found);
}

}  // namespace
}  // namespace plimsoll::daemon::http
