// The job protocol between a provider (host side) and plimsoll-guest, the
// agent inside every OS-level sandbox (DESIGN.md "One guest agent").
//
// Transport: one bidirectional byte stream (a socketpair or pipe pair for
// `linux` and `oci`, virtio-serial for `microvm`) carrying frames:
//
//   frame   = u32 big-endian length, then that many bytes (<= kMaxFrameBytes)
//   session = [agent sends one kReadyFrame frame, only when started with
//             --announce: it is up and waiting; warm pools use it];
//             host sends one Job frame (JSON, see below);
//             agent answers with one Report frame (JSON) followed by one
//             Seal frame: the lowercase-hex HMAC-SHA256 of the Report frame's
//             bytes under Job::report_key.
//   A granted run's job (Job::host_calls) may, before its Report, carry
//   host-call frames from the agent, each answered by the host with one
//   host-answer frame (host_calls.h).
//   An agent started with --session (a kept sandbox, SPEC §9) repeats the
//   job/report exchange until the host closes the channel; every job brings
//   its own key. Between jobs /work is kept and so are the session's
//   interpreters (Job::cell), stopped (SIGSTOP) while no cell runs; every
//   other process is killed before a report leaves.
//
// The report key is 32 random bytes the host makes per run; it reaches only
// the agent (inside the Job frame, on a descriptor no guest process
// inherits), so nothing the guest code prints or writes can forge a report.
// A missing, oversized, malformed or badly sealed report is a protocol error
// (ProjectOutcome::kProtocolError), never a result.
//
// Byte fields inside the JSON (file contents, outputs, artifacts) travel as
// base64 strings; paths and argv are UTF-8 strings. Both messages carry
// "version": kJobVersion; decoding is strict (unknown or repeated keys, wrong
// types, out-of-range numbers, bad paths and absurd sizes are refused), so a
// host and an agent from different builds fail loudly instead of guessing.
//
// Decisions both sides rely on (src/guest/README.md says the same):
//   - a step that exits non-zero stops the rest; the outcome stays
//     kCompleted;
//   - a step that cannot be started (program not found: exit 127; found but
//     not executable: 126; the agent could not drop privileges or set limits:
//     126) is reported as a step with that exit code and the reason on its
//     stderr, stops the rest, and makes the outcome kSetupFailed;
//   - files that cannot be written: no step runs, outcome kSetupFailed,
//     Report::detail says why;
//   - the deadline (Job::timeout_ms over all steps together) kills the
//     step's whole process tree: that step has timed_out and exit code 124,
//     the outcome is kTimedOut, later steps are not run and not listed;
//   - exit code of a killed step is 128 + signal (137 for SIGKILL, which the
//     cgroup OOM killer also sends);
//   - an artifact that is missing, a symlink (anywhere on its path) or not a
//     regular file is left out of Report::artifacts and named in
//     Report::detail; one cut by the max_artifact_bytes budget is present
//     with truncated = true (and empty content once the budget is spent).
//
// Usage (host side):
//   guest::Job job = guest::JobFromRequest(request, limits, key);
//   PLIMSOLL_RETURN_IF_ERROR(guest::WriteFrame(fd, guest::EncodeJob(job)));
//   auto report = guest::ReadSealedReport(fd, key, deadline);
#ifndef PLIMSOLL_GUEST_PROTOCOL_H_
#define PLIMSOLL_GUEST_PROTOCOL_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"
#include "plimsoll/granted_calls.h"
#include "plimsoll/limits.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"

namespace plimsoll::guest {

inline constexpr uint32_t kMaxFrameBytes = 32u << 20;
inline constexpr size_t kReportKeyBytes = 32;
inline constexpr int64_t kJobVersion = 1;
// What an agent started with --announce sends before it reads its job.
inline constexpr std::string_view kReadyFrame = "plimsoll-guest ready";

// Exit codes the agent reports for steps it could not start.
inline constexpr int64_t kExitCannotExecute = 126;
inline constexpr int64_t kExitNotFound = 127;

// A javascript snippet's job budget is the request's timeout plus this
// grace, so qjs's own deadline (exit 124) normally fires first and the
// agent's kill is the backstop.
inline constexpr int64_t kJavascriptGraceMs = 1000;

// After the job's budget ends, the agent takes at most this long to sweep
// what the steps left, collect the artifacts and send its report: every
// sweep and drain is bounded by the budget's end plus this. A host must
// wait for the report longer than that (plus its own setup time) before it
// gives up and kills the sandbox.
inline constexpr int64_t kAgentWrapUpMs = 1000;

// Bounds DecodeJob enforces (beyond them a job is refused as malformed).
inline constexpr int64_t kMaxJobTimeoutMs = int64_t{3600} * 1000;
inline constexpr int64_t kMaxJobOutputCapBytes = int64_t{8} << 20;
inline constexpr int64_t kMaxJobArtifactBytes = int64_t{16} << 20;
inline constexpr size_t kMaxJobFiles = 10'000;
inline constexpr size_t kMaxJobSteps = 1'000;

// A seccomp filter is at most BPF_MAXINSNS (4096) instructions of 8 bytes.
inline constexpr size_t kMaxSeccompFilterBytes = 4096 * 8;

// Fixed places inside every guest image and sandbox.
inline constexpr const char* kWorkDirectory = "/work";
inline constexpr const char* kAgentPath = "/usr/local/bin/plimsoll-guest";
inline constexpr const char* kQjsPath = "/usr/local/bin/qjs";
// The unprivileged identity steps run as inside the sandbox.
inline constexpr uint32_t kGuestUid = 1000;
inline constexpr uint32_t kGuestGid = 1000;

// A cell for a kept interpreter (sessions only). The agent starts the
// language's REPL server on first use (python: the embedded python_repl.py
// under `python3 -I`; javascript: `qjs --repl-server`), sends it the code
// and reports one step whose command is CellCommand(language).
struct JobCell {
  std::string language;  // "javascript" or "python"
  std::string code;
  int64_t value_cap_bytes = 0;  // the printed value is cut here (flagged)
  int64_t number = 0;           // the session's call count, for "<cell N>"
  int64_t memory_bytes = 0;     // javascript: the kept instance's limit (0: qjs's default)
};

// The step a cell's report carries (never executed as a program).
std::vector<std::string> CellCommand(std::string_view language);

// Bounds DecodeJob enforces on cells.
inline constexpr int64_t kMaxCellValueCapBytes = int64_t{1} << 20;
inline constexpr size_t kMaxCellCodeBytes = size_t{16} << 20;

struct Job {
  std::vector<ProjectFile> files;               // written under /work first
  std::vector<std::vector<std::string>> steps;  // run in order as kGuestUid
  std::vector<std::string> artifacts;           // brought back after the steps
  int64_t timeout_ms = 0;                       // budget for all steps together
  int64_t output_cap_bytes = 0;                 // per stream, per step
  int64_t max_artifact_bytes = 0;               // all artifacts together
  int64_t nofile = 256;                         // RLIMIT_NOFILE for steps
  int64_t fsize_bytes = 0;  // RLIMIT_FSIZE for steps (0: none; JobFromRequest: work_bytes)
  int64_t nproc = 0;        // RLIMIT_NPROC for steps (0: no rlimit; cgroups count)
  std::vector<std::string> environment;  // "KEY=VALUE" for steps
  std::string report_key;                // kReportKeyBytes raw bytes
  // A compiled seccomp filter (the raw struct sock_filter array, at most
  // kMaxSeccompFilterBytes) the agent installs in every step just before
  // exec; empty: none (linux and oci install the policy themselves, the
  // microvm provider sends it). Sent only when set.
  std::string seccomp_filter;
  // Sessions only: a cell instead of steps (steps, files and artifacts are
  // then empty). Sent only when set.
  std::optional<JobCell> cell;
  // A granted run: the agent serves kHostCallSocket while the job runs and
  // relays each call to the host (host_calls.h). Sent only when true; a job
  // without it has no socket and no relay.
  bool host_calls = false;
};

// What a cell's report adds (the step holds its exit code and streams).
struct ReportCell {
  std::optional<std::string> value;  // at most the job's value_cap_bytes
  bool value_truncated = false;
  bool interpreter_started = false;  // a fresh REPL server ran this cell
  bool state_kept = false;           // it lives on for the next cell
};

struct Report {
  std::vector<StepResult> steps;  // the steps that ran (or failed to start)
  ProjectOutcome outcome = ProjectOutcome::kCompleted;
  std::vector<Artifact> artifacts;
  // Whole sentences, one per line, for the operator's log: why setup failed,
  // which artifacts were missing, what the agent had to trim. Never shown to
  // the caller as output.
  std::string detail;
  // A session agent's answer to a cell (present exactly when the job had one).
  std::optional<ReportCell> cell;
  // A session agent's interpreters alive after this job (language names,
  // sorted); absent from a one-shot agent's reports.
  std::optional<std::vector<std::string>> interpreters;
  // What the steps or the cell wrote to the displays directory (displays.h),
  // in order, cut at kMaxDisplays / kMaxDisplayBytes (displays_truncated).
  // Width and height are not sent: the host reads them from the data.
  std::vector<Display> displays;
  bool displays_truncated = false;
};

// Builds the job for a validated request (ValidateRequest resolved its
// timeout): a project as is; a `javascript` snippet as main.js run by
// kQjsPath with --timeout-ms (the request's) and --output-cap (the cap plus
// one byte, so the agent's own cap sees and flags the truncation); a
// `python` snippet as main.py run by `python3 main.py`. Limits supply the
// caps (clamped to kMaxJobOutputCapBytes / kMaxJobArtifactBytes, which a
// provider should check its configuration against at startup). A cell
// becomes Job::cell (only a --session agent runs it; its budget is the
// request's timeout, plus kJavascriptGraceMs for javascript, whose server
// keeps the soft deadline itself); a key that is not kReportKeyBytes long is
// kInternal.
Expected<Job> JobFromRequest(const Request& request, const Limits& limits, std::string report_key);

std::string EncodeJob(const Job& job);
Expected<Job> DecodeJob(std::string_view bytes);
std::string EncodeReport(const Report& report);
Expected<Report> DecodeReport(std::string_view bytes);

// Lowercase hex HMAC-SHA256 of `bytes` under `key`.
std::string Seal(std::string_view key, std::string_view bytes);

// Frame I/O on a blocking or non-blocking descriptor (socket, pipe or
// character device), EINTR-safe, with partial writes resumed. Both give up
// at `deadline` (kDeadlineExceeded). A read refuses an announced length
// above kMaxFrameBytes and a stream that ends mid-frame (kDataLoss); a write
// refuses a frame above it (kResourceExhausted). Writes to a socket never
// raise SIGPIPE; on a pipe the caller must ignore SIGPIPE.
Status WriteFrame(int fd, std::string_view bytes, std::chrono::steady_clock::time_point deadline);
// Two frames back to back in as few writes as the descriptor takes (the
// agent's Report and Seal: one call instead of two on the report's path).
Status WriteFrames(int fd, std::string_view first, std::string_view second,
                   std::chrono::steady_clock::time_point deadline);
Expected<std::string> ReadFrame(int fd, std::chrono::steady_clock::time_point deadline);

// Reads the Report frame and the Seal frame and checks the seal in constant
// time. Any failure is an error (the caller reports kProtocolError).
Expected<Report> ReadSealedReport(int fd, std::string_view report_key,
                                  std::chrono::steady_clock::time_point deadline);
// The same, up to the check of the seal: the report's bytes, not decoded.
// With `calls` (a granted run), the agent's host-call frames before the
// report are answered through it (host_calls.h); without, one is kDataLoss.
Expected<std::string> ReadSealedFrame(int fd, std::string_view report_key,
                                      std::chrono::steady_clock::time_point deadline,
                                      GrantedCalls* calls = nullptr);
// What the host uses, ReadSealedReport(fd, job, deadline), is in
// report_bounds.h: the report bounded before it is parsed and checked
// against the job it answers.

// Turns a report into the Result fields a provider fills: for snippets the
// single step's outputs become the result's; for projects, steps, outcome and
// artifacts are copied and the top-level exit code/outputs are the last
// step's. For javascript, qjs's own deadline (exit 124) counts as timed_out
// and qjs's "qjs: stdout truncated at N bytes" notes are dropped from stderr
// when the agent flagged that truncation itself. A snippet whose setup failed
// before any step gets exit code 127 and the detail on stderr; a provider that
// prefers an error checks report.outcome first. Sets kind, never duration_ms
// (the provider measures the run), provider, isolation or record. A cell's
// single step fills the result as a snippet's does, and report.cell fills
// result->cell. The report's displays become the result's, measured from
// their own bytes (MeasureDisplays).
void FillResult(const Request& request, const Report& report, Result* result);

}  // namespace plimsoll::guest

#endif  // PLIMSOLL_GUEST_PROTOCOL_H_
