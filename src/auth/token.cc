#include "auth/token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>

namespace plimsoll::auth {
namespace {

constexpr std::string_view kBase64UrlAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// Unpadded base64url (RFC 4648 §5).
std::string Base64Url(const unsigned char* bytes, std::size_t size) {
  std::string text;
  text.reserve((size * 4 + 2) / 3);
  std::size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    unsigned value = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) text += kBase64UrlAlphabet[(value >> shift) & 63];
  }
  std::size_t rest = size - i;
  if (rest == 1) {
    unsigned value = bytes[i] << 16;
    text += kBase64UrlAlphabet[(value >> 18) & 63];
    text += kBase64UrlAlphabet[(value >> 12) & 63];
  } else if (rest == 2) {
    unsigned value = (bytes[i] << 16) | (bytes[i + 1] << 8);
    text += kBase64UrlAlphabet[(value >> 18) & 63];
    text += kBase64UrlAlphabet[(value >> 12) & 63];
    text += kBase64UrlAlphabet[(value >> 6) & 63];
  }
  return text;
}

bool IsBase64UrlCharacter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

char LowerAscii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

Expected<std::string> GenerateToken() {
  std::array<unsigned char, kTokenRandomBytes> random{};
  if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
    return Failure(ErrorCode::kInternal,
                   "The OS random number generator could not produce a token (RAND_bytes failed).");
  }
  std::string token(kTokenPrefix);
  token += Base64Url(random.data(), random.size());
  OPENSSL_cleanse(random.data(), random.size());
  return token;
}

bool IsWellFormedToken(std::string_view text) {
  if (text.size() != kTokenLength || !text.starts_with(kTokenPrefix)) return false;
  std::string_view body = text.substr(kTokenPrefix.size());
  if (!std::all_of(body.begin(), body.end(), IsBase64UrlCharacter)) return false;
  // 32 bytes leave 4 unused bits in the last character: only canonical
  // encodings (those bits zero) are tokens we could have issued.
  auto last = kBase64UrlAlphabet.find(body.back());
  return (last & 0x3) == 0;
}

TokenHash HashToken(std::string_view token) {
  TokenHash digest{};
  unsigned int size = 0;
  // EVP_Digest with SHA-256 fails only on allocation failure inside OpenSSL,
  // which leaves `digest` zeroed: no token hashes to all zeros in practice,
  // so such a digest matches nothing stored.
  EVP_Digest(token.data(), token.size(), digest.data(), &size, EVP_sha256(), nullptr);
  return digest;
}

bool TokenHashesEqual(const TokenHash& a, const TokenHash& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Expected<std::string_view> BearerTokenFromHeader(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  auto trim = [](std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
  };
  authorization = trim(authorization);
  if (authorization.empty()) {
    return Refusal(NotDispatched::kPermission, ErrorCode::kUnauthenticated,
                   "This daemon needs a caller token: send \"Authorization: Bearer plm_...\".");
  }
  bool bearer = authorization.size() > kScheme.size() &&
                (authorization[kScheme.size()] == ' ' || authorization[kScheme.size()] == '\t');
  for (std::size_t i = 0; bearer && i < kScheme.size(); ++i) {
    bearer = LowerAscii(authorization[i]) == kScheme[i];
  }
  if (!bearer) {
    return Refusal(NotDispatched::kPermission, ErrorCode::kUnauthenticated,
                   "The Authorization header must use the Bearer scheme: \"Bearer plm_...\".");
  }
  return trim(authorization.substr(kScheme.size()));
}

}  // namespace plimsoll::auth
