// https:// daemons: the certificate is verified against the URL's host, with
// the given CA file or the system's trust store; a failure sends nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "client/testing/fake_daemon.h"
#include "net/testing/test_certificate.h"
#include "plimsoll/client.h"

namespace plimsoll {
namespace {

using client::testing::FakeDaemon;
using client::testing::HonestRunAnswer;
using client::testing::SeenRequest;
using net::testing::MakeTestCertificate;
using net::testing::TestCertificate;

Request Snippet() {
  Request request;
  request.javascript = JavascriptPayload{"console.log(6*7)"};
  return request;
}

class ClientTlsTest : public ::testing::Test {
 protected:
  std::string WriteCa(const TestCertificate& certificate) {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("plimsoll-client-ca-" + std::to_string(::getpid()) + "-" +
                                  std::to_string(files_.size()) + ".pem");
    std::ofstream(path) << certificate.certificate_pem;
    files_.push_back(path);
    return path.string();
  }
  void TearDown() override {
    for (const auto& path : files_) std::filesystem::remove(path);
  }
  std::vector<std::filesystem::path> files_;
};

client::testing::Script Honest() {
  return [](const SeenRequest& seen) { return HonestRunAnswer(seen); };
}

TEST_F(ClientTlsTest, ATrustedCertificateForTheHostNameWorks) {
  TestCertificate certificate = MakeTestCertificate("DNS:localhost");
  FakeDaemon daemon(Honest(), certificate);
  auto client = Client::Open("https://localhost:" + std::to_string(daemon.port()),
                             {.ca_file = WriteCa(certificate)});
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  Expected<Result> result = client->Run(Snippet());
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->stdout_bytes, "42\n");
  ASSERT_TRUE(client->Run(Snippet()).ok());
  EXPECT_EQ(client->connections_opened(), 1) << "TLS connections are kept alive too";
}

TEST_F(ClientTlsTest, AnIpAddressIsCheckedAgainstTheCertificatesIpNames) {
  TestCertificate certificate = MakeTestCertificate("IP:127.0.0.1");
  FakeDaemon daemon(Honest(), certificate);
  auto client = Client::Open(daemon.url(), {.ca_file = WriteCa(certificate)});
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  Expected<Result> result = client->Run(Snippet());
  EXPECT_TRUE(result.ok()) << result.error().ToString();
}

TEST_F(ClientTlsTest, AHostTheCertificateDoesNotNameIsRefusedBeforeSending) {
  TestCertificate certificate = MakeTestCertificate("DNS:localhost");
  FakeDaemon daemon(Honest(), certificate);
  auto client = Client::Open(daemon.url(), {.ca_file = WriteCa(certificate)});  // 127.0.0.1
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  Expected<Result> result = client->Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kCapacity);
  EXPECT_NE(result.error().message().find("did not verify"), std::string::npos)
      << result.error().message();
  EXPECT_NE(result.error().message().find("mismatch"), std::string::npos)
      << result.error().message();
  EXPECT_TRUE(daemon.requests().empty()) << "not one request reached the daemon";
}

TEST_F(ClientTlsTest, AnUntrustedCertificateIsRefusedBeforeSending) {
  TestCertificate certificate = MakeTestCertificate("DNS:localhost,IP:127.0.0.1");
  TestCertificate stranger = MakeTestCertificate("DNS:localhost,IP:127.0.0.1");
  FakeDaemon daemon(Honest(), certificate);
  // Trusting another CA, and trusting only the system's store: both refuse.
  for (const std::string& ca_file : {WriteCa(stranger), std::string()}) {
    auto client = Client::Open(daemon.url(), {.ca_file = ca_file});
    ASSERT_TRUE(client.ok()) << client.error().ToString();
    Expected<Result> result = client->Run(Snippet());
    ASSERT_FALSE(result.ok()) << "CA file: " << ca_file;
    EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kCapacity);
    EXPECT_NE(result.error().message().find("did not verify"), std::string::npos)
        << result.error().message();
  }
  EXPECT_TRUE(daemon.requests().empty());
}

TEST_F(ClientTlsTest, ACleartextClientCannotTalkToATlsDaemonAndViceVersa) {
  TestCertificate certificate = MakeTestCertificate("IP:127.0.0.1");
  FakeDaemon tls_daemon(Honest(), certificate);
  auto cleartext = Client::Open("http://127.0.0.1:" + std::to_string(tls_daemon.port()));
  ASSERT_TRUE(cleartext.ok());
  Expected<Result> result = cleartext->Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_FALSE(NotDispatchedReason(result.error())) << "the request left in cleartext";

  FakeDaemon plain_daemon(Honest());
  auto tls = Client::Open("https://127.0.0.1:" + std::to_string(plain_daemon.port()),
                          {.ca_file = WriteCa(certificate)});
  ASSERT_TRUE(tls.ok());
  result = tls->Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kCapacity);
  EXPECT_TRUE(plain_daemon.requests().empty());
}

TEST_F(ClientTlsTest, AnUnreadableCaFileIsRefusedAtOpen) {
  auto missing = Client::Open("https://localhost:1", {.ca_file = "/nonexistent/ca.pem"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(NotDispatchedReason(missing.error()), NotDispatched::kRequest);
  EXPECT_NE(missing.error().message().find("Cannot read the CA file"), std::string::npos);

  std::filesystem::path junk = std::filesystem::temp_directory_path() /
                               ("plimsoll-client-junk-" + std::to_string(::getpid()) + ".pem");
  std::ofstream(junk) << "not a certificate\n";
  files_.push_back(junk);
  auto garbage = Client::Open("https://localhost:1", {.ca_file = junk.string()});
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.error().message().find("no usable PEM certificate"), std::string::npos)
      << garbage.error().message();
}

}  // namespace
}  // namespace plimsoll
