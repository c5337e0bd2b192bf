// A small blocking HTTP/1.1 client for the daemon's integration tests:
// real sockets, Beast framing, nothing hidden. Failures throw (test code).
//
// Usage:
//   TestClient client(port);
//   HttpReply reply = client.Send({.method = "POST", .target = "/v1/runs", .body = json});
//   EXPECT_EQ(reply.status, 200);
//   EXPECT_EQ(reply.Header("plimsoll-request-id"), reply.sent_request_id);
#ifndef PLIMSOLL_TESTS_INTEGRATION_DAEMON_TEST_CLIENT_H_
#define PLIMSOLL_TESTS_INTEGRATION_DAEMON_TEST_CLIENT_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace plimsoll::daemon::testing {

struct HttpCall {
  std::string method = "GET";
  std::string target = "/";
  std::string body{};
  std::optional<std::string> content_type = "application/json";
  // Extra headers, sent as given (so a test can send a header twice).
  std::vector<std::pair<std::string, std::string>> headers{};
  bool send_request_id = true;  // a fresh well-formed Plimsoll-Request-Id
  bool keep_alive = true;
  std::optional<std::string> host = "127.0.0.1";  // the Host header; nullopt: none
};

struct HttpReply {
  unsigned status = 0;
  std::multimap<std::string, std::string> headers;  // names lowercased
  std::string body;
  std::string sent_request_id;  // "" when none was sent
  bool keep_alive = false;

  size_t Count(const std::string& lowercase_name) const { return headers.count(lowercase_name); }
  // The first value of a header, "" when absent.
  std::string Header(const std::string& lowercase_name) const;
};

// 32 random lowercase hex digits.
std::string FreshRequestId();

// The request for `call`, ready to write (the transport-independent half of
// Send; the TLS suite writes it over its own stream). `*sent_id` receives
// the request ID sent, "" when none.
boost::beast::http::request<boost::beast::http::string_body> RequestFor(const HttpCall& call,
                                                                        std::string* sent_id);
// The reply of a parsed answer, header names lowercased.
HttpReply ReplyFrom(const boost::beast::http::response<boost::beast::http::string_body>& response);

class TestClient {
 public:
  // Connects to 127.0.0.1:port, from `source_address` (e.g. "127.0.0.2", so
  // a test can play several peers) when it is not empty.
  explicit TestClient(uint16_t port, const std::string& source_address = "");
  HttpReply Send(const HttpCall& call);
  // Writes raw bytes; reads one response (or nothing if the server closes).
  std::optional<HttpReply> SendRaw(const std::string& bytes);
  // Whether the server closed the connection (reads until EOF or `timeout`).
  bool WaitForClose(std::chrono::milliseconds timeout);
  boost::asio::ip::tcp::socket& socket() { return socket_; }

 private:
  std::optional<HttpReply> ReadReply();

  boost::asio::io_context io_context_;
  boost::asio::ip::tcp::socket socket_;
  std::string buffer_;
};

// One request on a fresh connection.
HttpReply SendOnce(uint16_t port, const HttpCall& call);

}  // namespace plimsoll::daemon::testing

#endif  // PLIMSOLL_TESTS_INTEGRATION_DAEMON_TEST_CLIENT_H_
