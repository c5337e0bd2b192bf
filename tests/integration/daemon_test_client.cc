#include "daemon_test_client.h"

#include <poll.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <random>
#include <stdexcept>

namespace plimsoll::daemon::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace beast_http = boost::beast::http;

std::string Lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

std::string HttpReply::Header(const std::string& lowercase_name) const {
  auto found = headers.find(lowercase_name);
  return found == headers.end() ? "" : found->second;
}

std::string FreshRequestId() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 32; ++i) id += kHex[random() % 16];
  return id;
}

TestClient::TestClient(uint16_t port, const std::string& source_address) : socket_(io_context_) {
  if (!source_address.empty()) {
    socket_.open(asio::ip::tcp::v4());
    socket_.bind(asio::ip::tcp::endpoint(asio::ip::make_address(source_address), 0));
  }
  socket_.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
}

beast_http::request<beast_http::string_body> RequestFor(const HttpCall& call,
                                                        std::string* sent_id) {
  beast_http::request<beast_http::string_body> request;
  request.method_string(call.method);
  request.target(call.target);
  request.version(11);
  if (call.host) request.set(beast_http::field::host, *call.host);
  sent_id->clear();
  if (call.send_request_id) {
    *sent_id = FreshRequestId();
    request.set("Plimsoll-Request-Id", *sent_id);
  }
  for (const auto& [name, value] : call.headers) request.insert(name, value);
  if (!call.body.empty() || call.method == "POST") {
    if (call.content_type) request.set(beast_http::field::content_type, *call.content_type);
    request.body() = call.body;
  }
  request.keep_alive(call.keep_alive);
  request.prepare_payload();
  return request;
}

HttpReply ReplyFrom(const beast_http::response<beast_http::string_body>& response) {
  HttpReply reply;
  reply.status = response.result_int();
  for (const auto& field : response) {
    reply.headers.emplace(Lowercase(std::string(field.name_string())), std::string(field.value()));
  }
  reply.body = response.body();
  reply.keep_alive = response.keep_alive();
  return reply;
}

HttpReply TestClient::Send(const HttpCall& call) {
  std::string id;
  auto request = RequestFor(call, &id);
  // The server may answer (413, 415, ...) and stop reading before the whole
  // body is written: a failed write is not the end, the answer may be there.
  beast::error_code write_error;
  beast_http::write(socket_, request, write_error);
  std::optional<HttpReply> reply = ReadReply();
  if (!reply) throw std::runtime_error("the server closed the connection without answering");
  reply->sent_request_id = id;
  return *reply;
}

std::optional<HttpReply> TestClient::SendRaw(const std::string& bytes) {
  asio::write(socket_, asio::buffer(bytes));
  return ReadReply();
}

std::optional<HttpReply> TestClient::ReadReply() {
  beast::flat_buffer buffer;
  beast_http::response_parser<beast_http::string_body> parser;
  parser.body_limit(64 << 20);
  beast::error_code error;
  beast_http::read(socket_, buffer, parser, error);
  if (error == beast_http::error::end_of_stream || error == asio::error::connection_reset ||
      error == asio::error::eof) {
    return std::nullopt;
  }
  if (error) throw std::runtime_error("reading the answer failed: " + error.message());
  return ReplyFrom(parser.get());
}

bool TestClient::WaitForClose(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char byte;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd descriptor{socket_.native_handle(), POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (::poll(&descriptor, 1, static_cast<int>(std::max<int64_t>(left.count(), 1))) <= 0) {
      continue;
    }
    beast::error_code error;
    size_t size = socket_.read_some(asio::buffer(&byte, 1), error);
    if (error || size == 0) return true;
  }
  return false;
}

HttpReply SendOnce(uint16_t port, const HttpCall& call) {
  TestClient client(port);
  HttpCall once = call;
  once.keep_alive = false;
  return client.Send(once);
}

}  // namespace plimsoll::daemon::testing
