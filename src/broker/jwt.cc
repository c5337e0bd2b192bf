#include "broker/jwt.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <utility>

namespace plimsoll::broker {
namespace {

std::string CompactJson(const nlohmann::json& value) {
  // `replace`: invalid UTF-8 (impossible for validated names, but never a
  // throw) becomes U+FFFD instead of an exception.
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JoinScopes(const std::vector<std::string>& scopes) {
  std::string joined;
  for (const auto& scope : scopes) {
    if (!joined.empty()) joined += ' ';
    joined += scope;
  }
  return joined;
}

}  // namespace

std::string Base64UrlEncode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  std::size_t i = 0;
  auto byte = [&](std::size_t index) { return static_cast<unsigned char>(bytes[index]); };
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t group = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.push_back(kAlphabet[(group >> 6) & 63]);
    out.push_back(kAlphabet[group & 63]);
  }
  std::size_t left = bytes.size() - i;
  if (left == 1) {
    uint32_t group = byte(i) << 16;
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
  } else if (left == 2) {
    uint32_t group = (byte(i) << 16) | (byte(i + 1) << 8);
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.push_back(kAlphabet[(group >> 6) & 63]);
  }
  return out;
}

int64_t JwtExpiry(int64_t issued_at, std::chrono::seconds ttl,
                  std::chrono::milliseconds run_budget) {
  auto budget = std::chrono::ceil<std::chrono::seconds>(
      std::max(run_budget, std::chrono::milliseconds::zero()));
  auto lifetime = std::min(ttl, budget + kJwtBudgetGrace);
  return issued_at + lifetime.count();
}

Expected<std::string> NewJwtId() {
  std::array<unsigned char, 16> random{};
  if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
    return Failure(ErrorCode::kInternal,
                   "The OS random number generator could not produce a JWT ID (RAND_bytes "
                   "failed).");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : random) {
    hex.push_back(kHex[c >> 4]);
    hex.push_back(kHex[c & 0xf]);
  }
  return hex;
}

Expected<JwtClaims> NewRunClaims(std::string_view subject, std::string_view audience,
                                 std::vector<std::string> scopes, std::chrono::seconds ttl,
                                 std::chrono::milliseconds run_budget,
                                 std::chrono::system_clock::time_point now) {
  auto jwt_id = NewJwtId();
  if (!jwt_id.ok()) return jwt_id.error();
  JwtClaims claims;
  claims.subject = std::string(subject);
  claims.audience = std::string(audience);
  claims.scopes = std::move(scopes);
  claims.jwt_id = std::move(*jwt_id);
  claims.issued_at = std::chrono::floor<std::chrono::seconds>(now.time_since_epoch()).count();
  claims.expires_at = JwtExpiry(claims.issued_at, ttl, run_budget);
  return claims;
}

Expected<std::string> MintHs256Jwt(const JwtClaims& claims, std::string_view secret) {
  if (secret.size() < kMinJwtSecretBytes) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "The JWT secret is shorter than 32 bytes; HS256 needs a key of at least 256 "
                   "bits (RFC 7518 section 3.2).");
  }
  nlohmann::json header = {{"alg", "HS256"}, {"typ", "JWT"}};
  nlohmann::json payload = {{"sub", claims.subject},
                            {"aud", claims.audience},
                            {"jti", claims.jwt_id},
                            {"iat", claims.issued_at},
                            {"exp", claims.expires_at}};
  if (!claims.scopes.empty()) payload["scope"] = JoinScopes(claims.scopes);
  std::string signing_input =
      Base64UrlEncode(CompactJson(header)) + "." + Base64UrlEncode(CompactJson(payload));
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int mac_size = 0;
  unsigned char* signed_ok = HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
                                  reinterpret_cast<const unsigned char*>(signing_input.data()),
                                  signing_input.size(), mac.data(), &mac_size);
  if (signed_ok == nullptr || mac_size != 32) {
    return Failure(ErrorCode::kInternal, "OpenSSL could not compute the JWT's HMAC-SHA256.");
  }
  std::string signature =
      Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac_size));
  OPENSSL_cleanse(mac.data(), mac.size());
  return signing_input + "." + signature;
}

}  // namespace plimsoll::broker
