#include "client/testing/fake_daemon.h"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <stdexcept>

#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll::client::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using asio::ip::tcp;

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string SeenRequest::Header(const std::string& lowercase_name) const {
  auto found = headers.find(lowercase_name);
  return found == headers.end() ? "" : found->second;
}

struct FakeDaemon::Impl {
  Script script;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::optional<asio::ssl::context> tls;
  std::thread thread;

  mutable std::mutex mutex;
  std::condition_variable changed;
  bool stopping = false;
  int current_fd = -1;
  int accepted = 0;
  int closed = 0;
  std::vector<SeenRequest> seen;

  void Serve() {
    for (;;) {
      tcp::socket socket(io);
      boost::system::error_code error;
      acceptor.accept(socket, error);
      int number = 0;
      {
        std::lock_guard lock(mutex);
        if (stopping || error) return;
        current_fd = socket.native_handle();
        number = ++accepted;
      }
      if (tls) {
        asio::ssl::stream<tcp::socket&> stream(socket, *tls);
        stream.handshake(asio::ssl::stream_base::server, error);
        if (!error) ServeConnection(stream, number);
      } else {
        ServeConnection(socket, number);
      }
      socket.close(error);
      {
        std::lock_guard lock(mutex);
        current_fd = -1;
        ++closed;
      }
      changed.notify_all();
    }
  }

  template <typename Stream>
  void ServeConnection(Stream& stream, int number) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(64 << 20);
      boost::system::error_code error;
      http::read(stream, buffer, parser, error);
      if (error) return;
      const auto& message = parser.get();
      SeenRequest request;
      request.method = std::string(message.method_string());
      request.target = std::string(message.target());
      for (const auto& field : message) {
        request.headers.emplace(Lowercase(field.name_string()), std::string(field.value()));
      }
      request.body = message.body();
      request.connection = number;
      {
        std::lock_guard lock(mutex);
        seen.push_back(request);
      }
      Reply reply = script(request);
      if (reply.never_answer) {
        std::unique_lock lock(mutex);
        changed.wait(lock, [this] { return stopping; });
        return;
      }
      asio::write(stream, asio::buffer(reply.bytes), error);
      if (error || reply.close_after) return;
    }
  }
};

FakeDaemon::FakeDaemon(Script script, std::optional<net::testing::TestCertificate> tls)
    : impl_(std::make_unique<Impl>()), tls_(tls.has_value()) {
  impl_->script = std::move(script);
  if (tls) {
    impl_->tls.emplace(asio::ssl::context::tls_server);
    impl_->tls->use_certificate_chain(asio::buffer(tls->certificate_pem));
    impl_->tls->use_private_key(asio::buffer(tls->private_key_pem), asio::ssl::context::pem);
  }
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->thread = std::thread([impl = impl_.get()] { impl->Serve(); });
}

FakeDaemon::~FakeDaemon() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
    // Unblocks a read or handshake in progress (thread-safe at the OS level).
    if (impl_->current_fd >= 0) ::shutdown(impl_->current_fd, SHUT_RDWR);
  }
  impl_->changed.notify_all();
  // Wakes a blocked accept().
  asio::io_context io;
  tcp::socket waker(io);
  boost::system::error_code ignored;
  waker.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ignored);
  impl_->thread.join();
}

std::string FakeDaemon::url() const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

int FakeDaemon::connections_accepted() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->accepted;
}

std::vector<SeenRequest> FakeDaemon::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->seen;
}

bool FakeDaemon::WaitForClosedConnections(int count, std::chrono::milliseconds bound) {
  std::unique_lock lock(impl_->mutex);
  return impl_->changed.wait_for(lock, bound, [&] { return impl_->closed >= count; });
}

std::string RawResponse(unsigned status,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        const std::string& body, bool keep_alive) {
  std::string bytes = "HTTP/1.1 " + std::to_string(status) + " Status\r\n";
  for (const auto& [name, value] : headers) bytes += name + ": " + value + "\r\n";
  bytes += "Content-Type: application/json\r\n";
  bytes += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  if (!keep_alive) bytes += "Connection: close\r\n";
  return bytes + "\r\n" + body;
}

Reply HonestRunAnswer(const SeenRequest& seen, Tier tier,
                      const std::function<void(Result&)>& tamper) {
  Expected<Request> request = ParseRequestJson(seen.body);
  if (!request.ok()) throw std::runtime_error("the client sent " + request.error().ToString());
  Result result;
  result.provider = "fake";
  result.isolation = tier;
  result.environment = "sha256:fake";
  result.kind = request->kind().value_or(PayloadKind::kJavascript);
  result.stdout_bytes = "42\n";
  result.duration_ms = 2;
  result.record = MakeRecord(*request, result, "sha256:policy", {1000, 1002});
  if (tamper) tamper(result);
  return {.bytes = RawResponse(200, {{"Plimsoll-Request-Id", seen.Header("plimsoll-request-id")}},
                               ResultToJson(result))};
}

Reply RefusalAnswer(const SeenRequest& seen, NotDispatched reason, const std::string& message) {
  std::string id = seen.Header("plimsoll-request-id");
  Error refusal = Refusal(reason, message);
  return {.bytes =
              RawResponse(409,
                          {{"Plimsoll-Request-Id", id},
                           {"Plimsoll-Not-Dispatched", std::string(NotDispatchedName(reason))}},
                          ErrorToJson(refusal, id))};
}

}  // namespace plimsoll::client::testing
