#include "daemon/http/tls.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "daemon/http/test_certificate.h"

namespace plimsoll::daemon::http {
namespace {

using testing::TestCertificate;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Tls, AMatchingPairLoadsWithTheFixedPolicy) {
  TestCertificate certificate;
  auto tls = LoadTlsServerContext({certificate.certificate_path(), certificate.key_path()});
  ASSERT_TRUE(tls.ok()) << tls.error().ToString();
  ASSERT_NE(tls->context, nullptr);
  SSL_CTX* context = tls->context->native_handle();
  EXPECT_EQ(SSL_CTX_get_min_proto_version(context), TLS1_2_VERSION);
  EXPECT_EQ(SSL_CTX_get_max_proto_version(context), 0);  // 0: up to TLS 1.3
  uint64_t options = SSL_CTX_get_options(context);
  EXPECT_NE(options & SSL_OP_NO_COMPRESSION, 0u);
  EXPECT_NE(options & SSL_OP_NO_RENEGOTIATION, 0u);
  EXPECT_NE(options & SSL_OP_CIPHER_SERVER_PREFERENCE, 0u);
  EXPECT_NE(options & SSL_OP_NO_TICKET, 0u);
  EXPECT_EQ(SSL_CTX_get_session_cache_mode(context), SSL_SESS_CACHE_OFF);
  EXPECT_TRUE(Contains(tls->summary, "CN=plimsoll test")) << tls->summary;
  EXPECT_TRUE(tls->warnings.empty()) << tls->warnings.front();
}

TEST(Tls, OnlyForwardSecretAeadSuitesForTls12) {
  TestCertificate certificate;
  auto tls = LoadTlsServerContext({certificate.certificate_path(), certificate.key_path()});
  ASSERT_TRUE(tls.ok()) << tls.error().ToString();
  SSL* ssl = SSL_new(tls->context->native_handle());
  ASSERT_NE(ssl, nullptr);
  STACK_OF(SSL_CIPHER)* ciphers = SSL_get_ciphers(ssl);
  for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
    const SSL_CIPHER* cipher = sk_SSL_CIPHER_value(ciphers, i);
    std::string name = SSL_CIPHER_get_name(cipher);
    if (std::string(SSL_CIPHER_get_version(cipher)) == "TLSv1.3") continue;
    EXPECT_TRUE(name.starts_with("ECDHE-")) << name;
    EXPECT_TRUE(Contains(name, "GCM") || Contains(name, "CHACHA20")) << name;
  }
  SSL_free(ssl);
}

TEST(Tls, AMissingCertificateNamesTheFile) {
  TestCertificate certificate;
  auto tls = LoadTlsServerContext({"/nonexistent/plimsoll/cert.pem", certificate.key_path()});
  ASSERT_FALSE(tls.ok());
  EXPECT_EQ(tls.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Contains(tls.error().message(),
                       "The TLS certificate /nonexistent/plimsoll/cert.pem cannot be read: No "
                       "such file or directory."))
      << tls.error().message();
}

TEST(Tls, AMissingKeyNamesTheFile) {
  TestCertificate certificate;
  auto tls = LoadTlsServerContext({certificate.certificate_path(), "/nonexistent/key.pem"});
  ASSERT_FALSE(tls.ok());
  EXPECT_TRUE(Contains(tls.error().message(), "The TLS key /nonexistent/key.pem cannot be read"))
      << tls.error().message();
}

TEST(Tls, ADirectoryIsNotACertificate) {
  TestCertificate certificate;
  auto tls = LoadTlsServerContext({"/tmp", certificate.key_path()});
  ASSERT_FALSE(tls.ok());
  EXPECT_TRUE(Contains(tls.error().message(), "is not a regular file")) << tls.error().message();
}

TEST(Tls, GarbageIsNeitherACertificateNorAKey) {
  TestCertificate certificate;
  std::string garbage = certificate.WriteFile("garbage.pem", "not a certificate\n");
  auto bad_certificate = LoadTlsServerContext({garbage, certificate.key_path()});
  ASSERT_FALSE(bad_certificate.ok());
  EXPECT_TRUE(Contains(bad_certificate.error().message(), "holds no PEM certificate"))
      << bad_certificate.error().message();
  auto bad_key = LoadTlsServerContext({certificate.certificate_path(), garbage});
  ASSERT_FALSE(bad_key.ok());
  EXPECT_TRUE(Contains(bad_key.error().message(), "holds no PEM private key"))
      << bad_key.error().message();
  // A certificate where the key should be is no key either.
  auto swapped =
      LoadTlsServerContext({certificate.certificate_path(), certificate.certificate_path()});
  ASSERT_FALSE(swapped.ok());
  EXPECT_TRUE(Contains(swapped.error().message(), "holds no PEM private key"));
}

TEST(Tls, TheKeyOfAnotherCertificateIsAMismatch) {
  TestCertificate mine;
  TestCertificate other;
  auto tls = LoadTlsServerContext({mine.certificate_path(), other.key_path()});
  ASSERT_FALSE(tls.ok());
  EXPECT_EQ(tls.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Contains(tls.error().message(), "The TLS key " + other.key_path() +
                                                  " does not match the certificate " +
                                                  mine.certificate_path()))
      << tls.error().message();
}

TEST(Tls, AnEncryptedKeyIsRefusedNotPromptedFor) {
  TestCertificate certificate;
  std::string encrypted = certificate.WriteEncryptedKey("correct horse");
  auto tls = LoadTlsServerContext({certificate.certificate_path(), encrypted});
  ASSERT_FALSE(tls.ok());
  EXPECT_TRUE(Contains(tls.error().message(), "is encrypted")) << tls.error().message();
}

TEST(Tls, AKeyOthersCanReadIsAWarning) {
  TestCertificate certificate;
  ASSERT_EQ(::chmod(certificate.key_path().c_str(), 0644), 0);
  auto tls = LoadTlsServerContext({certificate.certificate_path(), certificate.key_path()});
  ASSERT_TRUE(tls.ok()) << tls.error().ToString();
  ASSERT_EQ(tls->warnings.size(), 1u);
  EXPECT_TRUE(Contains(tls->warnings[0], "has mode 0644")) << tls->warnings[0];
}

TEST(Tls, AnExpiredCertificateIsAWarning) {
  TestCertificate expired({.valid_from_seconds = -7200, .valid_until_seconds = -3600});
  auto tls = LoadTlsServerContext({expired.certificate_path(), expired.key_path()});
  ASSERT_TRUE(tls.ok()) << tls.error().ToString();
  ASSERT_EQ(tls->warnings.size(), 1u);
  EXPECT_TRUE(Contains(tls->warnings[0], "expired on")) << tls->warnings[0];
  TestCertificate future({.valid_from_seconds = 3600, .valid_until_seconds = 7200});
  auto early = LoadTlsServerContext({future.certificate_path(), future.key_path()});
  ASSERT_TRUE(early.ok());
  ASSERT_EQ(early->warnings.size(), 1u);
  EXPECT_TRUE(Contains(early->warnings[0], "is not valid before")) << early->warnings[0];
}

TEST(Tls, IntermediatesAfterTheLeafAreAccepted) {
  TestCertificate leaf;
  TestCertificate intermediate;
  std::ifstream first(leaf.certificate_path()), second(intermediate.certificate_path());
  std::stringstream chain;
  chain << first.rdbuf() << second.rdbuf();
  std::string path = leaf.WriteFile("chain.pem", chain.str());
  auto tls = LoadTlsServerContext({path, leaf.key_path()});
  ASSERT_TRUE(tls.ok()) << tls.error().ToString();
  STACK_OF(X509)* extra = nullptr;
  ASSERT_EQ(SSL_CTX_get0_chain_certs(tls->context->native_handle(), &extra), 1);
  ASSERT_NE(extra, nullptr);
  EXPECT_EQ(sk_X509_num(extra), 1);
}

}  // namespace
}  // namespace plimsoll::daemon::http
