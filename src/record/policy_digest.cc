// PolicyDigest: the identity of an enforced envelope, for Record::policy.
#include "plimsoll/limits.h"
#include "plimsoll/record.h"
#include "record/digest_builder.h"

namespace plimsoll {

// A new Limits field must be added to the digest (and to
// docs/run-records.md and tests/records/digest.py) in the same change.
static_assert(sizeof(Limits) == 16 * sizeof(int64_t),
              "Limits changed: update PolicyDigest, its docs and the vectors");

std::string PolicyDigest(const Limits& limits) {
  record::DigestBuilder digest(kPolicyDomain);
  digest.Integer("memory_bytes", limits.memory_bytes);
  digest.Integer("cpus_millis", limits.cpus_millis);
  digest.Integer("pids", limits.pids);
  digest.Integer("tmp_bytes", limits.tmp_bytes);
  digest.Integer("work_bytes", limits.work_bytes);
  digest.Integer("output_cap_bytes", limits.output_cap_bytes);
  digest.Integer("snippet_timeout_default_ms", limits.snippet_timeout_default_ms);
  digest.Integer("snippet_timeout_max_ms", limits.snippet_timeout_max_ms);
  digest.Integer("project_timeout_default_ms", limits.project_timeout_default_ms);
  digest.Integer("project_timeout_max_ms", limits.project_timeout_max_ms);
  digest.Integer("run_ceiling_ms", limits.run_ceiling_ms);
  digest.Integer("max_code_bytes", limits.max_code_bytes);
  digest.Integer("max_project_files", limits.max_project_files);
  digest.Integer("max_project_bytes", limits.max_project_bytes);
  digest.Integer("max_artifacts", limits.max_artifacts);
  digest.Integer("max_artifact_bytes", limits.max_artifact_bytes);
  return std::move(digest).Finish();
}

}  // namespace plimsoll
