#include "daemon/http/tls.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

namespace plimsoll::daemon::http {
namespace {

// TLS 1.2 only (TLS 1.3 suites are all AEAD with forward secrecy and keep
// OpenSSL's defaults): ECDHE with AES-GCM or ChaCha20-Poly1305.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// A certificate chain or key is a few KiB; anything this large is a mistake.
constexpr off_t kMaxPemBytes = off_t{1} << 20;

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* certificate) const { X509_free(certificate); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using UniqueBio = std::unique_ptr<BIO, BioFree>;
using UniqueX509 = std::unique_ptr<X509, X509Free>;
using UniquePkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Error Invalid(std::string message) {
  return Failure(ErrorCode::kInvalidArgument, std::move(message));
}

// OpenSSL's error queue as one line (and emptied), for the end of a sentence.
std::string TakeOpenSslErrors() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    if (!text.empty()) text += "; ";
    text += buffer;
  }
  return text.empty() ? std::string("no detail from OpenSSL") : text;
}

struct PemFile {
  std::string bytes;
  mode_t mode = 0;
};

// Reads a whole PEM file once, so what is checked is what is loaded.
Expected<PemFile> ReadPemFile(const std::string& path, std::string_view what) {
  std::string name = "The TLS " + std::string(what) + " " + path;
  if (path.empty()) return Invalid("The TLS " + std::string(what) + " path is empty.");
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return Invalid(name + " cannot be read: " + std::strerror(errno) + ".");
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    return Invalid(name + " cannot be read: " + std::strerror(errno) + ".");
  }
  if (!S_ISREG(info.st_mode)) return Invalid(name + " is not a regular file.");
  if (info.st_size > kMaxPemBytes) {
    return Invalid(name + " is larger than 1 MiB, which no PEM " + std::string(what) + " is.");
  }
  PemFile file;
  file.mode = info.st_mode;
  file.bytes.resize(static_cast<size_t>(info.st_size));
  size_t done = 0;
  while (done < file.bytes.size()) {
    ssize_t size = ::read(fd.get(), file.bytes.data() + done, file.bytes.size() - done);
    if (size < 0 && errno == EINTR) continue;
    if (size < 0) return Invalid(name + " cannot be read: " + std::strerror(errno) + ".");
    if (size == 0) break;
    done += static_cast<size_t>(size);
  }
  file.bytes.resize(done);
  return file;
}

UniqueBio MemoryBio(const std::string& bytes) {
  return UniqueBio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
}

// Refuses to decrypt: OpenSSL's default would prompt on a terminal.
int NoPassword(char*, int, int, void*) {
  return 0;
}

std::string OneLineName(const X509_NAME* name) {
  char buffer[512];
  X509_NAME_oneline(name, buffer, sizeof buffer);
  return buffer;
}

std::string TimeText(const ASN1_TIME* time) {
  UniqueBio bio(BIO_new(BIO_s_mem()));
  if (!bio || ASN1_TIME_print(bio.get(), time) != 1) return "an unreadable time";
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// Loads the leaf certificate and any intermediates after it into `context`.
Expected<UniqueX509> UseCertificateChain(SSL_CTX* context, const TlsFiles& files,
                                         const std::string& pem) {
  std::string name = "The TLS certificate " + files.certificate;
  UniqueBio bio = MemoryBio(pem);
  UniqueX509 leaf(PEM_read_bio_X509_AUX(bio.get(), nullptr, NoPassword, nullptr));
  if (!leaf) {
    return Invalid(name + " holds no PEM certificate (" + TakeOpenSslErrors() + ").");
  }
  if (SSL_CTX_use_certificate(context, leaf.get()) != 1) {
    return Invalid(name + " cannot be used (" + TakeOpenSslErrors() + ").");
  }
  while (X509* intermediate = PEM_read_bio_X509(bio.get(), nullptr, NoPassword, nullptr)) {
    if (SSL_CTX_add0_chain_cert(context, intermediate) != 1) {
      X509_free(intermediate);
      return Invalid(name + ": an intermediate certificate cannot be used (" + TakeOpenSslErrors() +
                     ").");
    }
  }
  // The loop ends on "no start line" at the end of the file: not an error.
  unsigned long last = ERR_peek_last_error();
  if (ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE) {
    ERR_clear_error();
  } else if (last != 0) {
    return Invalid(name + " has an unreadable certificate after the first (" + TakeOpenSslErrors() +
                   ").");
  }
  return leaf;
}

Status UsePrivateKey(SSL_CTX* context, const TlsFiles& files, const std::string& pem, X509* leaf) {
  std::string name = "The TLS key " + files.key;
  if (pem.find("ENCRYPTED") != std::string::npos) {
    return Invalid(name +
                   " is encrypted; plimsolld cannot ask for a passphrase, so give it an "
                   "unencrypted key readable only by the daemon's user (e.g. openssl pkey -in " +
                   files.key + " -out NEW_KEY).");
  }
  UniqueBio bio = MemoryBio(pem);
  UniquePkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassword, nullptr));
  if (!key) return Invalid(name + " holds no PEM private key (" + TakeOpenSslErrors() + ").");
  if (X509_check_private_key(leaf, key.get()) != 1) {
    ERR_clear_error();
    return Invalid(name + " does not match the certificate " + files.certificate +
                   " (it is the key of another certificate).");
  }
  if (SSL_CTX_use_PrivateKey(context, key.get()) != 1 || SSL_CTX_check_private_key(context) != 1) {
    return Invalid(name + " cannot be used with the certificate " + files.certificate + " (" +
                   TakeOpenSslErrors() + ").");
  }
  return Status::Ok();
}

Status ApplyPolicy(SSL_CTX* context) {
  if (SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_cipher_list(context, kTls12Ciphers) != 1) {
    return Failure(ErrorCode::kInternal,
                   "This OpenSSL refuses plimsolld's TLS policy (" + TakeOpenSslErrors() + ").");
  }
  SSL_CTX_set_options(context, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                   SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_TICKET);
  SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(context, 0);
  SSL_CTX_set_default_passwd_cb(context, NoPassword);
  return Status::Ok();
}

std::vector<std::string> Warnings(const TlsFiles& files, const PemFile& key, X509* leaf) {
  std::vector<std::string> warnings;
  if ((key.mode & (S_IRWXO | S_IWGRP)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(key.mode & 07777));
    warnings.push_back("The TLS key " + files.key + " has mode " + mode +
                       ": other users may read or replace it; chmod 600 it.");
  }
  if (X509_cmp_current_time(X509_get0_notAfter(leaf)) <= 0) {
    warnings.push_back("The TLS certificate " + files.certificate + " expired on " +
                       TimeText(X509_get0_notAfter(leaf)) +
                       "; clients that verify it will refuse "
                       "to connect.");
  } else if (X509_cmp_current_time(X509_get0_notBefore(leaf)) > 0) {
    warnings.push_back("The TLS certificate " + files.certificate + " is not valid before " +
                       TimeText(X509_get0_notBefore(leaf)) +
                       "; clients that verify it will "
                       "refuse to connect until then.");
  }
  return warnings;
}

}  // namespace

Expected<TlsServerContext> LoadTlsServerContext(const TlsFiles& files) {
  auto certificate_pem = ReadPemFile(files.certificate, "certificate");
  if (!certificate_pem.ok()) return certificate_pem.error();
  auto key_pem = ReadPemFile(files.key, "key");
  if (!key_pem.ok()) return key_pem.error();

  ERR_clear_error();
  TlsServerContext loaded;
  try {
    loaded.context =
        std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_server);
  } catch (const std::exception& exception) {
    return Failure(ErrorCode::kInternal,
                   std::string("Cannot create a TLS context: ") + exception.what() + ".");
  }
  SSL_CTX* context = loaded.context->native_handle();
  PLIMSOLL_RETURN_IF_ERROR(ApplyPolicy(context));
  auto leaf = UseCertificateChain(context, files, certificate_pem->bytes);
  if (!leaf.ok()) return leaf.error();
  PLIMSOLL_RETURN_IF_ERROR(UsePrivateKey(context, files, key_pem->bytes, leaf->get()));

  loaded.summary = "certificate " + OneLineName(X509_get_subject_name(leaf->get())) +
                   ", valid until " + TimeText(X509_get0_notAfter(leaf->get()));
  loaded.warnings = Warnings(files, *key_pem, leaf->get());
  return loaded;
}

}  // namespace plimsoll::daemon::http
