// The check program a smoke test runs INSIDE a throwaway linux sandbox
// (SPEC §6), and the reading of its answer.
//
// The program is a Python 3 script sent as a project file (so /work's
// noexec does not matter) and run as the guest user by the real agent with
// the real configuration. It prints one JSON object per line:
//   {"name": "root_read_only", "passed": true, "detail": "..."}
// Checks: root_read_only, tmp_is_bounded_tmpfs, work_is_bounded_tmpfs,
// only_tmpfs_writable, loopback_only, no_route_out, pids_limit,
// seccomp_filter, no_new_privileges, unprivileged_no_capabilities.
#ifndef PLIMSOLL_PROVIDERS_LINUX_SELF_CHECK_H_
#define PLIMSOLL_PROVIDERS_LINUX_SELF_CHECK_H_

#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"
#include "plimsoll/limits.h"
#include "plimsoll/provider.h"
#include "plimsoll/request.h"

namespace plimsoll::linux_sandbox {

// The project that runs the script with the configured limits as arguments.
ProjectPayload SelfCheckProject(const Limits& limits);

// The checks named in stdout, one per JSON line. A line that is not a check
// is an error: the evidence must not be guessed.
Expected<std::vector<EvidenceCheck>> ParseSelfCheckOutput(std::string_view stdout_bytes);

// The names every complete run reports (a missing one fails the smoke test).
const std::vector<std::string>& SelfCheckNames();

}  // namespace plimsoll::linux_sandbox

#endif  // PLIMSOLL_PROVIDERS_LINUX_SELF_CHECK_H_
