#include "attest/keys.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE (glibc >= 2.28)
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <string>
#include <utility>

#include "base/unique_fd.h"

namespace plimsoll::attest {

void EvpPkeyDeleter::operator()(EVP_PKEY* key) const {
  EVP_PKEY_free(key);
}

namespace {

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

struct OpenSslFree {
  void operator()(void* memory) const { OPENSSL_free(memory); }
};
template <typename T>
using OpenSslPtr = std::unique_ptr<T, OpenSslFree>;

constexpr std::string_view kEd25519 = "ED25519";

// The first queued OpenSSL error as text, and an empty queue afterwards (so a
// failure here never shows up in an unrelated caller's error).
std::string TakeOpenSslError() {
  unsigned long code = ERR_get_error();  // NOLINT(runtime/int): OpenSSL's type
  std::string text = "no OpenSSL error recorded";
  if (code != 0) {
    std::array<char, 256> buffer{};
    ERR_error_string_n(code, buffer.data(), buffer.size());
    text = buffer.data();
  }
  ERR_clear_error();
  return text;
}

Error OpenSslFailure(std::string_view what) {
  return Failure(ErrorCode::kInternal,
                 "OpenSSL could not " + std::string(what) + " (" + TakeOpenSslError() + ").");
}

// The algorithm name of a key, for messages ("X25519", "RSA", ...).
std::string TypeName(const EVP_PKEY* key) {
  const char* name = EVP_PKEY_get0_type_name(key);
  return name != nullptr ? name : "non-Ed25519";
}

std::string Hex(const unsigned char* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

Expected<std::string> Sha256HexOf(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    return OpenSslFailure("compute a SHA-256 digest");
  }
  return Hex(digest.data(), size);
}

std::string Quoted(const std::filesystem::path& path) {
  // Appends rather than "'" + ...: GCC 12 -O3 warns falsely (-Wrestrict) on that form.
  std::string out(1, '\'');
  out += path.native();
  out += '\'';
  return out;
}

std::string BioContents(BIO* bio) {
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);  // NOLINT(runtime/int): OpenSSL's type
  return size > 0 ? std::string(data, static_cast<std::size_t>(size)) : std::string();
}

// One PEM block of `pem`: its label and DER bytes. Refuses a block with
// headers (legacy encryption), and anything but whitespace after the block.
struct PemBlock {
  std::string label;
  std::string der;
};

Expected<PemBlock> ReadSinglePemBlock(std::string_view pem, std::string_view source) {
  if (pem.size() > kMaxKeyFileBytes) {
    return Failure(ErrorCode::kInvalidArgument, std::string(source) + " is larger than " +
                                                    std::to_string(kMaxKeyFileBytes) +
                                                    " bytes, so it is not a key.");
  }
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return OpenSslFailure("allocate a memory BIO");
  char* raw_name = nullptr;
  char* raw_header = nullptr;
  unsigned char* raw_data = nullptr;
  long size = 0;  // NOLINT(runtime/int): OpenSSL's type
  int read = PEM_read_bio(bio.get(), &raw_name, &raw_header, &raw_data, &size);
  OpenSslPtr<char> name(raw_name);
  OpenSslPtr<char> header(raw_header);
  OpenSslPtr<unsigned char> data(raw_data);
  if (read != 1) {
    ERR_clear_error();
    return Failure(ErrorCode::kInvalidArgument,
                   std::string(source) + " holds no PEM block (\"-----BEGIN ...-----\").");
  }
  if (header && header.get()[0] != '\0') {
    return Failure(ErrorCode::kInvalidArgument,
                   std::string(source) +
                       " has PEM headers (a legacy encrypted key?); only unencrypted PKCS#8 "
                       "or SubjectPublicKeyInfo PEM is accepted.");
  }
  std::array<char, 256> rest{};
  int rest_size = 0;
  while ((rest_size = BIO_read(bio.get(), rest.data(), static_cast<int>(rest.size()))) > 0) {
    for (int i = 0; i < rest_size; ++i) {
      char c = rest[static_cast<std::size_t>(i)];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
        return Failure(ErrorCode::kInvalidArgument,
                       std::string(source) + " has more after its PEM block; one key per file.");
      }
    }
  }
  ERR_clear_error();
  return PemBlock{name.get(), std::string(reinterpret_cast<const char*>(data.get()),
                                          static_cast<std::size_t>(size))};
}

// Reads a whole key file (at most kMaxKeyFileBytes) and checks what fstat
// says about the open file, so the check and the read see the same inode.
Expected<std::string> ReadKeyFile(const std::filesystem::path& path, bool must_be_private) {
  base::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) {
    int error = errno;
    if (error == ENOENT) {
      return Failure(ErrorCode::kNotFound, "The key file " + Quoted(path) + " does not exist.");
    }
    return SystemError("open the key file " + Quoted(path), error);
  }
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) return SystemError("stat the key file " + Quoted(path), errno);
  if (!S_ISREG(info.st_mode)) {
    return Failure(ErrorCode::kInvalidArgument,
                   "The key file " + Quoted(path) + " is not a regular file.");
  }
  if (must_be_private && (info.st_mode & 077) != 0) {
    std::array<char, 8> mode{};
    std::snprintf(mode.data(), mode.size(), "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return Failure(ErrorCode::kFailedPrecondition,
                   "The private key file " + Quoted(path) + " has mode " + mode.data() +
                       ", so other users may read it; run `chmod 600 " + path.string() +
                       "` (and make a new key if others could have read it).");
  }
  if (static_cast<std::size_t>(info.st_size) > kMaxKeyFileBytes) {
    return Failure(ErrorCode::kInvalidArgument,
                   "The key file " + Quoted(path) + " is larger than " +
                       std::to_string(kMaxKeyFileBytes) + " bytes, so it is not a key.");
  }
  std::string text;
  std::array<char, 4096> buffer{};
  while (true) {
    ssize_t got = read(fd.get(), buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return SystemError("read the key file " + Quoted(path), errno);
    if (got == 0) break;
    text.append(buffer.data(), static_cast<std::size_t>(got));
    if (text.size() > kMaxKeyFileBytes) {
      OPENSSL_cleanse(text.data(), text.size());
      return Failure(ErrorCode::kInvalidArgument, "The key file " + Quoted(path) + " grew past " +
                                                      std::to_string(kMaxKeyFileBytes) +
                                                      " bytes while it was read.");
    }
  }
  OPENSSL_cleanse(buffer.data(), buffer.size());
  return text;
}

Status WriteAll(int fd, std::string_view bytes, const std::string& what) {
  while (!bytes.empty()) {
    ssize_t wrote = write(fd, bytes.data(), bytes.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) return SystemError(what, errno);
    bytes.remove_prefix(static_cast<std::size_t>(wrote));
  }
  return Status::Ok();
}

// Unlinks a temporary directory entry when it goes out of scope, unless it
// has been renamed away.
class ScopedUnlink {
 public:
  ScopedUnlink(int directory, std::string name) : directory_(directory), name_(std::move(name)) {}
  ScopedUnlink(const ScopedUnlink&) = delete;
  ScopedUnlink& operator=(const ScopedUnlink&) = delete;
  ~ScopedUnlink() {
    if (armed_) unlinkat(directory_, name_.c_str(), 0);
  }
  void Disarm() { armed_ = false; }

 private:
  int directory_;
  std::string name_;
  bool armed_ = true;
};

Error AlreadyExists(const std::filesystem::path& path) {
  return Failure(
      ErrorCode::kFailedPrecondition,
      "The key file " + Quoted(path) + " already exists; plimsoll-attest never overwrites a key.");
}

}  // namespace

// ---- VerifyingKey -----------------------------------------------------------

Expected<VerifyingKey> VerifyingKey::FromEvp(EvpPkeyPtr key) {
  int size = i2d_PUBKEY(key.get(), nullptr);
  if (size <= 0) return OpenSslFailure("encode the public key as SubjectPublicKeyInfo DER");
  std::string der(static_cast<std::size_t>(size), '\0');
  auto* out = reinterpret_cast<unsigned char*>(der.data());
  if (i2d_PUBKEY(key.get(), &out) != size) {
    return OpenSslFailure("encode the public key as SubjectPublicKeyInfo DER");
  }
  auto key_id = Sha256HexOf(der);
  if (!key_id.ok()) return key_id.error();
  return VerifyingKey(std::move(key), std::move(der), std::move(*key_id));
}

Expected<VerifyingKey> VerifyingKey::FromPem(std::string_view pem, std::string_view source) {
  auto block = ReadSinglePemBlock(pem, source);
  if (!block.ok()) return block.error();
  if (block->label != "PUBLIC KEY") {
    return Failure(ErrorCode::kInvalidArgument,
                   std::string(source) + " is a \"" + block->label +
                       "\" PEM block, not a public key (\"PUBLIC KEY\").");
  }
  const auto* cursor = reinterpret_cast<const unsigned char*>(block->der.data());
  const unsigned char* end = cursor + block->der.size();
  EvpPkeyPtr key(d2i_PUBKEY_ex(nullptr, &cursor, static_cast<long>(block->der.size()),  // NOLINT
                               nullptr, nullptr));
  if (!key || cursor != end) {
    ERR_clear_error();
    return Failure(ErrorCode::kInvalidArgument,
                   std::string(source) + " is not a well-formed SubjectPublicKeyInfo.");
  }
  if (!EVP_PKEY_is_a(key.get(), kEd25519.data())) {
    return Failure(ErrorCode::kInvalidArgument, std::string(source) + " is a " +
                                                    TypeName(key.get()) +
                                                    " key; plimsoll-attest accepts only Ed25519.");
  }
  return FromEvp(std::move(key));
}

std::string VerifyingKey::Pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key_.get()) != 1) {
    // Only allocation can fail for a key that encoded to DER at construction.
    ERR_clear_error();
    return std::string();
  }
  return BioContents(bio.get());
}

Status VerifyingKey::Verify(std::string_view message, std::string_view signature) const {
  if (signature.size() != kEd25519SignatureBytes) {
    return Failure(ErrorCode::kDataLoss, "The signature is " + std::to_string(signature.size()) +
                                             " bytes; an Ed25519 signature is 64.");
  }
  MdCtxPtr context(EVP_MD_CTX_new());
  if (!context) return OpenSslFailure("allocate a verification context");
  if (EVP_DigestVerifyInit_ex(context.get(), nullptr, nullptr, nullptr, nullptr, key_.get(),
                              nullptr) != 1) {
    return OpenSslFailure("start an Ed25519 verification");
  }
  int verdict = EVP_DigestVerify(
      context.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
      reinterpret_cast<const unsigned char*>(message.data()), message.size());
  ERR_clear_error();
  if (verdict != 1) {
    return Failure(ErrorCode::kDataLoss,
                   "The Ed25519 signature does not verify with key " + key_id_ + ".");
  }
  return Status::Ok();
}

// ---- SigningKey -------------------------------------------------------------

Expected<SigningKey> SigningKey::FromEvp(EvpPkeyPtr key) {
  std::array<unsigned char, 32> raw{};
  std::size_t size = raw.size();
  if (EVP_PKEY_get_raw_public_key(key.get(), raw.data(), &size) != 1 || size != raw.size()) {
    return OpenSslFailure("read the Ed25519 public key");
  }
  EvpPkeyPtr public_key(
      EVP_PKEY_new_raw_public_key_ex(nullptr, kEd25519.data(), nullptr, raw.data(), size));
  if (!public_key) return OpenSslFailure("build the Ed25519 public key");
  auto verifying = VerifyingKey::FromEvp(std::move(public_key));
  if (!verifying.ok()) return verifying.error();
  return SigningKey(std::move(key), std::move(*verifying));
}

Expected<SigningKey> SigningKey::Generate() {
  EvpPkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, kEd25519.data()));
  if (!key) return OpenSslFailure("generate an Ed25519 key");
  return FromEvp(std::move(key));
}

Expected<SigningKey> SigningKey::FromPem(std::string_view pem, std::string_view source) {
  auto block = ReadSinglePemBlock(pem, source);
  if (!block.ok()) return block.error();
  struct Cleanse {
    std::string& der;
    ~Cleanse() { OPENSSL_cleanse(der.data(), der.size()); }
  } cleanse{block->der};
  if (block->label == "ENCRYPTED PRIVATE KEY") {
    return Failure(ErrorCode::kInvalidArgument,
                   std::string(source) +
                       " is encrypted; plimsoll-attest reads only unencrypted keys (mode 0600).");
  }
  if (block->label != "PRIVATE KEY") {
    return Failure(ErrorCode::kInvalidArgument,
                   std::string(source) + " is a \"" + block->label +
                       "\" PEM block, not a PKCS#8 private key (\"PRIVATE KEY\").");
  }
  const auto* cursor = reinterpret_cast<const unsigned char*>(block->der.data());
  const unsigned char* end = cursor + block->der.size();
  EvpPkeyPtr key(d2i_AutoPrivateKey_ex(nullptr, &cursor,
                                       static_cast<long>(block->der.size()),  // NOLINT
                                       nullptr, nullptr));
  if (!key || cursor != end) {
    ERR_clear_error();
    return Failure(ErrorCode::kInvalidArgument,
                   std::string(source) + " is not a well-formed PKCS#8 private key.");
  }
  if (!EVP_PKEY_is_a(key.get(), kEd25519.data())) {
    return Failure(ErrorCode::kInvalidArgument, std::string(source) + " is a " +
                                                    TypeName(key.get()) +
                                                    " key; plimsoll-attest accepts only Ed25519.");
  }
  return FromEvp(std::move(key));
}

Expected<std::string> SigningKey::Sign(std::string_view message) const {
  MdCtxPtr context(EVP_MD_CTX_new());
  if (!context) return OpenSslFailure("allocate a signing context");
  if (EVP_DigestSignInit_ex(context.get(), nullptr, nullptr, nullptr, nullptr, key_.get(),
                            nullptr) != 1) {
    return OpenSslFailure("start an Ed25519 signature");
  }
  std::string signature(kEd25519SignatureBytes, '\0');
  std::size_t size = signature.size();
  if (EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
      size != kEd25519SignatureBytes) {
    return OpenSslFailure("make an Ed25519 signature");
  }
  return signature;
}

Expected<std::string> SigningKey::PrivatePem() const {
  BioPtr bio(BIO_new(BIO_s_secmem()));
  if (!bio) return OpenSslFailure("allocate a memory BIO");
  if (PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpenSslFailure("encode the private key as PKCS#8 PEM");
  }
  return BioContents(bio.get());
}

// ---- Files ------------------------------------------------------------------

Expected<SigningKey> GenerateKeyFile(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return Failure(ErrorCode::kInvalidArgument,
                   "The key path " + Quoted(path) + " does not name a file.");
  }
  struct stat existing {};
  if (lstat(path.c_str(), &existing) == 0) return AlreadyExists(path);
  if (errno != ENOENT) return SystemError("check the key path " + Quoted(path), errno);

  std::filesystem::path directory_path = path.parent_path();
  if (directory_path.empty()) directory_path = ".";
  base::UniqueFd directory(open(directory_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!directory.valid()) {
    return SystemError("open the key's directory " + Quoted(directory_path), errno);
  }

  auto key = SigningKey::Generate();
  if (!key.ok()) return key.error();
  auto pem = key->PrivatePem();
  if (!pem.ok()) return pem.error();
  struct Cleanse {
    std::string& text;
    ~Cleanse() { OPENSSL_cleanse(text.data(), text.size()); }
  } cleanse{*pem};

  // A fresh name in the same directory, created exclusively with mode 0600.
  base::UniqueFd file;
  std::string temporary;
  for (int attempt = 0; attempt < 16 && !file.valid(); ++attempt) {
    std::array<unsigned char, 8> random{};
    if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
      return OpenSslFailure("draw random bytes for a temporary file name");
    }
    temporary = "." + name + ".tmp-" + Hex(random.data(), random.size());
    file.Reset(openat(directory.get(), temporary.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!file.valid() && errno != EEXIST) {
      return SystemError("create a temporary key file in " + Quoted(directory_path), errno);
    }
  }
  if (!file.valid()) {
    return Failure(ErrorCode::kInternal,
                   "Could not find a free temporary file name in " + Quoted(directory_path) + ".");
  }
  ScopedUnlink remove_temporary(directory.get(), temporary);
  // The umask may have removed bits of 0600; the key must be exactly 0600.
  if (fchmod(file.get(), 0600) != 0) return SystemError("chmod the temporary key file", errno);
  PLIMSOLL_RETURN_IF_ERROR(WriteAll(file.get(), *pem, "write the temporary key file"));
  if (fsync(file.get()) != 0) return SystemError("fsync the temporary key file", errno);
  if (close(file.Release()) != 0) return SystemError("close the temporary key file", errno);

  // link() never replaces an existing name, so a key created meanwhile by
  // someone else survives and we report it.
  if (linkat(directory.get(), temporary.c_str(), directory.get(), name.c_str(), 0) != 0) {
    int error = errno;
    if (error == EEXIST) return AlreadyExists(path);
    if (error != EPERM && error != ENOTSUP && error != EOPNOTSUPP && error != EMLINK) {
      return SystemError("link the new key to " + Quoted(path), error);
    }
    // A file system without hard links: an atomic rename that refuses to
    // replace.
    if (renameat2(directory.get(), temporary.c_str(), directory.get(), name.c_str(),
                  RENAME_NOREPLACE) != 0) {
      error = errno;
      if (error == EEXIST) return AlreadyExists(path);
      return SystemError("rename the new key to " + Quoted(path), error);
    }
  } else {
    // Best effort: the key is in place under its name either way.
    unlinkat(directory.get(), temporary.c_str(), 0);
  }
  remove_temporary.Disarm();
  if (fsync(directory.get()) != 0) {
    return SystemError("fsync the key's directory " + Quoted(directory_path), errno);
  }
  return std::move(*key);
}

Expected<SigningKey> LoadPrivateKey(const std::filesystem::path& path) {
  auto text = ReadKeyFile(path, /*must_be_private=*/true);
  if (!text.ok()) return text.error();
  auto key = SigningKey::FromPem(*text, "The key file " + Quoted(path));
  OPENSSL_cleanse(text->data(), text->size());
  return key;
}

std::string PublicKeyPem(const SigningKey& key) {
  return key.verifying_key().Pem();
}

Expected<VerifyingKey> LoadPublicKey(const std::filesystem::path& path) {
  auto text = ReadKeyFile(path, /*must_be_private=*/false);
  if (!text.ok()) return text.error();
  return VerifyingKey::FromPem(*text, "The public key file " + Quoted(path));
}

}  // namespace plimsoll::attest
