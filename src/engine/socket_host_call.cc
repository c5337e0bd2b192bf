#include "engine/socket_host_call.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/ascii.h"
#include "engine/host_call_json.h"

namespace plimsoll::engine {
namespace {

using Clock = std::chrono::steady_clock;

HostAnswer Failed(std::string message) {
  return HostAnswer{.ok = false, .body = std::move(message)};
}

bool Wait(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd entry{fd, events, 0};
    int ready = poll(&entry, 1, static_cast<int>(std::min<int64_t>(left, 60'000)));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

// The answer the relay sent, as the broker's answer.
std::optional<HostCallAnswer> ParseAnswer(std::string_view bytes) {
  size_t head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return std::nullopt;
  std::string_view head = bytes.substr(0, head_end);
  HostCallAnswer answer;
  answer.body = std::string(bytes.substr(head_end + 4));
  size_t line_end = head.find("\r\n");
  std::string_view status_line = head.substr(0, line_end);
  if (!status_line.starts_with("HTTP/1.1 ") || status_line.size() < 12) return std::nullopt;
  auto [end, problem] =
      std::from_chars(status_line.data() + 9, status_line.data() + 12, answer.status);
  if (problem != std::errc() || end != status_line.data() + 12) return std::nullopt;
  std::string_view rest = line_end == std::string_view::npos ? "" : head.substr(line_end + 2);
  while (!rest.empty()) {
    size_t end_of_line = rest.find("\r\n");
    std::string_view line = rest.substr(0, end_of_line);
    rest = end_of_line == std::string_view::npos ? "" : rest.substr(end_of_line + 2);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name = base::AsciiLower(line.substr(0, colon));
    std::string_view value = base::TrimSpaces(line.substr(colon + 1));
    if (name == "content-type") answer.content_type = std::string(value);
    if (name == "plimsoll-refused") answer.refused = std::string(value);
    if (name == "plimsoll-truncated") answer.truncated = value == "true";
  }
  if (!answer.refused.empty()) {
    // The broker's refusal body: {"error": code, "message": sentence}.
    auto parsed = nlohmann::json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
    answer.message =
        parsed.is_object() && parsed.contains("message") && parsed["message"].is_string()
            ? parsed["message"].get<std::string>()
            : "The broker refused the call (" + answer.refused + ").";
  }
  return answer;
}

HostAnswer Send(const std::string& socket_path, const HostCallRequest& request,
                Clock::time_point deadline) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof address.sun_path)
    return Failed("The host socket path is too long.");
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Failed("The host call could not make a socket.");
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return Failed("The host call could not reach the broker's socket " + socket_path + ": " +
                  std::strerror(errno) + ".");
  }
  std::string message = request.method + " " + request.path + " HTTP/1.1\r\nHost: plimsoll\r\n";
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
      request.method == "PATCH") {
    message += "Content-Length: " + std::to_string(request.body.size()) + "\r\n";
  }
  if (!request.content_type.empty()) message += "Content-Type: " + request.content_type + "\r\n";
  message += "Connection: close\r\n\r\n";
  message += request.body;
  std::string_view left = message;
  while (!left.empty()) {
    if (!Wait(fd, POLLOUT, deadline)) return Failed("The host call ran out of time sending.");
    ssize_t sent = send(fd, left.data(), left.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) break;  // the relay stopped reading (a body over its cap): read its answer
    left.remove_prefix(static_cast<size_t>(sent));
  }
  std::string answer;
  char chunk[16384];
  for (;;) {
    if (!Wait(fd, POLLIN, deadline)) return Failed("The host call ran out of time.");
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    answer.append(chunk, static_cast<size_t>(got));
    if (answer.size() > kMaxSocketAnswerBytes) return Failed("The host's answer is too large.");
  }
  auto parsed = ParseAnswer(answer);
  if (!parsed) return Failed("The host's answer is not HTTP the client reads.");
  return ScriptAnswer(*parsed);
}

}  // namespace

HostCallHandler SocketHostCall(std::string socket_path, Clock::time_point deadline) {
  return [socket_path = std::move(socket_path), deadline](std::string_view text) {
    auto request = ParseHostCallRequest(text);
    if (!request.ok()) return Failed(request.error().message());
    return Send(socket_path, *request, deadline);
  };
}

}  // namespace plimsoll::engine
