// The per-run credential of a `jwt` grant profile: an HS256 JSON Web Token
// (RFC 7519) the broker mints once per run and attaches host-side. It never
// enters the sandbox, the logs or the records.
//
// Claims: sub (the caller), aud, scope (space-separated; omitted when there
// are none), jti (128 random bits, hex), iat and exp (seconds since the
// epoch), with exp = iat + min(ttl, run budget + 5 s) so a token outlives its
// run by at most five seconds. Header {"alg":"HS256","typ":"JWT"}; every part
// base64url without padding; JSON with sorted keys and no spaces.
//
// Usage:
//
//   auto claims = NewRunClaims(caller.name, jwt.audience, profile.scopes,
//                              std::chrono::seconds(jwt.ttl_seconds), run_budget,
//                              std::chrono::system_clock::now());
//   if (!claims.ok()) return claims.error();
//   auto token = MintHs256Jwt(*claims, secret_from_environment);
//   if (!token.ok()) return token.error();  // never mentions the secret
//
// Pure functions apart from NewJwtId's randomness: thread-safe.
#ifndef PLIMSOLL_BROKER_JWT_H_
#define PLIMSOLL_BROKER_JWT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::broker {

// RFC 7518 §3.2: an HS256 key must be at least as long as the hash output.
inline constexpr std::size_t kMinJwtSecretBytes = 32;
// How long a token may outlive its run's budget.
inline constexpr std::chrono::seconds kJwtBudgetGrace{5};

struct JwtClaims {
  std::string subject;              // sub
  std::string audience;             // aud
  std::vector<std::string> scopes;  // scope, joined by spaces
  std::string jwt_id;               // jti
  int64_t issued_at = 0;            // iat
  int64_t expires_at = 0;           // exp
  friend bool operator==(const JwtClaims&, const JwtClaims&) = default;
};

// iat + min(ttl, run_budget + 5 s), the budget rounded up to whole seconds.
int64_t JwtExpiry(int64_t issued_at, std::chrono::seconds ttl,
                  std::chrono::milliseconds run_budget);

// 128 bits from OpenSSL's RAND_bytes as 32 lowercase hex digits; an error if
// the generator fails.
Expected<std::string> NewJwtId();

// The claims of one run's token: a fresh jti, iat = `now` (whole seconds),
// exp by JwtExpiry.
Expected<JwtClaims> NewRunClaims(std::string_view subject, std::string_view audience,
                                 std::vector<std::string> scopes, std::chrono::seconds ttl,
                                 std::chrono::milliseconds run_budget,
                                 std::chrono::system_clock::time_point now);

// The signed token "header.payload.signature". Fails (kFailedPrecondition)
// when the secret is shorter than kMinJwtSecretBytes, and (kInternal) if
// OpenSSL's HMAC fails; messages never contain the secret.
Expected<std::string> MintHs256Jwt(const JwtClaims& claims, std::string_view secret);

// Base64url without padding (RFC 4648 §5), as JWTs use it.
std::string Base64UrlEncode(std::string_view bytes);

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_JWT_H_
