// A hidden scenario (SPEC §10): the plant's parameters, handed to the runner
// in a file that the runner reads and deletes before any controller starts.
//
// The file is JSON: {"plant": "cartpole", "parameters": [x0, v0, θ0, ω0]};
// "parameters": [] selects the plant's default scenario; "plant" is
// optional and, when present, must name the plant the runner was asked for.
// No other key is allowed. At most kScenarioFileCap bytes.
//
// The scenario digest is SHA-256 over the parameters as little-endian
// float64 values, in order (8 bytes each; no length, no plant name); the
// default scenario (no parameters) digests the empty string
// (e3b0c442...b855).
//
// Usage:
//   PLIMSOLL_RETURN_IF_ERROR(PrepareToHoldScenario());   // before reading it
//   auto scenario = TakeScenario(path);                  // read, then deleted
//   std::string digest = ScenarioDigestHex(scenario->parameters);
//
// Thread-safety: TakeScenario touches only its path; PrepareToHoldScenario
// changes the whole process.
#ifndef PLIMSOLL_TRIAL_SCENARIO_H_
#define PLIMSOLL_TRIAL_SCENARIO_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::trial {

inline constexpr size_t kScenarioFileCap = 64 * 1024;

struct Scenario {
  std::optional<std::string> plant;  // the file's "plant", if it had one
  std::vector<double> parameters;
};

// Makes the process fit to hold a hidden scenario, before it reads one:
// prctl(PR_SET_DUMPABLE, 0), so a same-uid process cannot ptrace it or read
// its /proc/PID/mem, environ or fd links; then the proof
// (ProbeFromSameUser, same_user_probe.h): a same-user child tries exactly
// that. Errors: kFailedPrecondition with the failing call, or naming what
// the probe could read (as root with CAP_SYS_PTRACE it reads everything:
// the runner refuses to start there); kInternal when the probe could not
// run.
Status PrepareToHoldScenario();

// Takes the scenario file at `path`: opens it without following a symlink
// and, before reading a byte, refuses it unless it is a regular file owned
// by this process's effective user with exactly one link (a second name, a
// hard link made by an earlier step, would outlive the delete; a file of
// another user could be linked or held open by that user); deletes `path`;
// refuses it if the opened file still has a link then; reads it from the
// descriptor (at most kScenarioFileCap bytes) and parses it. `path` is
// deleted whether the file is accepted or refused (a symlink: the link, not
// its target; a hard link: this name, not the other); if it cannot be
// deleted, that is an error (nothing may start while it exists). Errors
// (all refusals, kRequest): cannot be opened (a symlink: ELOOP), not a
// regular file, another owner, more than one link, not deletable, unreadable,
// too large, not the JSON above.
Expected<Scenario> TakeScenario(const std::string& path);

// The scenario's text as TakeScenario parses it (the JSON above, at most
// kScenarioFileCap bytes), for a scenario already in memory. Errors
// (refusals, kRequest): not that JSON.
Expected<Scenario> ParseScenario(std::string_view text);

// SHA-256 of the parameters as little-endian float64 bytes, lowercase hex.
std::string ScenarioDigestHex(std::span<const double> parameters);

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_SCENARIO_H_
