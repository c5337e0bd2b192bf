#include "record/digest_builder.h"

#include <openssl/evp.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace plimsoll::record {
namespace {

// OpenSSL's SHA-256 cannot fail on valid arguments short of memory
// exhaustion; treat a failure as a broken invariant rather than hand a caller
// a digest of nothing.
[[noreturn]] void DigestFailed(const char* what) {
  std::fprintf(stderr, "plimsoll: SHA-256 %s failed\n", what);
  std::abort();
}

std::array<unsigned char, 8> BigEndian64(uint64_t value) {
  std::array<unsigned char, 8> out{};
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<unsigned char>(value & 0xff);
    value >>= 8;
  }
  return out;
}

}  // namespace

struct DigestBuilder::Hasher {
  EVP_MD_CTX* context = nullptr;
  ~Hasher() { EVP_MD_CTX_free(context); }
};

DigestBuilder::DigestBuilder(std::string_view domain, std::string* transcript)
    : hasher_(std::make_unique<Hasher>()), transcript_(transcript) {
  hasher_->context = EVP_MD_CTX_new();
  if (hasher_->context == nullptr) DigestFailed("context allocation");
  if (EVP_DigestInit_ex(hasher_->context, EVP_sha256(), nullptr) != 1) DigestFailed("init");
  Value(domain);
}

DigestBuilder::~DigestBuilder() = default;

void DigestBuilder::Raw(const void* data, size_t size) {
  if (size == 0) return;
  if (EVP_DigestUpdate(hasher_->context, data, size) != 1) DigestFailed("update");
  if (transcript_ != nullptr) transcript_->append(static_cast<const char*>(data), size);
}

void DigestBuilder::Value(std::string_view bytes) {
  auto length = BigEndian64(bytes.size());
  Raw(length.data(), length.size());
  Raw(bytes.data(), bytes.size());
}

void DigestBuilder::Bytes(std::string_view name, std::string_view content) {
  Value(name);
  Value(content);
}

void DigestBuilder::Integer(std::string_view name, int64_t content) {
  Bytes(name, std::to_string(content));
}

void DigestBuilder::Boolean(std::string_view name, bool content) {
  Bytes(name, content ? "true" : "false");
}

void DigestBuilder::Float(std::string_view name, double content) {
  Bytes(name, EncodeFloat(content));
}

void DigestBuilder::Count(std::string_view name, size_t count) {
  Bytes(name, std::to_string(count));
}

std::string DigestBuilder::Finish() && {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(hasher_->context, digest.data(), &size) != 1) DigestFailed("final");
  return LowerHex(std::string_view(reinterpret_cast<const char*>(digest.data()), size));
}

std::string EncodeFloat(double value) {
  uint64_t bits = std::isnan(value) ? uint64_t{0x7ff8000000000000} : std::bit_cast<uint64_t>(value);
  auto bytes = BigEndian64(bits);
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::string LowerHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0x0f]);
  }
  return out;
}

std::string Sha256Hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    DigestFailed("one-shot");
  }
  return LowerHex(std::string_view(reinterpret_cast<const char*>(digest.data()), size));
}

}  // namespace plimsoll::record
