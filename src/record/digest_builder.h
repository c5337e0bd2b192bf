// The byte-exact digest encoding of run records (SPEC §5).
//
// A digest is lowercase hex SHA-256 over:
//   value(domain) field(name, content) field(name, content) ...
// where value(b) = u64 big-endian length of b, then b; and
// field(n, c) = value(n) value(c). Contents are encoded by type:
//   integer -> decimal ASCII, '-' for negatives ("0", "-7", "5000");
//   boolean -> "true" / "false";
//   float   -> 8 bytes, big-endian IEEE-754 binary64; every NaN becomes
//              0x7ff8000000000000 (-0.0 and the infinities keep their bits);
//   string / bytes -> the raw bytes, no normalisation;
//   count   -> an integer field placed before a repeated group.
// docs/run-records.md is the specification other languages implement.
//
// Usage:
//
//   DigestBuilder digest(kRequestDomain);
//   digest.Integer("protocol", 1);
//   digest.Bytes("javascript.code", code);
//   std::string hex = std::move(digest).Finish();
//
// Not thread-safe; one builder per digest.
#ifndef PLIMSOLL_RECORD_DIGEST_BUILDER_H_
#define PLIMSOLL_RECORD_DIGEST_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace plimsoll::record {

class DigestBuilder {
 public:
  // When `transcript` is non-null, every byte hashed is also appended to it
  // (for tests and the docs' worked examples).
  explicit DigestBuilder(std::string_view domain, std::string* transcript = nullptr);
  ~DigestBuilder();
  DigestBuilder(const DigestBuilder&) = delete;
  DigestBuilder& operator=(const DigestBuilder&) = delete;

  void Bytes(std::string_view name, std::string_view content);
  void Integer(std::string_view name, int64_t content);
  void Boolean(std::string_view name, bool content);
  void Float(std::string_view name, double content);
  void Count(std::string_view name, size_t count);

  // Lowercase hex SHA-256 of everything added. Call once.
  std::string Finish() &&;

 private:
  void Value(std::string_view bytes);
  void Raw(const void* data, size_t size);

  struct Hasher;
  std::unique_ptr<Hasher> hasher_;
  std::string* transcript_;
};

// The 8 bytes a float contributes (big-endian, NaN normalised).
std::string EncodeFloat(double value);

// Lowercase hex of `bytes`.
std::string LowerHex(std::string_view bytes);

// Lowercase hex SHA-256 of `bytes` (no domain, no framing).
std::string Sha256Hex(std::string_view bytes);

}  // namespace plimsoll::record

#endif  // PLIMSOLL_RECORD_DIGEST_BUILDER_H_
