// The TLS client setup the broker and the C++ client share, against a real
// TLS server on loopback with certificates made at test time: what it trusts
// (the given CA, else the system's store), the identity it checks (DNS name,
// IP address, no partial wildcards), SNI, and its setup failures. Also
// RunToCompletion, which drives every handshake here.
#include "net/tls_client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/run_to_completion.h"
#include "net/testing/test_certificate.h"

namespace plimsoll::net {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using boost::system::error_code;
using tcp = asio::ip::tcp;
using testing::MakeTestCertificate;
using testing::TestCertificate;

// A TLS server on 127.0.0.1, port 0, that handshakes with each connection
// and notes the SNI name it was sent; stopped and joined on destruction.
class LoopbackTlsServer {
 public:
  explicit LoopbackTlsServer(const TestCertificate& certificate)
      : context_(ssl::context::tls_server), acceptor_(io_) {
    context_.use_certificate_chain(asio::buffer(certificate.certificate_pem));
    context_.use_private_key(asio::buffer(certificate.private_key_pem), ssl::context::pem);
    tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(endpoint.protocol());
    acceptor_.bind(endpoint);
    acceptor_.listen();
    Accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~LoopbackTlsServer() {
    io_.stop();
    thread_.join();
  }
  LoopbackTlsServer(const LoopbackTlsServer&) = delete;
  LoopbackTlsServer& operator=(const LoopbackTlsServer&) = delete;

  tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }

  // The SNI names of the handshakes the server completed ("" for one without
  // SNI), once there are `count` of them or after 10 s. (The client may
  // finish its handshake before the server has read its Finished message.)
  std::vector<std::string> ServerNames(size_t count) const {
    std::unique_lock lock(mutex_);
    completed_.wait_for(lock, std::chrono::seconds(10),
                        [&] { return server_names_.size() >= count; });
    return server_names_;
  }

 private:
  void Accept() {
    acceptor_.async_accept([this](error_code error, tcp::socket socket) {
      if (error) return;
      auto stream = std::make_shared<ssl::stream<tcp::socket>>(std::move(socket), context_);
      stream->async_handshake(ssl::stream_base::server, [this, stream](error_code handshake) {
        if (handshake) return;
        const char* name = SSL_get_servername(stream->native_handle(), TLSEXT_NAMETYPE_host_name);
        std::lock_guard lock(mutex_);
        server_names_.push_back(name == nullptr ? "" : name);
        completed_.notify_all();
      });
      Accept();
    });
  }

  asio::io_context io_;
  ssl::context context_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  mutable std::mutex mutex_;
  mutable std::condition_variable completed_;
  std::vector<std::string> server_names_;
};

// PEM files in a directory of their own, removed with it.
class TemporaryFiles {
 public:
  TemporaryFiles()
      : directory_(std::filesystem::temp_directory_path() /
                   ("plimsoll-tls-client-test-" + std::to_string(::getpid()) + "-" +
                    std::to_string(next_++))) {
    std::filesystem::create_directories(directory_);
  }
  ~TemporaryFiles() { std::filesystem::remove_all(directory_); }
  TemporaryFiles(const TemporaryFiles&) = delete;
  TemporaryFiles& operator=(const TemporaryFiles&) = delete;

  std::string Write(const std::string& name, const std::string& text) {
    std::filesystem::path path = directory_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

 private:
  static inline int next_ = 0;
  std::filesystem::path directory_;
};

struct Handshake {
  error_code error;
  std::string failure;  // DescribeTlsHandshakeFailure when `error` is set
};

// Connects to `server` (always 127.0.0.1) and handshakes as a client that
// expects the certificate to name `host`.
Handshake HandshakeWith(const LoopbackTlsServer& server, ssl::context& context,
                        const std::string& host) {
  asio::io_context io;
  ssl::stream<tcp::socket> stream(io, context);
  Status prepared = PrepareTlsClientConnection(stream.native_handle(), host);
  EXPECT_TRUE(prepared.ok()) << prepared.error().ToString();
  Handshake result;
  result.error = RunToCompletion(
      io, [&](auto handler) { stream.lowest_layer().async_connect(server.endpoint(), handler); });
  if (result.error) {
    ADD_FAILURE() << "cannot connect: " << result.error.message();
    return result;
  }
  result.error = RunToCompletion(
      io, [&](auto handler) { stream.async_handshake(ssl::stream_base::client, handler); });
  if (result.error) {
    result.failure = DescribeTlsHandshakeFailure(stream.native_handle(), result.error);
  }
  return result;
}

std::unique_ptr<ssl::context> ContextTrusting(const std::string& ca_file) {
  auto context = MakeTlsClientContext(ca_file);
  EXPECT_TRUE(context.ok()) << context.error().ToString();
  return context.ok() ? std::move(*context) : nullptr;
}

// A server with a certificate for `subject_alt_names`, and a client context
// that trusts that certificate as its CA file.
struct ServerAndItsCa {
  explicit ServerAndItsCa(const std::string& subject_alt_names)
      : certificate(MakeTestCertificate(subject_alt_names)),
        server(certificate),
        context(ContextTrusting(files.Write("ca.pem", certificate.certificate_pem))) {}

  TestCertificate certificate;
  LoopbackTlsServer server;
  TemporaryFiles files;
  std::unique_ptr<ssl::context> context;
};

TEST(TlsClientTest, TheContextAsksForTls12OrLaterAndVerifiesThePeer) {
  TemporaryFiles files;
  const std::string ca =
      files.Write("ca.pem", MakeTestCertificate("DNS:localhost").certificate_pem);
  for (const std::string& ca_file : {std::string(), ca}) {
    auto context = ContextTrusting(ca_file);
    ASSERT_NE(context, nullptr);
    EXPECT_EQ(SSL_CTX_get_min_proto_version(context->native_handle()), TLS1_2_VERSION) << ca_file;
    EXPECT_EQ(SSL_CTX_get_verify_mode(context->native_handle()), SSL_VERIFY_PEER) << ca_file;
  }
}

TEST(TlsClientTest, TheSystemsTrustStoreRefusesASelfSignedCertificate) {
  LoopbackTlsServer server(MakeTestCertificate("DNS:localhost,IP:127.0.0.1"));
  auto context = ContextTrusting("");
  ASSERT_NE(context, nullptr);
  Handshake handshake = HandshakeWith(server, *context, "localhost");
  ASSERT_TRUE(handshake.error);
  EXPECT_NE(handshake.failure.find("the TLS certificate did not verify ("), std::string::npos)
      << handshake.failure;
}

TEST(TlsClientTest, AGivenCaIsTrustedForTheNameAndTheAddressItsCertificateCarries) {
  ServerAndItsCa setup("DNS:localhost,IP:127.0.0.1");
  ASSERT_NE(setup.context, nullptr);
  for (const std::string host : {"localhost", "127.0.0.1"}) {
    Handshake handshake = HandshakeWith(setup.server, *setup.context, host);
    EXPECT_FALSE(handshake.error) << host << ": " << handshake.failure;
  }
  // SNI carries names only (RFC 6066): none for the IP literal.
  EXPECT_EQ(setup.server.ServerNames(2), (std::vector<std::string>{"localhost", ""}));
}

TEST(TlsClientTest, ACertificateFromAnotherCaIsRefused) {
  LoopbackTlsServer server(MakeTestCertificate("DNS:localhost,IP:127.0.0.1"));
  TemporaryFiles files;
  auto context = ContextTrusting(files.Write(
      "stranger.pem", MakeTestCertificate("DNS:localhost,IP:127.0.0.1").certificate_pem));
  ASSERT_NE(context, nullptr);
  Handshake handshake = HandshakeWith(server, *context, "localhost");
  ASSERT_TRUE(handshake.error);
  EXPECT_NE(handshake.failure.find("did not verify"), std::string::npos) << handshake.failure;
  EXPECT_TRUE(server.ServerNames(0).empty()) << "no handshake completed";
}

TEST(TlsClientTest, ANameOrAddressTheCertificateDoesNotCarryIsRefused) {
  ServerAndItsCa setup("DNS:localhost,IP:127.0.0.1");
  ASSERT_NE(setup.context, nullptr);
  // The connection goes to 127.0.0.1 each time; only the expected identity changes.
  for (const std::string host : {"example.com", "127.0.0.2", "::1"}) {
    Handshake handshake = HandshakeWith(setup.server, *setup.context, host);
    ASSERT_TRUE(handshake.error) << host;
    EXPECT_NE(handshake.failure.find("did not verify"), std::string::npos) << handshake.failure;
    EXPECT_NE(handshake.failure.find("mismatch"), std::string::npos) << handshake.failure;
  }
}

TEST(TlsClientTest, PartialWildcardsAreRefusedAndWholeLabelWildcardsAccepted) {
  struct Case {
    std::string names;
    bool accepted;
  };
  for (const Case& c : {Case{"DNS:a*.example.test", false}, Case{"DNS:*.example.test", true}}) {
    ServerAndItsCa setup(c.names);
    ASSERT_NE(setup.context, nullptr);
    Handshake handshake = HandshakeWith(setup.server, *setup.context, "abc.example.test");
    EXPECT_EQ(!handshake.error, c.accepted) << c.names << ": " << handshake.failure;
  }
}

TEST(TlsClientTest, AServerThatIsNotTlsFailsTheHandshakeWithoutAVerifyReason) {
  asio::io_context io;
  tcp::acceptor plain(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::thread closer([&] {
    tcp::socket socket = plain.accept();
    asio::write(socket, asio::buffer(std::string("HTTP/1.1 400 Bad Request\r\n\r\n")));
  });
  auto context = ContextTrusting("");
  ASSERT_NE(context, nullptr);
  asio::io_context client_io;
  ssl::stream<tcp::socket> stream(client_io, *context);
  ASSERT_TRUE(PrepareTlsClientConnection(stream.native_handle(), "localhost").ok());
  error_code error = RunToCompletion(client_io, [&](auto handler) {
    stream.lowest_layer().async_connect(plain.local_endpoint(), handler);
  });
  ASSERT_FALSE(error) << error.message();
  error = RunToCompletion(
      client_io, [&](auto handler) { stream.async_handshake(ssl::stream_base::client, handler); });
  closer.join();
  ASSERT_TRUE(error);
  const std::string failure = DescribeTlsHandshakeFailure(stream.native_handle(), error);
  EXPECT_EQ(failure.rfind("the TLS handshake failed (", 0), 0u) << failure;
}

TEST(TlsClientTest, AnUnusableCaFileIsASentenceNotAContext) {
  auto missing = MakeTlsClientContext("/nonexistent/ca.pem");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(missing.error().message(), "Cannot read the CA file /nonexistent/ca.pem.");

  TemporaryFiles files;
  auto junk = MakeTlsClientContext(files.Write("junk.pem", "not a certificate\n"));
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(junk.error().message().find("holds no usable PEM certificate"), std::string::npos)
      << junk.error().message();
  EXPECT_EQ(junk.error().message().back(), '.');
}

TEST(TlsClientTest, AHostOpenSslCannotCheckIsRefusedBeforeAnyHandshake) {
  auto context = ContextTrusting("");
  ASSERT_NE(context, nullptr);
  asio::io_context io;
  ssl::stream<tcp::socket> stream(io, *context);
  // Longer than SNI allows (255 bytes): OpenSSL refuses to send it.
  Status prepared = PrepareTlsClientConnection(stream.native_handle(), std::string(300, 'a'));
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(prepared.error().message().find("OpenSSL refused to check the certificate against"),
            std::string::npos);
}

TEST(RunToCompletionTest, ReturnsTheOperationsOwnError) {
  asio::io_context io;
  asio::steady_timer timer(io, std::chrono::milliseconds(1));
  EXPECT_FALSE(RunToCompletion(io, [&](auto handler) { timer.async_wait(handler); }));

  // A port nobody listens on: the connect's own error comes back, and the
  // io_context is reusable for the next operation.
  tcp::endpoint closed;
  {
    tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    closed = probe.local_endpoint();
  }
  tcp::socket socket(io);
  EXPECT_EQ(RunToCompletion(io, [&](auto handler) { socket.async_connect(closed, handler); }),
            asio::error::connection_refused);
  timer.expires_after(std::chrono::milliseconds(1));
  EXPECT_FALSE(RunToCompletion(io, [&](auto handler) { timer.async_wait(handler); }));
}

TEST(RunToCompletionTest, AnOperationThatNeverCompletesIsAborted) {
  asio::io_context io;
  EXPECT_EQ(RunToCompletion(io, [](auto) {}), asio::error::operation_aborted);
}

}  // namespace
}  // namespace plimsoll::net
