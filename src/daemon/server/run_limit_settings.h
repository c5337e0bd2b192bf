// plimsolld's per-run resource limits (SPEC §6's envelope,
// include/plimsoll/limits.h), set on the command line:
//
//   --memory-mb N                memory per run, MiB, no swap   (16..1048576)
//   --cpus-millis N              CPU per run, 1/1000 CPU        (10..1024000)
//   --pids N                     processes per run              (8..1048576)
//   --tmp-mb N                   /tmp tmpfs, MiB                (1..1048576)
//   --work-mb N                  /work tmpfs, MiB               (1..1048576)
//   --output-cap-kb N            per output stream, KiB         (1..65536)
//   --snippet-timeout-ms N       a snippet's default timeout
//   --max-snippet-timeout-ms N   the longest a snippet may ask for
//   --project-timeout-ms N       a project's default timeout
//   --max-project-timeout-ms N   the longest a project may ask for
//
// Timeouts are 1..the run ceiling, and each default must not exceed its
// maximum. An unset flag keeps the Limits{} default of this build; hardened
// mode (hardened.h) needs the resource limits set explicitly, so a
// production daemon states its envelope instead of inheriting defaults that
// may change between builds.
//
// Usage (settings.cc, daemon_main.cc):
//   DeclareRunLimitFlags(app, settings.run_limits);
//   ... app.parse(...) ...
//   PLIMSOLL_RETURN_IF_ERROR(CheckRunLimits(settings.run_limits, settings.run_ceiling));
//   Limits limits = ApplyRunLimits(settings.run_limits, Limits{});
#ifndef PLIMSOLL_DAEMON_SERVER_RUN_LIMIT_SETTINGS_H_
#define PLIMSOLL_DAEMON_SERVER_RUN_LIMIT_SETTINGS_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plimsoll/error.h"
#include "plimsoll/limits.h"

namespace CLI {
class App;
}

namespace plimsoll::daemon {

struct RunLimitSettings {
  std::optional<int64_t> memory_mb{};
  std::optional<int64_t> cpus_millis{};
  std::optional<int64_t> pids{};
  std::optional<int64_t> tmp_mb{};
  std::optional<int64_t> work_mb{};
  std::optional<int64_t> output_cap_kb{};
  std::optional<int64_t> snippet_timeout_ms{};
  std::optional<int64_t> max_snippet_timeout_ms{};
  std::optional<int64_t> project_timeout_ms{};
  std::optional<int64_t> max_project_timeout_ms{};

  friend bool operator==(const RunLimitSettings&, const RunLimitSettings&) = default;
};

// Adds the flags above to `app`, writing into `limits` (which must outlive
// the parse). Each flag checks its own range.
void DeclareRunLimitFlags(CLI::App& app, RunLimitSettings& limits);

// The rules between values: timeouts within 1..`run_ceiling`, defaults not
// above their maxima (an unset side counts with its Limits{} default).
// kInvalidArgument naming the flags.
Status CheckRunLimits(const RunLimitSettings& limits, std::chrono::milliseconds run_ceiling);

// `base` with every value that was set replaced (MiB and KiB to bytes).
Limits ApplyRunLimits(const RunLimitSettings& limits, Limits base);

// The resource flags that were not given ("--memory-mb", ...), in flag order.
// Hardened mode needs every one of them; default timeouts are not among them
// (they are choices within the maxima, not limits).
std::vector<std::string> UnsetResourceLimitFlags(const RunLimitSettings& limits);

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_RUN_LIMIT_SETTINGS_H_
