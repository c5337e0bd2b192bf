// The answer to a run (SPEC §2).
//
// A non-zero exit code is a result, not an error: the run happened. Errors
// and refusals travel as plimsoll::Error instead. Byte fields (outputs,
// artifact contents) hold raw bytes; wire.h decides how they travel.
//
// Usage:
//
//   plimsoll::Expected<plimsoll::Result> result = sandbox.Run(request);
//   if (result.ok()) {
//     std::cout << plimsoll::TierName(result->isolation) << "\n"
//               << result->stdout_bytes;
//   }
#ifndef PLIMSOLL_RESULT_H_
#define PLIMSOLL_RESULT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/record.h"
#include "plimsoll/request.h"
#include "plimsoll/tier.h"

namespace plimsoll {

// Exit codes with a fixed meaning on every provider.
inline constexpr int64_t kExitTimedOut = 124;
inline constexpr int64_t kExitOutOfMemory = 137;

enum class ProjectOutcome { kCompleted, kSetupFailed, kTimedOut, kProtocolError };

// "completed", "setup_failed", "timed_out", "protocol_error".
std::string_view ProjectOutcomeName(ProjectOutcome outcome);
std::optional<ProjectOutcome> ParseProjectOutcome(std::string_view name);

struct StepResult {
  std::vector<std::string> command;
  int64_t exit_code = 0;
  bool timed_out = false;
  std::string stdout_bytes;
  std::string stderr_bytes;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  int64_t duration_ms = 0;
  friend bool operator==(const StepResult&, const StepResult&) = default;
};

struct Artifact {
  std::string path;
  std::string content;     // raw bytes
  bool truncated = false;  // content cut at the artifact cap
  friend bool operator==(const Artifact&, const Artifact&) = default;
};

// A rich output of a run or cell (SPEC §7): a figure the code showed or left
// open (image/png), a displayed DataFrame (text/html, then text/plain), or
// what JavaScript's display() was given. width and height are pixels, 0 when
// the output is not an image; a PNG's are read from its own header.
struct Display {
  std::string mime;  // e.g. "image/png", "text/html", "text/plain"
  std::string data;  // raw bytes
  int64_t width = 0;
  int64_t height = 0;
  friend bool operator==(const Display&, const Display&) = default;
};

// Caps on one result's displays: more are dropped (displays_truncated).
inline constexpr size_t kMaxDisplays = 16;
inline constexpr size_t kMaxDisplayBytes = size_t{4} << 20;  // all of them together

// Sets width and height from each image/png display's own header, 0 and 0
// for every other display (and for a "PNG" whose header is not one): a
// provider reports sizes it measured, never ones the sandbox claimed.
void MeasureDisplays(std::vector<Display>& displays);

// One row of a granted run's call trace: how many calls had this method,
// route template, status and verdict (SPEC §8). Never a concrete path.
struct BrokerRoute {
  std::string method;    // GET HEAD POST PUT PATCH DELETE, or OTHER
  std::string route;     // the matching template ("/items/*"); "" when none matched
  int64_t status = 0;    // the upstream's HTTP status; 0 when it gave none
  bool allowed = false;  // whether the broker let the calls go upstream
  // "" or why not: not_allowed, bad_path, max_calls, route_max_calls,
  // circuit_open, body_too_large, upstream_timeout, upstream_error.
  std::string reason;
  int64_t count = 0;
  friend bool operator==(const BrokerRoute&, const BrokerRoute&) = default;
};

// At most this many rows on a result; the rest are counted in routes_dropped.
inline constexpr size_t kMaxBrokerRoutes = 256;

// The call trace summary of a granted run (SPEC §8): covered by the result
// digest with every row.
struct BrokerSummary {
  std::string profile;
  int64_t calls = 0;  // every call, allowed and denied
  int64_t denied = 0;
  // Sorted by (method, route, status, allowed, reason); at most
  // kMaxBrokerRoutes, the most frequent.
  std::vector<BrokerRoute> routes{};
  int64_t routes_dropped = 0;  // distinct rows left out (the least frequent)
  friend bool operator==(const BrokerSummary&, const BrokerSummary&) = default;
};

// One finding of the efficiency advisor (SPEC §8).
struct Advice {
  std::string pattern;  // e.g. "fan_out", "repeated_read"
  std::string route;    // the route template, never a concrete path
  std::string message;
  int64_t extra_calls = 0;
  double added_latency_ms = 0;  // modelled
  int64_t bytes = 0;
  friend bool operator==(const Advice&, const Advice&) = default;
};

// What a cell's answer adds (SPEC §9).
struct CellResult {
  // The printed form of the cell's last expression, as a REPL shows it;
  // absent when the cell ended in a statement (or, in JavaScript, in an
  // expression whose value is undefined) or did not complete.
  std::optional<std::string> value;
  bool value_truncated = false;  // cut at the value cap, never silently
  // A fresh interpreter ran this cell: nothing from earlier cells was kept.
  bool interpreter_started = false;
  // The interpreter lives on: the next cell sees what this one left.
  bool state_kept = false;
  friend bool operator==(const CellResult&, const CellResult&) = default;
};

struct Result {
  std::string provider;
  Tier isolation = Tier::kUnknown;  // the tier this run actually got
  std::string environment;          // image / engine identity
  PayloadKind kind = PayloadKind::kJavascript;
  int64_t exit_code = 0;
  bool timed_out = false;
  std::string stdout_bytes;
  std::string stderr_bytes;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  int64_t duration_ms = 0;

  // Projects only.
  std::optional<ProjectOutcome> outcome;
  std::vector<StepResult> steps;
  std::vector<Artifact> artifacts;

  std::optional<CellResult> cell;       // cells only
  std::optional<BrokerSummary> broker;  // set when a grant was used
  std::vector<Advice> advice;

  // Rich outputs, in the order they were shown (at most kMaxDisplays,
  // kMaxDisplayBytes together); displays_truncated when more were dropped.
  std::vector<Display> displays;
  bool displays_truncated = false;

  Record record;  // binds this result to its request (SPEC §5)

  friend bool operator==(const Result&, const Result&) = default;
};

}  // namespace plimsoll

#endif  // PLIMSOLL_RESULT_H_
