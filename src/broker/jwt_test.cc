#include "broker/jwt.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace plimsoll::broker {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using namespace std::chrono_literals;

constexpr std::string_view kSecret = "plimsoll-test-secret-0123456789abcdef";

JwtClaims FixedClaims() {
  return JwtClaims{"ci-bot",
                   "inventory-api",
                   {"inventory.read", "inventory.reserve"},
                   "00112233445566778899aabbccddeeff",
                   1700000000,
                   1700000125};
}

// Decodes base64url without padding; written here independently of jwt.cc.
std::string DecodeBase64Url(std::string_view text) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    int value;
    if (c >= 'A' && c <= 'Z') {
      value = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      value = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      value = c - '0' + 52;
    } else if (c == '-') {
      value = 62;
    } else if (c == '_') {
      value = 63;
    } else {
      ADD_FAILURE() << "not base64url: " << c;
      return "";
    }
    bits = (bits << 6) | static_cast<uint32_t>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

std::string Sha256(std::string_view bytes) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest.data());
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

// HMAC-SHA256 straight from RFC 2104 over plain SHA-256, a different route
// from jwt.cc's OpenSSL HMAC().
std::string ReferenceHmacSha256(std::string_view key, std::string_view message) {
  std::string block(64, '\0');
  std::string short_key = key.size() > 64 ? Sha256(key) : std::string(key);
  std::copy(short_key.begin(), short_key.end(), block.begin());
  std::string inner(64, '\0');
  std::string outer(64, '\0');
  for (int i = 0; i < 64; ++i) {
    inner[i] = static_cast<char>(block[i] ^ 0x36);
    outer[i] = static_cast<char>(block[i] ^ 0x5c);
  }
  return Sha256(outer + Sha256(inner + std::string(message)));
}

struct DecodedJwt {
  nlohmann::json header;
  nlohmann::json payload;
  std::string signing_input;
  std::string signature;
};

DecodedJwt Decode(const std::string& token) {
  std::size_t first = token.find('.');
  std::size_t second = token.find('.', first + 1);
  EXPECT_NE(first, std::string::npos);
  EXPECT_NE(second, std::string::npos);
  EXPECT_EQ(token.find('.', second + 1), std::string::npos);
  EXPECT_EQ(token.find('='), std::string::npos) << "padding";
  DecodedJwt decoded;
  decoded.header = nlohmann::json::parse(DecodeBase64Url(token.substr(0, first)));
  decoded.payload =
      nlohmann::json::parse(DecodeBase64Url(token.substr(first + 1, second - first - 1)));
  decoded.signing_input = token.substr(0, second);
  decoded.signature = DecodeBase64Url(token.substr(second + 1));
  return decoded;
}

TEST(JwtTest, MatchesAKnownAnswer) {
  // Produced with Python 3's standard library, not this code:
  //   b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b'=').decode()
  //   part = lambda o: b64(json.dumps(o, sort_keys=True, separators=(',', ':')).encode())
  //   signing = part({"alg": "HS256", "typ": "JWT"}) + "." + part({"sub": "ci-bot",
  //       "aud": "inventory-api", "scope": "inventory.read inventory.reserve",
  //       "jti": "00112233445566778899aabbccddeeff", "iat": 1700000000, "exp": 1700000125})
  //   signing + "." + b64(hmac.new(b"plimsoll-test-secret-0123456789abcdef",
  //                                signing.encode(), hashlib.sha256).digest())
  constexpr std::string_view kExpected =
      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
      "eyJhdWQiOiJpbnZlbnRvcnktYXBpIiwiZXhwIjoxNzAwMDAwMTI1LCJpYXQiOjE3MDAwMDAwMDAsImp0aSI6IjAw"
      "MTEyMjMzNDQ1NTY2Nzc4ODk5YWFiYmNjZGRlZWZmIiwic2NvcGUiOiJpbnZlbnRvcnkucmVhZCBpbnZlbnRvcnku"
      "cmVzZXJ2ZSIsInN1YiI6ImNpLWJvdCJ9."
      "BmtkTmID9wQo4v4aT8s-I2xyLIjxdoEJQZ5pO0bolGQ";
  auto token = MintHs256Jwt(FixedClaims(), kSecret);
  ASSERT_TRUE(token.ok()) << token.error().ToString();
  EXPECT_EQ(*token, kExpected);
}

TEST(JwtTest, DecodesToTheClaimsAndAnIndependentlyCheckedSignature) {
  auto claims = NewRunClaims("alice", "inventory-api", {"read"}, 300s, 10000ms,
                             std::chrono::system_clock::time_point(1800000000s + 700ms));
  ASSERT_TRUE(claims.ok()) << claims.error().ToString();
  auto token = MintHs256Jwt(*claims, kSecret);
  ASSERT_TRUE(token.ok()) << token.error().ToString();
  DecodedJwt decoded = Decode(*token);
  EXPECT_EQ(decoded.header, nlohmann::json({{"alg", "HS256"}, {"typ", "JWT"}}));
  EXPECT_EQ(decoded.payload["sub"], "alice");
  EXPECT_EQ(decoded.payload["aud"], "inventory-api");
  EXPECT_EQ(decoded.payload["scope"], "read");
  EXPECT_EQ(decoded.payload["iat"], 1800000000);
  EXPECT_EQ(decoded.payload["exp"], 1800000000 + 15);  // 10 s budget + 5 s grace < 300 s
  EXPECT_THAT(decoded.payload["jti"].get<std::string>(), MatchesRegex("[0-9a-f]{32}"));
  EXPECT_EQ(decoded.payload.size(), 6u);
  EXPECT_EQ(decoded.signature, ReferenceHmacSha256(kSecret, decoded.signing_input));
  EXPECT_NE(decoded.signature,
            ReferenceHmacSha256("another-secret-0123456789abcdefgh", decoded.signing_input));
}

TEST(JwtTest, OmitsTheScopeClaimWhenThereAreNoScopes) {
  JwtClaims claims = FixedClaims();
  claims.scopes.clear();
  auto token = MintHs256Jwt(claims, kSecret);
  ASSERT_TRUE(token.ok());
  EXPECT_FALSE(Decode(*token).payload.contains("scope"));
}

TEST(JwtTest, EscapesClaimsAsJson) {
  JwtClaims claims = FixedClaims();
  claims.audience = "quote\" and \\ back";
  auto token = MintHs256Jwt(claims, kSecret);
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(Decode(*token).payload["aud"], "quote\" and \\ back");
}

TEST(JwtTest, RefusesShortSecretsWithoutEchoingThem) {
  auto token = MintHs256Jwt(FixedClaims(), "short-secret-31-bytes-long-xxxx");
  ASSERT_FALSE(token.ok());
  EXPECT_EQ(token.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(token.error().message(), HasSubstr("32 bytes"));
  EXPECT_THAT(token.error().message(), ::testing::Not(HasSubstr("short-secret")));
  EXPECT_TRUE(MintHs256Jwt(FixedClaims(), std::string(32, 'k')).ok());
  // Keys longer than SHA-256's block are hashed first (RFC 2104), both sides.
  std::string long_key(100, 'k');
  auto long_token = MintHs256Jwt(FixedClaims(), long_key);
  ASSERT_TRUE(long_token.ok());
  DecodedJwt decoded = Decode(*long_token);
  EXPECT_EQ(decoded.signature, ReferenceHmacSha256(long_key, decoded.signing_input));
}

TEST(JwtTest, ExpiryIsTheShorterOfTtlAndBudgetPlusGrace) {
  EXPECT_EQ(JwtExpiry(1000, 300s, 10000ms), 1015);
  EXPECT_EQ(JwtExpiry(1000, 300s, 10001ms), 1016);  // budget rounded up
  EXPECT_EQ(JwtExpiry(1000, 300s, 3600000ms), 1300);
  EXPECT_EQ(JwtExpiry(1000, 12s, 10000ms), 1012);
  EXPECT_EQ(JwtExpiry(1000, 300s, 0ms), 1005);
  EXPECT_EQ(JwtExpiry(1000, 300s, -5ms), 1005);
}

TEST(JwtTest, JwtIdsAreRandomHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto id = NewJwtId();
    ASSERT_TRUE(id.ok());
    EXPECT_THAT(*id, MatchesRegex("[0-9a-f]{32}"));
    seen.insert(*id);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(JwtTest, Base64UrlHasNoPadding) {
  EXPECT_EQ(Base64UrlEncode(""), "");
  EXPECT_EQ(Base64UrlEncode("f"), "Zg");
  EXPECT_EQ(Base64UrlEncode("fo"), "Zm8");
  EXPECT_EQ(Base64UrlEncode("foo"), "Zm9v");
  EXPECT_EQ(Base64UrlEncode("foob"), "Zm9vYg");
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
}

}  // namespace
}  // namespace plimsoll::broker
