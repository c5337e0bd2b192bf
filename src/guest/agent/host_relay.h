// The agent's host-call relay (host_calls.h): while a granted job runs, guest
// code reaches the broker through HTTP on a Unix socket, and only there.
//
// Start() makes the socket's directory (0755) if it is missing, binds the
// socket (0666, so the steps' unprivileged user can connect) and serves on a
// thread of its own: one connection at a time, one request per connection
// (relay_http.h), each relayed over the agent's channel as a HostCall frame
// and answered from the host's HostAnswer frame. While the relay runs it is
// the only reader of the channel, and it writes there only between reading
// a request and reading its answer; the agent writes its report only after
// Stop(), so frames never interleave.
//
// Bounds: a connection has kRelayReadTimeout to send its request head and
// body; the head is at most kMaxRelayHeaderBytes; a body is read up to
// kMaxHostCallBody bytes (a larger one travels cut at that size, and the
// broker refuses it as too large and counts it); the wait for the host's
// answer ends at the job's deadline. A channel that fails (the host is
// gone) ends the relay: later connections are refused at once.
//
// Usage (main.cc):
//   std::unique_ptr<HostRelay> relay;
//   if (job.host_calls) relay = HostRelay::Start(channel, kHostCallSocket, deadline).value();
//   Report report = RunJob(...);
//   relay.reset();  // Stop(): before the report is written
#ifndef PLIMSOLL_GUEST_AGENT_HOST_RELAY_H_
#define PLIMSOLL_GUEST_AGENT_HOST_RELAY_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "base/unique_fd.h"
#include "guest/host_calls.h"
#include "plimsoll/error.h"

namespace plimsoll::guest::agent {

inline constexpr std::chrono::seconds kRelayReadTimeout{10};

class HostRelay {
 public:
  using Clock = std::chrono::steady_clock;

  // Errors: the socket cannot be made (the relay is then absent, and the
  // agent says so in its report's detail).
  static Expected<std::unique_ptr<HostRelay>> Start(int channel, std::string socket_path,
                                                    Clock::time_point deadline);
  HostRelay(const HostRelay&) = delete;
  HostRelay& operator=(const HostRelay&) = delete;
  ~HostRelay();  // Stop()

  // Stops accepting, lets a call in flight get its answer (bounded by the
  // deadline), joins the thread and removes the socket. Idempotent.
  void Stop();

  int64_t calls() const { return calls_.load(); }

 private:
  HostRelay(int channel, std::string socket_path, Clock::time_point deadline,
            base::UniqueFd listener, base::UniqueFd wake);
  void Serve();
  void Handle(base::UniqueFd connection);
  // Relays one call: the HTTP response for the guest. A channel that fails
  // gives a 502 and ends the relay's calls.
  std::string Relay(const HostCall& call);

  const int channel_;
  const std::string socket_path_;
  const Clock::time_point deadline_;
  base::UniqueFd listener_;
  base::UniqueFd wake_;  // an eventfd: Stop() wakes the thread's poll
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> calls_{0};
  bool channel_failed_ = false;  // the thread's own
  std::thread thread_;
};

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_HOST_RELAY_H_
