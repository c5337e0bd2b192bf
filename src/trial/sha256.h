// SHA-256 of bytes, as lowercase hex (OpenSSL). The trajectory fingerprint
// and the scenario digest are both this.
#ifndef PLIMSOLL_TRIAL_SHA256_H_
#define PLIMSOLL_TRIAL_SHA256_H_

#include <span>
#include <string>

namespace plimsoll::trial {

std::string Sha256Hex(std::span<const unsigned char> bytes);

// The bytes of float64 values as they sit in memory; on this little-endian
// host (checked at compile time), their little-endian encoding.
std::span<const unsigned char> DoubleBytes(std::span<const double> values);

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_SHA256_H_
