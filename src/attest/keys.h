// Ed25519 keys for plimsoll-attest (issue 22): the signing key that
// `plimsoll-attest keygen` writes and `run` signs with, and the public key
// that `verify` checks bundles against.
//
// Formats (the ones the `openssl` command line reads and writes):
//   - a private key file is PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"),
//     unencrypted, mode 0600;
//   - a public key file is SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----");
//   - a key ID is the lowercase hex SHA-256 of the public key's
//     SubjectPublicKeyInfo (PKIX) DER encoding, i.e. what
//     `openssl pkey -pubin -in pub.pem -outform DER | sha256sum` prints.
//
// Only Ed25519 is accepted anywhere: a key of any other type is refused, so a
// verifier can never be talked into another algorithm.
//
// Usage:
//
//   // keygen: never overwrites, never leaves a partial file.
//   auto created = plimsoll::attest::GenerateKeyFile("attest.key");
//   if (!created.ok()) return created.error();
//   std::cout << created->verifying_key().key_id() << "\n";
//
//   // run: sign with the private key.
//   auto key = plimsoll::attest::LoadPrivateKey("attest.key");
//   if (!key.ok()) return key.error();   // missing, readable by others, not Ed25519, ...
//   auto signature = key->Sign(message); // 64 bytes
//
//   // pubkey / verify: the public half.
//   std::string pem = plimsoll::attest::PublicKeyPem(*key);
//   auto public_key = plimsoll::attest::LoadPublicKey("attest.pub");
//   if (!public_key.ok()) return public_key.error();
//   Status ok = public_key->Verify(message, *signature);
//
// Thread-safety: a SigningKey or VerifyingKey may be used from several threads
// at once (every operation builds its own OpenSSL context); the free functions
// are thread-safe.
#ifndef PLIMSOLL_ATTEST_KEYS_H_
#define PLIMSOLL_ATTEST_KEYS_H_

#include <openssl/types.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "plimsoll/error.h"

namespace plimsoll::attest {

// The size of an Ed25519 signature.
inline constexpr std::size_t kEd25519SignatureBytes = 64;
// A key file larger than this is refused before it is parsed.
inline constexpr std::size_t kMaxKeyFileBytes = 64 * 1024;

// Frees an EVP_PKEY; lets unique_ptr own OpenSSL keys.
struct EvpPkeyDeleter {
  void operator()(EVP_PKEY* key) const;
};
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyDeleter>;

// An Ed25519 public key. Move-only; always holds a key (the factories are the
// only way to build one).
class VerifyingKey {
 public:
  // Parses SubjectPublicKeyInfo PEM. Refuses anything else (a private key, a
  // certificate, a key that is not Ed25519, trailing PEM blocks) with
  // kInvalidArgument; `source` names the input at the start of a sentence
  // (e.g. "The public key file 'x.pub'").
  static Expected<VerifyingKey> FromPem(std::string_view pem,
                                        std::string_view source = "The public key");

  VerifyingKey(VerifyingKey&&) noexcept = default;
  VerifyingKey& operator=(VerifyingKey&&) noexcept = default;

  // Lowercase hex SHA-256 of the SubjectPublicKeyInfo DER (64 characters).
  const std::string& key_id() const { return key_id_; }
  // The SubjectPublicKeyInfo DER encoding (44 bytes for Ed25519).
  const std::string& der() const { return der_; }
  // "-----BEGIN PUBLIC KEY-----\n...-----END PUBLIC KEY-----\n" ("" only if
  // OpenSSL cannot allocate memory).
  std::string Pem() const;

  // Ok when `signature` is a valid Ed25519 signature of `message` by this key.
  // A wrong length or a signature that does not verify is kDataLoss (the
  // signed bytes are not what the signer signed); an OpenSSL failure kInternal.
  Status Verify(std::string_view message, std::string_view signature) const;

  // The OpenSSL key, owned by this object (for tests and interop helpers).
  EVP_PKEY* get() const { return key_.get(); }

 private:
  friend class SigningKey;
  // Precondition: `key` is an Ed25519 key.
  static Expected<VerifyingKey> FromEvp(EvpPkeyPtr key);
  VerifyingKey(EvpPkeyPtr key, std::string der, std::string key_id)
      : key_(std::move(key)), der_(std::move(der)), key_id_(std::move(key_id)) {}

  EvpPkeyPtr key_;
  std::string der_;
  std::string key_id_;
};

// An Ed25519 private key with its public half. Move-only; always holds a key.
class SigningKey {
 public:
  // A fresh key from OpenSSL's CSPRNG; kInternal if OpenSSL fails.
  static Expected<SigningKey> Generate();
  // Parses unencrypted PKCS#8 PEM ("PRIVATE KEY"). An encrypted key, a public
  // key, a key that is not Ed25519 or trailing PEM blocks are refused
  // (kInvalidArgument); messages name `source` and never contain key bytes.
  static Expected<SigningKey> FromPem(std::string_view pem,
                                      std::string_view source = "The private key");

  SigningKey(SigningKey&&) noexcept = default;
  SigningKey& operator=(SigningKey&&) noexcept = default;

  const VerifyingKey& verifying_key() const { return public_; }

  // The 64-byte Ed25519 signature of `message` (Ed25519 is deterministic:
  // the same key and message give the same signature). kInternal if OpenSSL
  // fails.
  Expected<std::string> Sign(std::string_view message) const;

  // PKCS#8 PEM of the private key. The caller owns the secret it returns.
  Expected<std::string> PrivatePem() const;

  EVP_PKEY* get() const { return key_.get(); }

 private:
  SigningKey(EvpPkeyPtr key, VerifyingKey verifying)
      : key_(std::move(key)), public_(std::move(verifying)) {}
  static Expected<SigningKey> FromEvp(EvpPkeyPtr key);

  EvpPkeyPtr key_;
  VerifyingKey public_;
};

// Writes a fresh Ed25519 key to `path` as PKCS#8 PEM with mode 0600 and
// returns it. Never overwrites: if `path` exists (even as a dangling symlink)
// the error (kFailedPrecondition) names it. Never leaves a partial key at
// `path`: the key is written to a temporary file created O_CREAT|O_EXCL 0600
// in the same directory, fsynced, then hard-linked to `path` (link() fails
// rather than replace; renameat2(RENAME_NOREPLACE) where the file system has
// no hard links), and the directory is fsynced. The temporary file
// (".NAME.tmp-<random>", 0600) is removed on every path but a crash.
Expected<SigningKey> GenerateKeyFile(const std::filesystem::path& path);

// Reads a private key written by GenerateKeyFile (or `openssl genpkey
// -algorithm ed25519`). Refuses, each with one sentence naming `path`:
//   - a missing file (kNotFound) or one that is not a regular file;
//   - a file whose mode lets the group or others read, write or execute it
//     (any bit of 077; kFailedPrecondition, saying to `chmod 600` it). This is
//     a refusal, not a warning, as ssh does: a key others could read may be
//     known to them, and signatures made with it prove nothing;
//   - a file larger than kMaxKeyFileBytes, or that is not PKCS#8 Ed25519 PEM.
Expected<SigningKey> LoadPrivateKey(const std::filesystem::path& path);

// SubjectPublicKeyInfo PEM of the key's public half.
std::string PublicKeyPem(const SigningKey& key);

// Reads a SubjectPublicKeyInfo PEM public key file (any mode: it is public).
// Refuses a missing file (kNotFound), one larger than kMaxKeyFileBytes, or
// anything but an Ed25519 public key (kInvalidArgument).
Expected<VerifyingKey> LoadPublicKey(const std::filesystem::path& path);

// Lowercase hex SHA-256 of the key's SubjectPublicKeyInfo DER encoding.
inline const std::string& KeyId(const VerifyingKey& key) {
  return key.key_id();
}

}  // namespace plimsoll::attest

#endif  // PLIMSOLL_ATTEST_KEYS_H_
