#include "daemon/http/test_certificate.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace plimsoll::daemon::http::testing {
namespace {

void Check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("TestCertificate: ") + what + " failed");
}

struct FileClose {
  void operator()(FILE* file) const { std::fclose(file); }
};

std::unique_ptr<FILE, FileClose> OpenForWriting(const std::string& path) {
  std::unique_ptr<FILE, FileClose> file(std::fopen(path.c_str(), "w"));
  Check(file != nullptr, "fopen");
  return file;
}

void AddExtension(X509* certificate, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, certificate, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  Check(extension != nullptr, "X509V3_EXT_conf_nid");
  Check(X509_add_ext(certificate, extension, -1) == 1, "X509_add_ext");
  X509_EXTENSION_free(extension);
}

}  // namespace

TestCertificate::TestCertificate(Options options) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "plimsoll-tls-test-XXXXXX").string();
  Check(mkdtemp(pattern.data()) != nullptr, "mkdtemp");
  directory_ = pattern;

  key_ = EVP_EC_gen("P-256");
  Check(key_ != nullptr, "EVP_EC_gen");
  std::unique_ptr<X509, decltype(&X509_free)> certificate(X509_new(), X509_free);
  Check(certificate != nullptr, "X509_new");
  Check(X509_set_version(certificate.get(), 2) == 1, "X509_set_version");
  static long serial = 1;
  ASN1_INTEGER_set(X509_get_serialNumber(certificate.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(certificate.get()), options.valid_from_seconds);
  X509_gmtime_adj(X509_getm_notAfter(certificate.get()), options.valid_until_seconds);
  Check(X509_set_pubkey(certificate.get(), key_) == 1, "X509_set_pubkey");
  X509_NAME* name = X509_get_subject_name(certificate.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("plimsoll test"), -1, -1, 0);
  Check(X509_set_issuer_name(certificate.get(), name) == 1, "X509_set_issuer_name");
  AddExtension(certificate.get(), NID_subject_alt_name, "IP:127.0.0.1,IP:::1,DNS:localhost");
  AddExtension(certificate.get(), NID_basic_constraints, "critical,CA:TRUE");
  AddExtension(certificate.get(), NID_key_usage, "critical,digitalSignature,keyCertSign");
  AddExtension(certificate.get(), NID_ext_key_usage, "serverAuth");
  Check(X509_sign(certificate.get(), key_, EVP_sha256()) > 0, "X509_sign");

  auto certificate_file = OpenForWriting(certificate_path());
  Check(PEM_write_X509(certificate_file.get(), certificate.get()) == 1, "PEM_write_X509");
  auto key_file = OpenForWriting(key_path());
  Check(PEM_write_PrivateKey(key_file.get(), key_, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "PEM_write_PrivateKey");
  std::filesystem::permissions(
      key_path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TestCertificate::~TestCertificate() {
  EVP_PKEY_free(key_);
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

std::string TestCertificate::WriteEncryptedKey(const std::string& passphrase) const {
  std::string path = (directory_ / "encrypted-key.pem").string();
  auto file = OpenForWriting(path);
  Check(PEM_write_PKCS8PrivateKey(file.get(), key_, EVP_aes_256_cbc(), passphrase.data(),
                                  static_cast<int>(passphrase.size()), nullptr, nullptr) == 1,
        "PEM_write_PKCS8PrivateKey");
  return path;
}

std::string TestCertificate::WriteFile(const std::string& name, const std::string& text) const {
  std::string path = (directory_ / name).string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace plimsoll::daemon::http::testing
