// Bearer tokens of callers (SPEC §4, docs/callers.md).
//
// A token is "plm_" followed by the unpadded base64url encoding of 32 bytes
// from the OS CSPRNG (OpenSSL RAND_bytes): 47 ASCII characters in all. The
// prefix makes a leaked token easy to recognise (secret scanners, logs). The
// daemon never stores or logs a token: it keeps only its SHA-256, and compares
// digests in constant time (CRYPTO_memcmp).
//
// Usage:
//
//   auto token = auth::GenerateToken();            // shown to the operator once
//   auth::TokenHash digest = auth::HashToken(*token);  // what the store keeps
//   bool same = auth::TokenHashesEqual(digest, stored);
//
// Every function here is thread-safe.
#ifndef PLIMSOLL_AUTH_TOKEN_H_
#define PLIMSOLL_AUTH_TOKEN_H_

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "plimsoll/error.h"

namespace plimsoll::auth {

inline constexpr std::string_view kTokenPrefix = "plm_";
inline constexpr std::size_t kTokenRandomBytes = 32;
// 4 prefix characters + ceil(32 * 4 / 3) = 43 base64url characters.
inline constexpr std::size_t kTokenLength = kTokenPrefix.size() + 43;

// The SHA-256 of a token's full text (prefix included).
using TokenHash = std::array<unsigned char, 32>;

// A fresh token. Fails (internal) only if the CSPRNG cannot be seeded.
Expected<std::string> GenerateToken();

// Whether `text` has the shape of a token (prefix, length, alphabet). A
// well-formed token may still be unknown; this only spares the store a lookup.
bool IsWellFormedToken(std::string_view text);

TokenHash HashToken(std::string_view token);

// Constant-time equality of two digests (CRYPTO_memcmp): the time taken does
// not depend on where the digests first differ.
bool TokenHashesEqual(const TokenHash& a, const TokenHash& b);

// The token of an HTTP `Authorization` header value ("Bearer <token>", scheme
// case-insensitive, RFC 7235). An empty or non-Bearer header is refused as
// unauthenticated with the `permission` not-dispatched mark. The result views
// into `authorization`.
Expected<std::string_view> BearerTokenFromHeader(std::string_view authorization);

}  // namespace plimsoll::auth

#endif  // PLIMSOLL_AUTH_TOKEN_H_
