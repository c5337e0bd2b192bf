// Host calls on the agent channel (SPEC §8): how guest code in an OS-level
// sandbox reaches the broker of a granted run.
//
// While a job whose Job::host_calls is set runs, the agent serves HTTP/1.1
// on a Unix socket inside the sandbox (kHostCallSocket) and relays each
// request over its channel to the host as a HostCall frame; the host answers
// it with a HostAnswer frame, and the agent writes the answer back as an
// HTTP response. The exchange is strictly call, answer, call, answer: the
// host reads the next frame only after answering, and the agent sends its
// report only once no call is waiting. So the host's reading loop is
//
//   frame = ReadFrame();
//   while (IsHostCallFrame(frame)) { answer it; frame = ReadFrame(); }
//   frame is the report; the seal follows.
//
// A call frame is kHostCallPrefix followed by JSON; an answer frame is
// kHostAnswerPrefix followed by JSON. A report is a JSON object, so it can
// never start with either prefix. Bodies travel as base64. Both decoders are
// strict (unknown or missing keys, wrong types, bad base64, oversized parts
// are refused): the call frame comes from inside the sandbox, so the host
// treats it as guest input, and the broker checks it again (path, method,
// size, budget) as it checks every call.
//
// Thread-safety: pure functions.
#ifndef PLIMSOLL_GUEST_HOST_CALLS_H_
#define PLIMSOLL_GUEST_HOST_CALLS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "plimsoll/error.h"
#include "plimsoll/granted_calls.h"

namespace plimsoll::guest {

// Where guest code finds the broker in a granted OS-level run.
inline constexpr const char* kHostCallDirectory = "/run/plimsoll";
inline constexpr const char* kHostCallSocket = "/run/plimsoll/api.sock";

inline constexpr std::string_view kHostCallPrefix = "plimsoll-host-call\n";
inline constexpr std::string_view kHostAnswerPrefix = "plimsoll-host-answer\n";

// Bounds the decoders enforce. A request body larger than the broker's cap
// (1 MiB) still travels, so the broker refuses and counts it; the agent
// stops reading a request at kMaxHostCallBody + 1 bytes.
inline constexpr size_t kMaxHostCallBody = (size_t{1} << 20) + 1;
inline constexpr size_t kMaxHostCallPath = 8192;
inline constexpr size_t kMaxHostCallField = 256;  // method, content type, refusal code
inline constexpr size_t kMaxHostAnswerBody = size_t{4} << 20;
inline constexpr size_t kMaxHostAnswerMessage = 4096;

// One call as the agent read it from guest code.
struct HostCall {
  int64_t id = 0;  // the agent's counter; the answer carries it back
  std::string method;
  std::string path;
  std::string content_type;  // "" for none
  std::string body;
};

std::string EncodeHostCall(const HostCall& call);
// kDataLoss for anything but a well-formed call frame.
Expected<HostCall> DecodeHostCall(std::string_view frame);

// The answer to call `id` (plimsoll/granted_calls.h says what each field is).
std::string EncodeHostAnswer(int64_t id, const HostCallAnswer& answer);
// kDataLoss for anything but a well-formed answer frame to call `id`.
Expected<HostCallAnswer> DecodeHostAnswer(std::string_view frame, int64_t id);

bool IsHostCallFrame(std::string_view frame);

// Host side: reads the next frame from the agent, first answering every
// host-call frame through `calls` (each bounded by `deadline`, and by the
// run's own budget inside `calls`). A host-call frame when `calls` is null
// (a run without a grant), or a malformed one, is kDataLoss: the run's
// report is then not trusted.
Expected<std::string> ReadFrameAnsweringHostCalls(int fd, GrantedCalls* calls,
                                                  std::chrono::steady_clock::time_point deadline);

}  // namespace plimsoll::guest

#endif  // PLIMSOLL_GUEST_HOST_CALLS_H_
