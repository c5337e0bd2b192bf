#include "guest/agent/host_relay.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "guest/agent/relay_http.h"
#include "guest/host_calls.h"
#include "guest/protocol.h"

namespace plimsoll::guest::agent {
namespace {

using Clock = HostRelay::Clock;

Error SocketError(std::string_view what, int error) {
  return Failure(ErrorCode::kInternal, "The host-call relay could not " + std::string(what) + ": " +
                                           std::strerror(error) + ".");
}

// Waits until `fd` is readable or `until` passes; false on timeout or error.
bool WaitReadable(int fd, Clock::time_point until) {
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) return false;
    pollfd entry{fd, POLLIN, 0};
    int ready = poll(&entry, 1, static_cast<int>(std::min<int64_t>(left, 60'000)));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

// Reads until the head's empty line. The bytes after it (the start of the
// body) go to `body`. False when the peer stops, time runs out or the head
// is too long.
bool ReadHead(int fd, Clock::time_point until, std::string* head, std::string* body) {
  std::string buffer;
  char chunk[4096];
  for (;;) {
    size_t end = buffer.find("\r\n\r\n");
    if (end != std::string::npos) {
      *head = buffer.substr(0, end);
      *body = buffer.substr(end + 4);
      return true;
    }
    if (buffer.size() > kMaxRelayHeaderBytes || !WaitReadable(fd, until)) return false;
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(got));
  }
}

// Reads the rest of a body of `length` bytes, keeping at most `keep`.
bool ReadBody(int fd, Clock::time_point until, int64_t length, size_t keep, std::string* body) {
  int64_t left = length - static_cast<int64_t>(body->size());
  if (body->size() > keep) body->resize(keep);
  char chunk[16384];
  while (left > 0) {
    if (!WaitReadable(fd, until)) return false;
    ssize_t got = read(fd, chunk, static_cast<size_t>(std::min<int64_t>(left, sizeof chunk)));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    left -= got;
    size_t room = keep - std::min(keep, body->size());
    body->append(chunk, std::min(room, static_cast<size_t>(got)));
    // A body past `keep` is not kept; past it, stop reading: the broker
    // refuses it as too large either way.
    if (body->size() >= keep) return true;
  }
  return true;
}

void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;  // the guest went away: nothing to tell it
    bytes.remove_prefix(static_cast<size_t>(written));
  }
}

}  // namespace

Expected<std::unique_ptr<HostRelay>> HostRelay::Start(int channel, std::string socket_path,
                                                      Clock::time_point deadline) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof address.sun_path) {
    return Failure(ErrorCode::kInternal, "The host-call socket path is too long.");
  }
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  std::error_code ignored;
  std::filesystem::path directory = std::filesystem::path(socket_path).parent_path();
  std::filesystem::create_directories(directory, ignored);
  chmod(directory.c_str(), 0755);
  unlink(socket_path.c_str());

  base::UniqueFd listener(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listener.valid()) return SocketError("make its socket", errno);
  if (bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return SocketError("bind " + socket_path, errno);
  }
  if (chmod(socket_path.c_str(), 0666) != 0) return SocketError("open " + socket_path, errno);
  if (listen(listener.get(), 16) != 0) return SocketError("listen", errno);
  base::UniqueFd wake(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake.valid()) return SocketError("make its eventfd", errno);
  std::unique_ptr<HostRelay> relay(new HostRelay(channel, std::move(socket_path), deadline,
                                                 std::move(listener), std::move(wake)));
  relay->thread_ = std::thread([raw = relay.get()] { raw->Serve(); });
  return relay;
}

HostRelay::HostRelay(int channel, std::string socket_path, Clock::time_point deadline,
                     base::UniqueFd listener, base::UniqueFd wake)
    : channel_(channel),
      socket_path_(std::move(socket_path)),
      deadline_(deadline),
      listener_(std::move(listener)),
      wake_(std::move(wake)) {}

HostRelay::~HostRelay() {
  Stop();
}

void HostRelay::Stop() {
  if (stopping_.exchange(true)) return;
  uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  unlink(socket_path_.c_str());
}

void HostRelay::Serve() {
  while (!stopping_.load()) {
    pollfd entries[2] = {{listener_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    int ready = poll(entries, 2, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || stopping_.load()) return;
    if ((entries[0].revents & POLLIN) == 0) continue;
    base::UniqueFd connection(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!connection.valid()) continue;
    if (channel_failed_) {
      WriteAll(connection.get(),
               FormatRelayError(502, "The host is gone; no call can be made now."));
      continue;
    }
    Handle(std::move(connection));
  }
}

void HostRelay::Handle(base::UniqueFd connection) {
  const Clock::time_point until = std::min(deadline_, Clock::now() + kRelayReadTimeout);
  const int64_t id = calls_.load() + 1;
  std::string head, body;
  if (!ReadHead(connection.get(), until, &head, &body)) {
    // Nothing readable arrived: nothing to count, nothing to answer.
    WriteAll(connection.get(), FormatRelayError(400, "The request head did not arrive whole."));
    return;
  }
  int status = 400;
  std::string problem;
  std::optional<RelayRequestHead> request = ParseRelayRequestHead(head, &status, &problem);
  if (!request) {
    // Counted by the broker (it refuses an empty path); answered here.
    (void)Relay(FallbackCall(id));
    WriteAll(connection.get(), FormatRelayError(status, problem));
    return;
  }
  if (!ReadBody(connection.get(), until, request->content_length, kMaxHostCallBody, &body)) {
    WriteAll(connection.get(), FormatRelayError(400, "The request body did not arrive whole."));
    return;
  }
  HostCall call{.id = id,
                .method = std::move(request->method),
                .path = std::move(request->target),
                .content_type = std::move(request->content_type),
                .body = std::move(body)};
  WriteAll(connection.get(), Relay(call));
}

std::string HostRelay::Relay(const HostCall& call) {
  calls_.store(call.id);
  // The host answers within the run's budget, which ends before the job's
  // deadline; the wrap-up allowance covers the answer's way back.
  const Clock::time_point until = deadline_ + std::chrono::milliseconds(kAgentWrapUpMs);
  Status sent = WriteFrame(channel_, EncodeHostCall(call), until);
  auto frame = sent.ok() ? ReadFrame(channel_, until) : Expected<std::string>(sent.error());
  auto answer =
      frame.ok() ? DecodeHostAnswer(*frame, call.id) : Expected<HostCallAnswer>(frame.error());
  if (!answer.ok()) {
    channel_failed_ = true;
    return FormatRelayError(502, "The host did not answer the call.");
  }
  return FormatRelayResponse(*answer);
}

}  // namespace plimsoll::guest::agent
