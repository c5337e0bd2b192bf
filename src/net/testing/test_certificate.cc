#include "net/testing/test_certificate.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <stdexcept>

namespace plimsoll::net::testing {
namespace {

struct FreeKey {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct FreeCertificate {
  void operator()(X509* certificate) const { X509_free(certificate); }
};
struct FreeBio {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct FreeExtension {
  void operator()(X509_EXTENSION* extension) const { X509_EXTENSION_free(extension); }
};

void Check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("making a test certificate: ") + what);
}

std::string Drain(BIO* bio) {
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(size));
}

void AddExtension(X509* certificate, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, certificate, certificate, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, FreeExtension> extension(
      X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str()));
  Check(extension != nullptr, "extension");
  Check(X509_add_ext(certificate, extension.get(), -1) == 1, "add extension");
}

}  // namespace

TestCertificate MakeTestCertificate(const std::string& subject_alt_names) {
  std::unique_ptr<EVP_PKEY, FreeKey> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  Check(key != nullptr, "key");
  std::unique_ptr<X509, FreeCertificate> certificate(X509_new());
  Check(certificate != nullptr, "certificate");
  X509* x509 = certificate.get();
  Check(X509_set_version(x509, 2) == 1, "version");
  Check(ASN1_INTEGER_set(X509_get_serialNumber(x509), 1) == 1, "serial");
  Check(X509_gmtime_adj(X509_getm_notBefore(x509), -60) != nullptr, "not before");
  Check(X509_gmtime_adj(X509_getm_notAfter(x509), 24 * 3600) != nullptr, "not after");
  X509_NAME* name = X509_get_subject_name(x509);
  Check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char*>("plimsoll test"), -1, -1,
                                   0) == 1,
        "name");
  Check(X509_set_issuer_name(x509, name) == 1, "issuer");
  Check(X509_set_pubkey(x509, key.get()) == 1, "public key");
  AddExtension(x509, NID_basic_constraints, "critical,CA:TRUE");
  AddExtension(x509, NID_subject_alt_name, subject_alt_names);
  Check(X509_sign(x509, key.get(), EVP_sha256()) > 0, "sign");

  TestCertificate out;
  std::unique_ptr<BIO, FreeBio> certificate_bio(BIO_new(BIO_s_mem()));
  Check(PEM_write_bio_X509(certificate_bio.get(), x509) == 1, "write certificate");
  out.certificate_pem = Drain(certificate_bio.get());
  std::unique_ptr<BIO, FreeBio> key_bio(BIO_new(BIO_s_mem()));
  Check(PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) ==
            1,
        "write key");
  out.private_key_pem = Drain(key_bio.get());
  return out;
}

}  // namespace plimsoll::net::testing
