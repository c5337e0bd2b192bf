// The per-run envelope a provider enforces (SPEC §6 defaults).
//
// One struct so the validator, the providers, `describe` and the policy
// digest on each record all read the same numbers.
//
// Usage:
//
//   plimsoll::Limits limits;            // SPEC §6 defaults
//   limits.memory_bytes = 512 << 20;
//   auto validated = plimsoll::ValidateRequest(request, limits);
#ifndef PLIMSOLL_LIMITS_H_
#define PLIMSOLL_LIMITS_H_

#include <cstdint>

namespace plimsoll {

struct Limits {
  int64_t memory_bytes = int64_t{256} << 20;  // no swap
  int64_t cpus_millis = 1000;                 // 1 CPU
  int64_t pids = 256;
  int64_t tmp_bytes = int64_t{16} << 20;
  int64_t work_bytes = int64_t{128} << 20;
  int64_t output_cap_bytes = int64_t{64} << 10;  // per stream
  int64_t snippet_timeout_default_ms = 5'000;
  int64_t snippet_timeout_max_ms = 30'000;
  int64_t project_timeout_default_ms = 30'000;
  int64_t project_timeout_max_ms = 120'000;
  int64_t run_ceiling_ms = 300'000;  // hard ceiling on any run, whatever the provider
  int64_t max_code_bytes = int64_t{1} << 20;
  int64_t max_project_files = 200;
  int64_t max_project_bytes = int64_t{4} << 20;
  int64_t max_artifacts = 64;
  int64_t max_artifact_bytes = int64_t{4} << 20;  // total brought back

  friend bool operator==(const Limits&, const Limits&) = default;
};

}  // namespace plimsoll

#endif  // PLIMSOLL_LIMITS_H_
