// TLS on plimsolld's listeners (docs/daemon.md "TLS"): real HTTPS on port 0
// with a throwaway certificate made at test time, a Beast client that
// verifies it, the timeouts that bound the handshake, plaintext sent to the
// TLS port, and unusable certificate files at startup.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "daemon/http/test_certificate.h"
#include "daemon/server/daemon_main.h"
#include "daemon_fixture.h"

namespace plimsoll::daemon::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace beast_http = boost::beast::http;
using asio::ip::tcp;
using http::testing::TestCertificate;
using nlohmann::json;
using std::chrono::milliseconds;

// A blocking HTTPS client whose every operation gives up after 10 s, so a
// server that hangs fails the test instead of hanging it.
class TlsClient {
 public:
  // Trusts only `trusted_certificate` and checks that it names 127.0.0.1.
  TlsClient(uint16_t port, const std::string& trusted_certificate,
            std::function<void(SSL_CTX*)> tune_context = {})
      : port_(port) {
    context_.load_verify_file(trusted_certificate);
    context_.set_verify_mode(asio::ssl::verify_peer);
    if (tune_context) tune_context(context_.native_handle());
    stream_.emplace(io_context_, context_);
    stream_->set_verify_callback(asio::ssl::host_name_verification("127.0.0.1"));
  }

  // Connects and handshakes; the error, or success.
  boost::system::error_code Connect() {
    boost::system::error_code error;
    stream_->next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), error);
    if (error) return error;
    return Run([&](auto done) {
      stream_->async_handshake(asio::ssl::stream_base::client, std::move(done));
    });
  }

  std::string protocol() { return SSL_get_version(stream_->native_handle()); }

  HttpReply Send(const HttpCall& call) {
    std::string id;
    auto request = RequestFor(call, &id);
    auto written =
        Run([&](auto done) { beast_http::async_write(*stream_, request, std::move(done)); });
    if (written) throw std::runtime_error("writing over TLS failed: " + written.message());
    std::optional<HttpReply> reply = ReadReply();
    if (!reply) throw std::runtime_error("the server closed the TLS connection without answering");
    reply->sent_request_id = id;
    return *reply;
  }

  // Writes `bytes` over TLS and reads one answer (none if the server closes).
  std::optional<HttpReply> SendRaw(const std::string& bytes) {
    auto written =
        Run([&](auto done) { asio::async_write(*stream_, asio::buffer(bytes), std::move(done)); });
    if (written) throw std::runtime_error("writing over TLS failed: " + written.message());
    return ReadReply();
  }

  // Reads once more after the server's last answer: asio reports a TLS
  // close_notify as eof, a TCP close without one as stream_truncated.
  boost::system::error_code ReadToEnd() {
    char byte;
    return Run(
        [&](auto done) { stream_->async_read_some(asio::buffer(&byte, 1), std::move(done)); });
  }

 private:
  // Runs one asynchronous operation to completion, or cancels it at 10 s.
  template <class Start>
  boost::system::error_code Run(Start start) {
    boost::system::error_code result;
    bool finished = false;
    start([&](boost::system::error_code error, auto&&...) {
      result = error;
      finished = true;
    });
    io_context_.restart();
    io_context_.run_for(std::chrono::seconds(10));
    if (!finished) {
      boost::system::error_code ignored;
      stream_->next_layer().cancel(ignored);
      io_context_.restart();
      io_context_.run();
      return asio::error::timed_out;
    }
    return result;
  }

  std::optional<HttpReply> ReadReply() {
    beast_http::response_parser<beast_http::string_body> parser;
    parser.body_limit(64 << 20);
    auto error =
        Run([&](auto done) { beast_http::async_read(*stream_, buffer_, parser, std::move(done)); });
    if (error == beast_http::error::end_of_stream || error == asio::error::eof ||
        error == asio::error::connection_reset || error == asio::ssl::error::stream_truncated) {
      return std::nullopt;
    }
    if (error) throw std::runtime_error("reading over TLS failed: " + error.message());
    return ReplyFrom(parser.get());
  }

  uint16_t port_;
  asio::io_context io_context_;
  asio::ssl::context context_{asio::ssl::context::tls_client};
  std::optional<asio::ssl::stream<tcp::socket>> stream_;
  beast::flat_buffer buffer_;
};

// Reads raw bytes until the peer closes; nullopt if it has not closed within
// `timeout`.
std::optional<std::string> ReadUntilClosed(int descriptor, milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string received;
  while (std::chrono::steady_clock::now() < deadline) {
    auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd waiting{descriptor, POLLIN, 0};
    if (::poll(&waiting, 1, static_cast<int>(std::max<int64_t>(left.count(), 1))) <= 0) continue;
    char chunk[4096];
    ssize_t size = ::read(descriptor, chunk, sizeof chunk);
    if (size <= 0) return received;  // EOF or reset: closed
    received.append(chunk, static_cast<size_t>(size));
  }
  return std::nullopt;
}

// An embedded --dev daemon serving TLS with `certificate`; `tune` may adjust more.
DaemonOptions WithTls(const TestCertificate& certificate,
                      std::function<void(Settings&)> tune = {}) {
  return {.provider = "embedded", .dev = true, .tune = [&certificate, tune](Settings& settings) {
            settings.tls_cert = certificate.certificate_path();
            settings.tls_key = certificate.key_path();
            if (tune) tune(settings);
          }};
}

TEST(DaemonTls, RunsJavaScriptOverVerifiedTlsAndEchoesTheRequestId) {
  TestCertificate certificate;
  DaemonUnderTest daemon(WithTls(certificate));
  TlsClient client(daemon.port(), certificate.certificate_path());
  ASSERT_FALSE(client.Connect()) << "the handshake failed";
  EXPECT_EQ(client.protocol(), "TLSv1.3");
  HttpReply ran =
      client.Send({.method = "POST", .target = "/v1/runs", .body = RunBody("console.log(6*7)")});
  ASSERT_EQ(ran.status, 200u) << ran.body;
  EXPECT_EQ(json::parse(ran.body)["stdout"], "42\n");
  EXPECT_EQ(ran.Header("plimsoll-request-id"), ran.sent_request_id);
  EXPECT_TRUE(ran.keep_alive);
  // The same TLS connection serves the next request.
  HttpReply described = client.Send({.method = "GET", .target = "/v1/describe"});
  EXPECT_EQ(described.status, 200u);
  EXPECT_EQ(described.Header("plimsoll-request-id"), described.sent_request_id);
  EXPECT_EQ(daemon.provider().runs(), 1);
  EXPECT_NE(daemon.log_text().find("TLS on the API listener: certificate"), std::string::npos)
      << daemon.log_text();
}

TEST(DaemonTls, ARefusalKeepsItsMarkAndEchoOverTls) {
  TestCertificate certificate;
  DaemonUnderTest daemon(WithTls(certificate));
  TlsClient client(daemon.port(), certificate.certificate_path());
  ASSERT_FALSE(client.Connect());
  HttpReply refused =
      client.Send({.method = "POST",
                   .target = "/v1/runs",
                   .body = R"j({"protocol": 99, "javascript": {"code": "console.log(1)"}})j"});
  EXPECT_EQ(refused.status, 409u) << refused.body;
  EXPECT_EQ(refused.Header("plimsoll-not-dispatched"), "protocol");
  EXPECT_EQ(refused.Header("plimsoll-request-id"), refused.sent_request_id);
  json body = json::parse(refused.body);
  EXPECT_EQ(body["error"]["not_dispatched"], "protocol");
  EXPECT_EQ(body["error"]["request_id"], refused.sent_request_id);
  HttpReply unknown = client.Send({.method = "GET", .target = "/v1/nowhere"});
  EXPECT_EQ(unknown.status, 404u);
  EXPECT_EQ(unknown.Header("plimsoll-not-dispatched"), "request");
  EXPECT_EQ(daemon.provider().runs(), 0);
}

TEST(DaemonTls, TheLastAnswerEndsWithACloseNotify) {
  TestCertificate certificate;
  DaemonUnderTest daemon(WithTls(certificate));
  TlsClient client(daemon.port(), certificate.certificate_path());
  ASSERT_FALSE(client.Connect());
  HttpReply last = client.Send({.method = "GET", .target = "/healthz", .keep_alive = false});
  EXPECT_EQ(last.status, 200u);
  EXPECT_FALSE(last.keep_alive);
  EXPECT_EQ(client.ReadToEnd(), asio::error::eof) << "the connection ended without close_notify";
}

TEST(DaemonTls, ASlowHeaderOverTlsGets408WithTheMark) {
  TestCertificate certificate;
  DaemonUnderTest daemon(WithTls(
      certificate, [](Settings& settings) { settings.http.header_timeout = milliseconds(300); }));
  TlsClient client(daemon.port(), certificate.certificate_path());
  ASSERT_FALSE(client.Connect());
  std::optional<HttpReply> reply = client.SendRaw("POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  ASSERT_TRUE(reply.has_value()) << "closed without the 408";
  EXPECT_EQ(reply->status, 408u);
  EXPECT_EQ(reply->Header("plimsoll-not-dispatched"), "request");
}

TEST(DaemonTls, TlsBelow12IsRefusedAnd12IsServed) {
  TestCertificate certificate;
  DaemonUnderTest daemon(WithTls(certificate));
  TlsClient old(daemon.port(), certificate.certificate_path(), [](SSL_CTX* context) {
    SSL_CTX_set_security_level(context, 0);  // let this client offer TLS 1.1 at all
    SSL_CTX_set_min_proto_version(context, TLS1_1_VERSION);
    SSL_CTX_set_max_proto_version(context, TLS1_1_VERSION);
  });
  EXPECT_TRUE(old.Connect()) << "a TLS 1.1 handshake succeeded";
  TlsClient twelve(daemon.port(), certificate.certificate_path(), [](SSL_CTX* context) {
    SSL_CTX_set_max_proto_version(context, TLS1_2_VERSION);
  });
  ASSERT_FALSE(twelve.Connect());
  EXPECT_EQ(twelve.protocol(), "TLSv1.2");
  EXPECT_EQ(twelve.Send({.method = "GET", .target = "/healthz"}).status, 200u);
}

TEST(DaemonTls, AClientThatTrustsAnotherCertificateCannotConnect) {
  TestCertificate certificate;
  TestCertificate stranger;
  DaemonUnderTest daemon(WithTls(certificate));
  TlsClient client(daemon.port(), stranger.certificate_path());
  boost::system::error_code error = client.Connect();
  ASSERT_TRUE(error);
  EXPECT_NE(error.message().find("certificate verify failed"), std::string::npos)
      << error.message();
}

TEST(DaemonTls, ASilentClientIsClosedByTheIdleTimeout) {
  TestCertificate certificate;
  DaemonUnderTest daemon(WithTls(
      certificate, [](Settings& settings) { settings.http.idle_timeout = milliseconds(300); }));
  TestClient silent(daemon.port());  // TCP only: never sends a byte
  auto received = ReadUntilClosed(silent.socket().native_handle(), milliseconds(5000));
  ASSERT_TRUE(received.has_value()) << "still open after 5 s";
  EXPECT_EQ(*received, "");
}

TEST(DaemonTls, AStalledHandshakeIsClosedByTheHeaderTimeout) {
  TestCertificate certificate;
  DaemonUnderTest daemon(WithTls(certificate, [](Settings& settings) {
    settings.http.idle_timeout = std::chrono::seconds(60);
    settings.http.header_timeout = milliseconds(300);
  }));
  TestClient stalled(daemon.port());
  // The first bytes of a TLS record header, then nothing.
  asio::write(stalled.socket(), asio::buffer(std::string("\x16\x03\x01", 3)));
  auto received = ReadUntilClosed(stalled.socket().native_handle(), milliseconds(5000));
  EXPECT_TRUE(received.has_value()) << "the half-started handshake was not closed within 5 s";
}

TEST(DaemonTls, TheDrainClosesAConnectionStillWaitingForItsHandshake) {
  TestCertificate certificate;
  DaemonUnderTest daemon(WithTls(certificate));  // idle timeout 60 s: only the drain can close it
  TestClient waiting(daemon.port());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (daemon.server().open_connections() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_EQ(daemon.server().open_connections(), 1u);
  auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(daemon.server().Drain(std::chrono::seconds(10)));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_TRUE(ReadUntilClosed(waiting.socket().native_handle(), milliseconds(5000)).has_value());
}

TEST(DaemonTls, PlaintextToTheTlsPortGetsNoHttpAnswerAndServingGoesOn) {
  TestCertificate certificate;
  DaemonUnderTest daemon(WithTls(certificate));
  for (int attempt = 0; attempt < 3; ++attempt) {
    TestClient plain(daemon.port());
    asio::write(plain.socket(),
                asio::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")));
    auto received = ReadUntilClosed(plain.socket().native_handle(), milliseconds(5000));
    ASSERT_TRUE(received.has_value()) << "the plaintext connection was left open";
    EXPECT_FALSE(received->starts_with("HTTP/")) << *received;
  }
  TlsClient client(daemon.port(), certificate.certificate_path());
  ASSERT_FALSE(client.Connect());
  EXPECT_EQ(client.Send({.method = "GET", .target = "/healthz"}).status, 200u);
  // The plaintext connections are gone; only this one is left.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (daemon.server().open_connections() > 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(daemon.server().open_connections(), 1u);
}

TEST(DaemonTls, TheMetricsListenerUsesTlsOnlyOffLoopback) {
  TestCertificate certificate;
  {
    DaemonUnderTest loopback(WithTls(certificate));  // metrics on 127.0.0.1: plaintext
    HttpReply metrics = SendOnce(loopback.metrics_port(), {.method = "GET", .target = "/metrics"});
    EXPECT_EQ(metrics.status, 200u);
  }
  DaemonUnderTest exposed(
      WithTls(certificate, [](Settings& settings) { settings.metrics_listen = "0.0.0.0:0"; }));
  TlsClient client(exposed.metrics_port(), certificate.certificate_path());
  ASSERT_FALSE(client.Connect()) << "the non-loopback metrics listener does not speak TLS";
  EXPECT_EQ(client.Send({.method = "GET", .target = "/metrics"}).status, 200u);
  EXPECT_NE(exposed.log_text().find("TLS on the API listener and the metrics listener"),
            std::string::npos);
}

TEST(DaemonTls, TheUnixSocketStaysPlaintext) {
  TestCertificate certificate;
  std::string path = certificate.WriteFile("unused", "") + ".sock";
  DaemonUnderTest daemon(
      WithTls(certificate, [path](Settings& settings) { settings.unix_socket = path; }));
  asio::io_context io_context;
  asio::local::stream_protocol::socket socket(io_context);
  socket.connect(asio::local::stream_protocol::endpoint(path));
  asio::write(
      socket,
      asio::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")));
  auto received = ReadUntilClosed(socket.native_handle(), milliseconds(5000));
  ASSERT_TRUE(received.has_value());
  EXPECT_TRUE(received->starts_with("HTTP/1.1 200")) << *received;
}

// DaemonMain in this process: it returns before serving when TLS cannot load.
int StartWith(const std::vector<std::string>& extra, std::string& log) {
  std::vector<std::string> args = {"plimsolld", "--provider",  "embedded",         "--dev",
                                   "--listen",  "127.0.0.1:0", "--metrics-listen", "off"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::ostringstream out, err;
  int status = DaemonMain(args, {}, out, err);
  log = err.str();
  return status;
}

TEST(DaemonTls, AnUnreadableCertificateStopsTheStartWithExit2) {
  TestCertificate certificate;
  std::string log;
  EXPECT_EQ(StartWith({"--tls-cert", "/nonexistent/plimsoll/cert.pem", "--tls-key",
                       certificate.key_path()},
                      log),
            kExitBadSettings);
  EXPECT_NE(log.find("The TLS certificate /nonexistent/plimsoll/cert.pem cannot be read: No such "
                     "file or directory."),
            std::string::npos)
      << log;
}

TEST(DaemonTls, AMismatchedKeyStopsTheStartWithExit2) {
  TestCertificate certificate;
  TestCertificate other;
  std::string log;
  EXPECT_EQ(
      StartWith({"--tls-cert", certificate.certificate_path(), "--tls-key", other.key_path()}, log),
      kExitBadSettings);
  EXPECT_NE(log.find("does not match the certificate " + certificate.certificate_path()),
            std::string::npos)
      << log;
}

TEST(DaemonTls, HalfATlsConfigurationStopsTheStartWithExit2) {
  TestCertificate certificate;
  std::string log;
  EXPECT_EQ(StartWith({"--tls-cert", certificate.certificate_path()}, log), kExitBadSettings);
  EXPECT_NE(log.find("TLS needs both --tls-cert and --tls-key"), std::string::npos) << log;
}

}  // namespace
}  // namespace plimsoll::daemon::testing
