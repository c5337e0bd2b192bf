// The image's qjs side of a granted run (SPEC §8): JavaScript's host.call
// sent as HTTP/1.1 to the agent's relay socket (guest/host_calls.h,
// kHostCallSocket), so host.get/host.post behave on the OS-level tiers as
// they do in the embedded engine (host_call_json.h has the JSON both use).
//
// One request per connection: the request line carries the method and path
// as the script gave them (the broker checks them; a path that breaks the
// request line is refused and counted there), Content-Length and
// Content-Type when there is a body, `Connection: close`; the answer is read
// to its end (at most kMaxSocketAnswerBytes) and parsed: the status, the
// Content-Type, `Plimsoll-Refused` (the broker refused the call: the
// script's call throws with the message of the JSON body) and
// `Plimsoll-Truncated`. Every step is bounded by the run's deadline.
//
// Usage (qjs_main.cc):
//   if (access(guest::kHostCallSocket, F_OK) == 0)
//     limits.host_call = SocketHostCall(guest::kHostCallSocket, limits.deadline);
#ifndef PLIMSOLL_ENGINE_SOCKET_HOST_CALL_H_
#define PLIMSOLL_ENGINE_SOCKET_HOST_CALL_H_

#include <chrono>
#include <cstddef>
#include <string>

#include "engine/engine.h"

namespace plimsoll::engine {

inline constexpr size_t kMaxSocketAnswerBytes = (size_t{4} << 20) + (size_t{64} << 10);

HostCallHandler SocketHostCall(std::string socket_path,
                               std::chrono::steady_clock::time_point deadline);

}  // namespace plimsoll::engine

#endif  // PLIMSOLL_ENGINE_SOCKET_HOST_CALL_H_
