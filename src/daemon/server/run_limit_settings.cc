#include "daemon/server/run_limit_settings.h"

#include <CLI/CLI.hpp>

namespace plimsoll::daemon {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kKiB = int64_t{1} << 10;

struct Bounds {
  int64_t low;
  int64_t high;
};
constexpr Bounds kMemoryMb{16, int64_t{1} << 20};  // 16 MiB .. 1 TiB
constexpr Bounds kCpusMillis{10, 1'024'000};       // 1/100 CPU .. 1024 CPUs
constexpr Bounds kPids{8, int64_t{1} << 20};       // gVisor needs a few hundred
constexpr Bounds kDiskMb{1, int64_t{1} << 20};
constexpr Bounds kOutputCapKb{1, 64 * 1024};  // 64 MiB: an answer must fit in memory
constexpr int64_t kTimeoutLow = 1;

CLI::Validator InRange(Bounds bounds) {
  return CLI::Range(bounds.low, bounds.high);
}

}  // namespace

void DeclareRunLimitFlags(CLI::App& app, RunLimitSettings& limits) {
  app.add_option("--memory-mb", limits.memory_mb, "Memory per run in MiB, no swap (default 256).")
      ->check(InRange(kMemoryMb));
  app.add_option("--cpus-millis", limits.cpus_millis,
                 "CPU per run in thousandths of a CPU (default 1000).")
      ->check(InRange(kCpusMillis));
  app.add_option("--pids", limits.pids, "Processes per run (default 256).")->check(InRange(kPids));
  app.add_option("--tmp-mb", limits.tmp_mb, "Size of a run's /tmp tmpfs in MiB (default 16).")
      ->check(InRange(kDiskMb));
  app.add_option("--work-mb", limits.work_mb, "Size of a run's /work tmpfs in MiB (default 128).")
      ->check(InRange(kDiskMb));
  app.add_option("--output-cap-kb", limits.output_cap_kb,
                 "Output kept per stream in KiB; the rest is truncated (default 64).")
      ->check(InRange(kOutputCapKb));
  app.add_option("--snippet-timeout-ms", limits.snippet_timeout_ms,
                 "A snippet's timeout when the request gives none (default 5000).");
  app.add_option("--max-snippet-timeout-ms", limits.max_snippet_timeout_ms,
                 "The longest timeout a snippet may ask for (default 30000).");
  app.add_option("--project-timeout-ms", limits.project_timeout_ms,
                 "A project's timeout when the request gives none (default 30000).");
  app.add_option("--max-project-timeout-ms", limits.max_project_timeout_ms,
                 "The longest timeout a project may ask for (default 120000).");
}

Status CheckRunLimits(const RunLimitSettings& limits, std::chrono::milliseconds run_ceiling) {
  struct Timeout {
    const char* flag;
    const std::optional<int64_t>& value;
  };
  const Timeout timeouts[] = {{"--snippet-timeout-ms", limits.snippet_timeout_ms},
                              {"--max-snippet-timeout-ms", limits.max_snippet_timeout_ms},
                              {"--project-timeout-ms", limits.project_timeout_ms},
                              {"--max-project-timeout-ms", limits.max_project_timeout_ms}};
  for (const Timeout& timeout : timeouts) {
    if (!timeout.value) continue;
    if (*timeout.value < kTimeoutLow || *timeout.value > run_ceiling.count()) {
      return Failure(ErrorCode::kInvalidArgument,
                     std::string(timeout.flag) + " must be between 1 and the run ceiling (" +
                         std::to_string(run_ceiling.count()) + " ms, --run-ceiling-ms), not " +
                         std::to_string(*timeout.value) + ".");
    }
  }
  Limits effective = ApplyRunLimits(limits, Limits{});
  auto check_pair = [](const char* default_flag, int64_t default_ms, const char* max_flag,
                       int64_t max_ms) -> Status {
    if (default_ms <= max_ms) return Status::Ok();
    return Failure(ErrorCode::kInvalidArgument,
                   std::string(default_flag) + " (" + std::to_string(default_ms) +
                       " ms) is above " + max_flag + " (" + std::to_string(max_ms) +
                       " ms); the default timeout must be one a request may ask for.");
  };
  PLIMSOLL_RETURN_IF_ERROR(check_pair("--snippet-timeout-ms", effective.snippet_timeout_default_ms,
                                      "--max-snippet-timeout-ms",
                                      effective.snippet_timeout_max_ms));
  PLIMSOLL_RETURN_IF_ERROR(check_pair("--project-timeout-ms", effective.project_timeout_default_ms,
                                      "--max-project-timeout-ms",
                                      effective.project_timeout_max_ms));
  return Status::Ok();
}

Limits ApplyRunLimits(const RunLimitSettings& limits, Limits base) {
  if (limits.memory_mb) base.memory_bytes = *limits.memory_mb * kMiB;
  if (limits.cpus_millis) base.cpus_millis = *limits.cpus_millis;
  if (limits.pids) base.pids = *limits.pids;
  if (limits.tmp_mb) base.tmp_bytes = *limits.tmp_mb * kMiB;
  if (limits.work_mb) base.work_bytes = *limits.work_mb * kMiB;
  if (limits.output_cap_kb) base.output_cap_bytes = *limits.output_cap_kb * kKiB;
  if (limits.snippet_timeout_ms) base.snippet_timeout_default_ms = *limits.snippet_timeout_ms;
  if (limits.max_snippet_timeout_ms) base.snippet_timeout_max_ms = *limits.max_snippet_timeout_ms;
  if (limits.project_timeout_ms) base.project_timeout_default_ms = *limits.project_timeout_ms;
  if (limits.max_project_timeout_ms) base.project_timeout_max_ms = *limits.max_project_timeout_ms;
  return base;
}

std::vector<std::string> UnsetResourceLimitFlags(const RunLimitSettings& limits) {
  std::vector<std::string> unset;
  auto note = [&](const std::optional<int64_t>& value, const char* flag) {
    if (!value) unset.emplace_back(flag);
  };
  note(limits.memory_mb, "--memory-mb");
  note(limits.cpus_millis, "--cpus-millis");
  note(limits.pids, "--pids");
  note(limits.tmp_mb, "--tmp-mb");
  note(limits.work_mb, "--work-mb");
  note(limits.output_cap_kb, "--output-cap-kb");
  note(limits.max_snippet_timeout_ms, "--max-snippet-timeout-ms");
  note(limits.max_project_timeout_ms, "--max-project-timeout-ms");
  return unset;
}

}  // namespace plimsoll::daemon
