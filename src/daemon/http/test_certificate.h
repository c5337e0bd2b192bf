// Throwaway self-signed certificates for tests, made with the OpenSSL API at
// test time (no fixtures on disk, no `openssl` binary needed).
//
// Each TestCertificate is a fresh P-256 key and a certificate for
// 127.0.0.1, ::1 and localhost, written as PEM files into a temporary
// directory that the destructor removes. Test code only: failures throw.
//
// Usage:
//   TestCertificate server;                          // valid for an hour
//   settings.tls_cert = server.certificate_path();
//   settings.tls_key = server.key_path();
//   client_context.load_verify_file(server.certificate_path());
#ifndef PLIMSOLL_DAEMON_HTTP_TEST_CERTIFICATE_H_
#define PLIMSOLL_DAEMON_HTTP_TEST_CERTIFICATE_H_

#include <openssl/types.h>

#include <filesystem>
#include <string>

namespace plimsoll::daemon::http::testing {

class TestCertificate {
 public:
  struct Options {
    long valid_from_seconds = -60;    // notBefore relative to now
    long valid_until_seconds = 3600;  // notAfter relative to now
  };

  TestCertificate() : TestCertificate(Options{}) {}
  explicit TestCertificate(Options options);
  ~TestCertificate();
  TestCertificate(const TestCertificate&) = delete;
  TestCertificate& operator=(const TestCertificate&) = delete;

  std::string certificate_path() const { return (directory_ / "cert.pem").string(); }
  std::string key_path() const { return (directory_ / "key.pem").string(); }
  // The same key encrypted with `passphrase` (AES-256-CBC); returns its path.
  std::string WriteEncryptedKey(const std::string& passphrase) const;
  // A file with `text` in this certificate's directory; returns its path.
  std::string WriteFile(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path directory_;
  EVP_PKEY* key_ = nullptr;  // owned; kept for WriteEncryptedKey
};

}  // namespace plimsoll::daemon::http::testing

#endif  // PLIMSOLL_DAEMON_HTTP_TEST_CERTIFICATE_H_
