#include "broker/testing/fake_upstream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cerrno>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace plimsoll::broker::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;

void Check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("FakeUpstream: ") + what + " failed");
}

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string Serialize(const UpstreamReply& reply) {
  if (!reply.raw.empty()) return reply.raw;
  http::response<http::string_body> response{static_cast<http::status>(reply.status), 11};
  for (const auto& [name, value] : reply.headers) response.insert(name, value);
  response.body() = reply.body;
  response.content_length(reply.body.size());
  response.set(http::field::connection, "close");
  std::ostringstream out;
  out << response;
  return out.str();
}

}  // namespace

std::vector<std::string> ReceivedRequest::Headers(std::string_view name) const {
  std::vector<std::string> values;
  for (const auto& [key, value] : headers) {
    if (Lowercase(key) == Lowercase(name)) values.push_back(value);
  }
  return values;
}

std::string ReceivedRequest::Header(std::string_view name) const {
  auto values = Headers(name);
  return values.empty() ? "" : values.front();
}

std::string ReceivedRequest::Everything() const {
  std::string text = request_line + "\n";
  for (const auto& [key, value] : headers) text += key + ": " + value + "\n";
  return text + body;
}

struct FakeUpstream::Impl {
  UpstreamScript script;
  std::optional<ssl::context> tls;
  std::string address;
  int listen_fd = -1;
  int stop_fd = -1;
  uint16_t port = 0;
  std::thread thread;
  mutable std::mutex mutex;
  std::vector<ReceivedRequest> requests;  // guarded by mutex
  int connections = 0;                    // guarded by mutex

  // Waits until `fd` is readable or the server stops; false when stopping.
  bool WaitReadable(int fd) const {
    pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    while (true) {
      int ready = ::poll(fds, 2, -1);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0 || (fds[1].revents & POLLIN) != 0) return false;
      return true;
    }
  }

  // Holds a connection without answering until the peer closes it.
  void Hold(int fd) const {
    char sink[4096];
    while (WaitReadable(fd)) {
      if (::read(fd, sink, sizeof sink) <= 0) return;
    }
  }

  template <typename Stream>
  void Serve(Stream& stream, int fd) {
    beast::flat_buffer buffer;
    http::request_parser<http::string_body> parser;
    parser.body_limit(std::uint64_t{16} << 20);
    beast::error_code error;
    http::read(stream, buffer, parser, error);
    if (error) return;
    const auto& message = parser.get();
    ReceivedRequest received;
    received.method = std::string(message.method_string());
    received.target = std::string(message.target());
    received.request_line = received.method + " " + received.target + " HTTP/" +
                            std::to_string(message.version() / 10) + "." +
                            std::to_string(message.version() % 10);
    for (const auto& field : message) {
      received.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    received.body = message.body();
    {
      std::lock_guard lock(mutex);
      requests.push_back(received);
    }
    UpstreamReply reply = script(received);
    if (reply.never_answer) {
      Hold(fd);
      return;
    }
    std::string bytes = Serialize(reply);
    asio::write(stream, asio::buffer(bytes), error);
  }

  void HandleConnection(int fd) {
    asio::io_context io;
    tcp::socket socket(io);
    socket.assign(tcp::v4(), fd);  // owns fd from here
    if (!tls) {
      Serve(socket, fd);
      return;
    }
    ssl::stream<tcp::socket&> stream(socket, *tls);
    beast::error_code error;
    stream.handshake(ssl::stream_base::server, error);
    if (error) return;
    Serve(stream, fd);
  }

  void Loop() {
    while (WaitReadable(listen_fd)) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      {
        std::lock_guard lock(mutex);
        ++connections;
      }
      try {
        HandleConnection(fd);
      } catch (const std::exception&) {
        // A failed connection is what some tests make happen; go on.
      }
    }
  }
};

FakeUpstream::FakeUpstream(UpstreamScript script, std::optional<FakeUpstreamTls> tls,
                           const std::string& address_text)
    : impl_(std::make_unique<Impl>()) {
  impl_->address = address_text;
  impl_->script = std::move(script);
  if (tls) {
    impl_->tls.emplace(ssl::context::tls_server);
    impl_->tls->use_certificate_chain_file(tls->certificate_path);
    impl_->tls->use_private_key_file(tls->key_path, ssl::context::pem);
  }
  impl_->listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  Check(impl_->listen_fd >= 0, "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  Check(::inet_pton(AF_INET, address_text.c_str(), &address.sin_addr) == 1, "inet_pton");
  address.sin_port = 0;
  Check(::bind(impl_->listen_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0,
        "bind");
  Check(::listen(impl_->listen_fd, 512) == 0, "listen");
  socklen_t length = sizeof address;
  Check(::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&address), &length) == 0,
        "getsockname");
  impl_->port = ntohs(address.sin_port);
  impl_->stop_fd = ::eventfd(0, EFD_CLOEXEC);
  Check(impl_->stop_fd >= 0, "eventfd");
  impl_->thread = std::thread([impl = impl_.get()] { impl->Loop(); });
}

FakeUpstream::~FakeUpstream() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t written = ::write(impl_->stop_fd, &one, sizeof one);
  impl_->thread.join();
  ::close(impl_->listen_fd);
  ::close(impl_->stop_fd);
}

uint16_t FakeUpstream::port() const {
  return impl_->port;
}

Origin FakeUpstream::origin() const {
  return Origin{.scheme = impl_->tls ? "https" : "http",
                .host = impl_->address,
                .port = impl_->port,
                .loopback = true};
}

std::vector<ReceivedRequest> FakeUpstream::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->requests;
}

int FakeUpstream::connections_accepted() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->connections;
}

}  // namespace plimsoll::broker::testing
