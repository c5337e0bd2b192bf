#include "tools/http_client.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace plimsoll::bench {
namespace {

// Sets `error` and returns false, for one-line failure returns.
bool Fail(std::string* error, std::string text) {
  *error = std::move(text);
  return false;
}

std::string Errno(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

bool EqualsLowercase(std::string_view text, std::string_view lowercase) {
  if (text.size() != lowercase.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lowercase[i]) return false;
  }
  return true;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

std::string RequestId(uint64_t counter) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(32, '0');
  // A fixed prefix per process start would do; mixing the counter keeps IDs
  // distinct across requests, which is all the echo rule needs.
  uint64_t mixed = counter * 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 16; ++i) {
    id[31 - i] = kHex[(counter >> (4 * i)) & 0xf];
    id[15 - i] = kHex[(mixed >> (4 * i)) & 0xf];
  }
  return id;
}

std::string RunRequest(std::string_view body, std::string_view request_id) {
  std::string out;
  out.reserve(160 + body.size());
  out += "POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
  out += "Plimsoll-Request-Id: ";
  out += request_id;
  out += "\r\nContent-Length: ";
  out += std::to_string(body.size());
  out += "\r\n\r\n";
  out += body;
  return out;
}

std::string GetRequest(std::string_view target, std::string_view request_id) {
  std::string out = "GET ";
  out += target;
  out += " HTTP/1.1\r\nHost: 127.0.0.1\r\nPlimsoll-Request-Id: ";
  out += request_id;
  out += "\r\n\r\n";
  return out;
}

Connection::~Connection() {
  if (fd_ >= 0) ::close(fd_);
}

bool Connection::Connect(uint16_t port, bool nonblocking, std::string* error) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return Fail(error, Errno("socket"));
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    return Fail(error, Errno("connect"));
  }
  if (nonblocking && ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK) != 0) {
    return Fail(error, Errno("fcntl O_NONBLOCK"));
  }
  return true;
}

bool Connection::Send(std::string_view bytes, std::string* error) {
  while (!bytes.empty()) {
    ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return Fail(error, Errno("send"));
    bytes.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

long Connection::SendSome(std::string_view bytes, std::string* error) {
  ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  if (sent >= 0) return sent;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
  *error = Errno("send");
  return -1;
}

bool Connection::Receive(std::chrono::steady_clock::time_point deadline, std::string* error) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return Fail(error, "no answer before the deadline");
    pollfd descriptor{fd_, POLLIN, 0};
    int ready = ::poll(&descriptor, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Fail(error, Errno("poll"));
    if (ready == 0) continue;
    char chunk[16384];
    ssize_t size = ::recv(fd_, chunk, sizeof chunk, 0);
    if (size < 0 && errno == EINTR) continue;
    if (size < 0) return Fail(error, Errno("recv"));
    if (size == 0) return Fail(error, "the daemon closed the connection");
    buffer_.append(chunk, static_cast<size_t>(size));
    return true;
  }
}

bool Connection::ReceiveAvailable(std::string* error) {
  char chunk[16384];
  while (true) {
    ssize_t size = ::recv(fd_, chunk, sizeof chunk, 0);
    if (size > 0) {
      buffer_.append(chunk, static_cast<size_t>(size));
      if (static_cast<size_t>(size) < sizeof chunk) return true;
      continue;
    }
    if (size == 0) return Fail(error, "the daemon closed the connection");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    return Fail(error, Errno("recv"));
  }
}

bool Connection::TakeAnswer(Answer* answer, std::string* error) {
  size_t end = buffer_.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  std::string_view head(buffer_.data(), end);
  // Status line: HTTP/1.1 200 OK
  if (head.size() < 12 || head.substr(0, 5) != "HTTP/") {
    return Fail(error, "not an HTTP answer: " + std::string(head.substr(0, 80)));
  }
  size_t space = head.find(' ');
  if (space == std::string_view::npos || space + 4 > head.size()) {
    return Fail(error, "no status code in: " + std::string(head.substr(0, 80)));
  }
  int status = 0;
  for (size_t i = space + 1; i < space + 4; ++i) {
    char c = head[i];
    if (c < '0' || c > '9') return Fail(error, "bad status code");
    status = status * 10 + (c - '0');
  }
  long content_length = -1;
  answer->request_id.clear();
  answer->close = false;
  size_t line_start = head.find("\r\n");
  while (line_start != std::string_view::npos) {
    line_start += 2;
    size_t line_end = head.find("\r\n", line_start);
    std::string_view line =
        head.substr(line_start, line_end == std::string_view::npos ? std::string_view::npos
                                                                   : line_end - line_start);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string_view name = line.substr(0, colon);
      std::string_view value = Trim(line.substr(colon + 1));
      if (EqualsLowercase(name, "content-length")) {
        content_length = 0;
        for (char c : value) {
          if (c < '0' || c > '9') return Fail(error, "bad Content-Length");
          content_length = content_length * 10 + (c - '0');
        }
      } else if (EqualsLowercase(name, "plimsoll-request-id")) {
        answer->request_id = std::string(value);
      } else if (EqualsLowercase(name, "connection")) {
        answer->close = EqualsLowercase(value, "close");
      } else if (EqualsLowercase(name, "transfer-encoding")) {
        return Fail(error, "a chunked answer (this client reads Content-Length only)");
      }
    }
    line_start = line_end;
  }
  if (content_length < 0) return Fail(error, "an answer without Content-Length");
  size_t total = end + 4 + static_cast<size_t>(content_length);
  if (buffer_.size() < total) return false;
  answer->status = status;
  answer->body.assign(buffer_, end + 4, static_cast<size_t>(content_length));
  buffer_.erase(0, total);
  return true;
}

}  // namespace plimsoll::bench
