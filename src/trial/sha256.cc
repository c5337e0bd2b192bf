#include "trial/sha256.h"

#include <openssl/sha.h>

#include <bit>

namespace plimsoll::trial {

static_assert(std::endian::native == std::endian::little,
              "trajectories and digests are little-endian float64; this host would need a byte swap");

std::string Sha256Hex(std::span<const unsigned char> bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(bytes.data(), bytes.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * sizeof digest);
  for (unsigned char byte : digest) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

std::span<const unsigned char> DoubleBytes(std::span<const double> values) {
  return {reinterpret_cast<const unsigned char*>(values.data()), values.size_bytes()};
}

}  // namespace plimsoll::trial
