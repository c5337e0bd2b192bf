#include "broker/credential_scrub.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "broker/jwt.h"

namespace plimsoll::broker {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kToken = "sk/live+7c1e=0f5b&9a2d\"4e6f";

std::string Scrubbed(std::string text, std::string_view secret = kToken) {
  CredentialScrubber scrubber({secret});
  scrubber.Scrub(text);
  return text;
}

std::string Base64(std::string_view bytes) {
  std::string text = Base64UrlEncode(bytes);
  std::replace(text.begin(), text.end(), '-', '+');
  std::replace(text.begin(), text.end(), '_', '/');
  while (text.size() % 4 != 0) text += '=';
  return text;
}

std::string PercentEncodeAll(std::string_view bytes, bool lower) {
  std::string out;
  for (char c : bytes) {
    char hex[4];
    std::snprintf(hex, sizeof hex, lower ? "%%%02x" : "%%%02X", static_cast<unsigned char>(c));
    out += hex;
  }
  return out;
}

TEST(CredentialScrubberTest, ReplacesTheBytesAsTheyAre) {
  const std::string token(kToken);
  EXPECT_EQ(Scrubbed("Authorization: Bearer " + token + "\r\n"),
            "Authorization: Bearer [credential removed]\r\n");
  EXPECT_EQ(Scrubbed(token + token + "x" + token),
            "[credential removed][credential removed]x" + std::string(kCredentialMarker));
  EXPECT_EQ(Scrubbed("nothing here"), "nothing here");
  EXPECT_EQ(Scrubbed("sk/live+7c1e=0f5b"), "sk/live+7c1e=0f5b");  // a part is left
  std::string text = "plain";
  EXPECT_FALSE(CredentialScrubber({kToken}).Scrub(text));
}

TEST(CredentialScrubberTest, ReplacesEscapedSpellingsMixedFreely) {
  const std::string token(kToken);
  for (const std::string& spelled : {
           PercentEncodeAll(token, false),
           PercentEncodeAll(token, true),
           std::string("sk%2Flive%2B7c1e%3D0f5b%269a2d%224e6f"),  // encodeURIComponent
           std::string(R"(sk\/live+7c1e=0f5b&9a2d\"4e6f)"),       // JSON, PHP style
           std::string(R"(sk\u002flive\u002B7c1e=0f5b\u00269a2d\u00224e6f)"),
           std::string("sk/live+7c1e=0f5b&amp;9a2d&quot;4e6f"),  // HTML
           std::string("sk&#47;live&#x2b;7c1e&#61;0f5b&#38;9a2d&#x22;4e6f"),
           std::string("sk&sol;live&plus;7c1e&equals;0f5b&amp;9a2d&quot;4e6f"),
       }) {
    EXPECT_EQ(Scrubbed("<pre>" + spelled + "</pre>"), "<pre>[credential removed]</pre>") << spelled;
  }
  // '+' for a space, as forms encode it.
  EXPECT_EQ(Scrubbed("a=my+secret+value", "my secret value"), "a=[credential removed]");
}

TEST(CredentialScrubberTest, ReplacesBase64AtEveryAlignmentInBothAlphabets) {
  const std::string token(kToken);
  for (std::string prefix : {"", "B", "Be", "Bearer ", "Authorization: Bearer "}) {
    const std::string encoded = Base64(prefix + token + "\r\n");
    std::string url = encoded;
    std::replace(url.begin(), url.end(), '+', '-');
    std::replace(url.begin(), url.end(), '/', '_');
    for (const std::string& text : {encoded, url}) {
      const std::string scrubbed = Scrubbed("{\"dump\":\"" + text + "\"}");
      EXPECT_THAT(scrubbed, HasSubstr(std::string(kCredentialMarker))) << prefix;
      // What is left of the encoding no longer decodes to the token.
      EXPECT_THAT(scrubbed, Not(HasSubstr(text))) << prefix;
    }
  }
  // A JSON writer that escapes '/' does not hide it either.
  std::string encoded = Base64(token);
  std::string escaped;
  for (char c : encoded) escaped += c == '/' ? std::string("\\/") : std::string(1, c);
  EXPECT_THAT(Scrubbed(escaped), HasSubstr(std::string(kCredentialMarker)));
}

TEST(CredentialScrubberTest, EverySecretIsLookedFor) {
  CredentialScrubber scrubber({"first-secret-value", "", "second-secret-value"});
  std::string text = "a first-secret-value b second-secret-value c";
  EXPECT_TRUE(scrubber.Scrub(text));
  EXPECT_EQ(text, "a [credential removed] b [credential removed] c");
}

TEST(CredentialScrubberTest, ACutTextLosesTheStartOfASecretAtItsEnd) {
  const std::string token(kToken);
  CredentialScrubber scrubber({kToken});
  for (std::size_t kept = 1; kept < token.size(); ++kept) {
    std::string text = "echo: " + token.substr(0, kept);
    EXPECT_TRUE(scrubber.ScrubCut(text)) << kept;
    EXPECT_EQ(text, "echo: [credential removed]") << kept;
    // Not cut, the same text is left alone: a part is not the secret.
    text = "echo: " + token.substr(0, kept);
    EXPECT_FALSE(scrubber.Scrub(text)) << kept;
  }
  // Cut inside an escape.
  std::string text = "echo: sk%2";
  EXPECT_TRUE(scrubber.ScrubCut(text));
  EXPECT_EQ(text, "echo: [credential removed]");
  text = "echo: sk&#x2";
  EXPECT_TRUE(scrubber.ScrubCut(text));
  EXPECT_EQ(text, "echo: [credential removed]");
  // Text that cannot start the secret stays.
  text = "echo: done.";
  EXPECT_FALSE(scrubber.ScrubCut(text));
}

TEST(CredentialScrubberTest, LeavesOrdinaryTextAloneAndScansFourMebibytesQuickly) {
  std::string text(std::size_t{4} << 20, 'z');
  for (std::size_t i = 0; i < text.size(); i += 97) text[i] = "%&\\+s"[i % 5];
  const std::string before = text;
  CredentialScrubber scrubber({kToken, "jwt-secret-0123456789abcdef0123456789abcdef"});
  EXPECT_FALSE(scrubber.Scrub(text));
  EXPECT_EQ(text, before);
}

}  // namespace
}  // namespace plimsoll::broker
