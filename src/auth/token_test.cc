#include "auth/token.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace plimsoll::auth {
namespace {

TEST(TokenTest, HasThePrefixTheLengthAndTheBase64UrlAlphabet) {
  auto token = GenerateToken();
  ASSERT_TRUE(token.ok()) << token.error().ToString();
  EXPECT_EQ(token->size(), kTokenLength);
  EXPECT_EQ(token->size(), 47u);
  EXPECT_TRUE(token->starts_with("plm_"));
  EXPECT_EQ(token->find_first_not_of(
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 4),
            std::string::npos);
  EXPECT_TRUE(IsWellFormedToken(*token));
}

// 43 base64url characters carry 258 bits, of which the last 2 are padding:
// check that every bit position of the 32 random bytes varies across tokens
// and that no two of many tokens collide.
TEST(TokenTest, EveryRandomBitVariesAndTokensDoNotRepeat) {
  constexpr int kCount = 2000;
  std::set<std::string> seen;
  std::array<int, 43 * 6> ones{};
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  for (int i = 0; i < kCount; ++i) {
    auto token = GenerateToken();
    ASSERT_TRUE(token.ok());
    ASSERT_TRUE(seen.insert(*token).second) << "a token repeated";
    for (std::size_t c = 0; c < 43; ++c) {
      auto value = alphabet.find((*token)[4 + c]);
      ASSERT_NE(value, std::string::npos);
      for (int bit = 0; bit < 6; ++bit) ones[c * 6 + bit] += (value >> (5 - bit)) & 1;
    }
  }
  // 256 random bits; each is 1 about half the time (the bound is > 8 sigma).
  for (std::size_t bit = 0; bit < 256; ++bit) {
    EXPECT_GT(ones[bit], kCount * 0.4) << "bit " << bit;
    EXPECT_LT(ones[bit], kCount * 0.6) << "bit " << bit;
  }
  // The last two bits of the encoding are always zero (canonical encoding).
  EXPECT_EQ(ones[256], 0);
  EXPECT_EQ(ones[257], 0);
}

TEST(TokenTest, MalformedTokensAreRecognised) {
  auto token = GenerateToken();
  ASSERT_TRUE(token.ok());
  EXPECT_FALSE(IsWellFormedToken(""));
  EXPECT_FALSE(IsWellFormedToken("plm_"));
  EXPECT_FALSE(IsWellFormedToken(token->substr(0, kTokenLength - 1)));
  EXPECT_FALSE(IsWellFormedToken(*token + "A"));
  std::string other_prefix = *token;
  other_prefix[0] = 'x';
  EXPECT_FALSE(IsWellFormedToken(other_prefix));
  std::string bad_character = *token;
  bad_character[10] = '+';
  EXPECT_FALSE(IsWellFormedToken(bad_character));
  std::string non_canonical = *token;
  non_canonical.back() = 'B';  // sets one of the two padding bits
  EXPECT_FALSE(IsWellFormedToken(non_canonical));
}

TEST(TokenTest, HashIsSha256OfTheWholeToken) {
  // SHA-256("abc"), FIPS 180-2 appendix B.1.
  TokenHash digest = HashToken("abc");
  const unsigned char expected[] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
                                    0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
                                    0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
                                    0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
  EXPECT_TRUE(std::equal(digest.begin(), digest.end(), std::begin(expected)));
}

TEST(TokenTest, DigestComparisonIsExactAtEveryPosition) {
  TokenHash a = HashToken("plm_one");
  EXPECT_TRUE(TokenHashesEqual(a, a));
  for (std::size_t i = 0; i < a.size(); ++i) {
    TokenHash b = a;
    b[i] ^= 0x01;
    EXPECT_FALSE(TokenHashesEqual(a, b)) << "differs at byte " << i;
  }
}

TEST(TokenTest, BearerHeaderParsing) {
  auto token = BearerTokenFromHeader("Bearer plm_abc");
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(*token, "plm_abc");
  token = BearerTokenFromHeader("  bEaReR \t plm_abc  ");
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(*token, "plm_abc");

  for (std::string_view header :
       {"", "   ", "Basic dXNlcjpwYXNz", "Bearer", "Bearerplm_abc", "plm_abc"}) {
    auto refused = BearerTokenFromHeader(header);
    ASSERT_FALSE(refused.ok()) << header;
    EXPECT_EQ(refused.error().code(), ErrorCode::kUnauthenticated);
    EXPECT_EQ(NotDispatchedReason(refused.error()), NotDispatched::kPermission);
  }
}

}  // namespace
}  // namespace plimsoll::auth
