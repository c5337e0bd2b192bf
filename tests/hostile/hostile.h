// The hostile-program suite: programs written the way an attacker would
// write them, each with the verdict it must get, run through plimsoll::Sandbox
// against every OS-level provider this machine can host (DESIGN.md "One
// conformance suite"). A provider that lacks a named host precondition here
// (tests/common/host_preconditions.h), or that is not OS-level (it accepts
// no `project` payloads, e.g. `embedded`), is reported as skipped with its
// reason, never as passed; one that has its preconditions but cannot open or
// fails its smoke test fails, and PLIMSOLL_REQUIRE_PROVIDERS turns a
// precondition skip into a failure.
//
// Which providers: $PLIMSOLL_HOSTILE_PROVIDERS (comma-separated) if set, else
// $PLIMSOLL_CONFORMANCE_PROVIDERS, else every provider this build knows except
// `disabled`.
//
// Most programs are rows of a table (see Program): a python3 script plus the
// verdict, instantiated once per provider with PLIMSOLL_HOSTILE_PROGRAMS.
// Adding a program is a few lines:
//
//   const Program kMine[] = {{
//       .name = "ChrootIsRefused",
//       .verdict = "chroot(2) fails with EPERM",
//       .script = "from hostile import *\nattempt('chroot', lambda: libc_call('chroot',
//       b'/tmp'))\n", .stdout_lines = {Denied("chroot", "EPERM")},
//   }};
//   PLIMSOLL_HOSTILE_PROGRAMS(Mine, kMine);
//
// Every run is followed by host-side checks: it returned within its budget,
// no host process carries the run's token afterwards (the token rides on
// every program's argv), the host's secret file is unchanged and the provider
// still runs a trivial project. The global environment (leftovers.cc)
// compares the host before and after the whole suite.
#ifndef PLIMSOLL_TESTS_HOSTILE_HOSTILE_H_
#define PLIMSOLL_TESTS_HOSTILE_HOSTILE_H_

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "plimsoll/sandbox.h"

namespace plimsoll::hostile {

std::vector<std::string> ProvidersUnderTest();

// What the host prepares once for the whole suite; programs refer to it with
// placeholders (see Substitute).
struct HostFixtures {
  std::string token;        // 32 random hex digits; marks our guest processes
  std::string host_marker;  // carried only by a host process the guest must not see
  pid_t marker_pid = -1;    // that host process
  std::string secret_dir;   // /tmp/plimsoll-hostile-<token>
  std::string secret_path;  // a host file the guest must never read or change
  std::string secret_content;
  int tcp_port = 0;           // listener on 127.0.0.1
  int tcp6_port = 0;          // listener on [::1]; 0 when the host has no IPv6 loopback
  int udp_port = 0;           // datagram socket on 127.0.0.1
  std::string abstract_name;  // abstract AF_UNIX listener (without the leading NUL)
  std::string unix_path;      // pathname AF_UNIX listener
};

// Creates the fixtures on first use (thread-safe); DestroyHost removes them.
const HostFixtures& Host();
void DestroyHost();

// Replaces {TOKEN} {HOST_MARKER} {HOST_PID} {SECRET_PATH} {SECRET} {TCP_PORT}
// {TCP6_PORT} {UDP_PORT} {ABSTRACT} {UNIX_PATH} in `text`.
std::string Substitute(std::string text);

// Which host listeners saw a connection or a datagram since the last call
// (drains them). Empty when the guest reached none.
std::vector<std::string> DrainListeners();

// Host processes whose command line or environment contains `needle`
// ("<pid> <cmdline>"), excluding this process.
std::vector<std::string> HostProcessesCarrying(const std::string& needle);

// Destroys every sandbox the suite opened (so their pools and helpers exit)
// before the leftovers are compared.
void CloseAllSandboxes();

// A regular expression for the line "<label>: <one of errnos>", e.g.
// Denied("socket(AF_INET)", "EPERM") or Denied("open /dev/mem", "ENOENT|EACCES").
std::string Denied(const std::string& label, const std::string& errnos);
// Escapes `text` for use inside a regular expression.
std::string Literal(const std::string& text);

// Where a provider's wall is built differently, a program may state the
// verdict that must hold there instead (Program::under_gvisor,
// Program::under_microvm); it replaces the whole verdict (outcome, exit
// code, step count, stdout lines and check). Such a verdict still asserts the
// wall: what that provider's kernel answers, and that nothing reaches past it
// (the host-side checks of RunHostileProject apply as everywhere).
//
// Every OS-level tier applies the same seccomp policy (image/seccomp.policy):
// the linux sandbox's init, runc and crun on the host kernel, gVisor inside
// its own kernel (runsc --oci-seccomp), the microvm agent inside the VM. So a
// call the policy denies gets the same answer everywhere, and a different
// verdict is left only where the kernel boundary a tier adds really answers
// an allowed call differently:
//
// Under gVisor (provider oci:runsc) the calls the policy allows are served by
// gVisor's kernel (its Sentry), not the host's: its mounts, /dev, /proc,
// limits and error numbers are its own.
//
// Under microvm they are served by the VM's own Linux kernel (Debian's cloud
// kernel), whose init (image/microvm/init) also turns off what kernel
// settings can (user namespaces, unprivileged bpf and userfaultfd, perf
// events, module loading); it has no network device and no channel to the
// host but the agent's.
struct DifferentVerdict {
  std::string difference = {};  // why, in words (printed with every failure)
  std::optional<ProjectOutcome> outcome = ProjectOutcome::kCompleted;
  std::optional<int64_t> exit_code = 0;
  std::optional<size_t> step_count = {};
  std::vector<std::string> stdout_lines = {};
  std::function<void(const Result&, const Description&)> check = {};
};
using GvisorVerdict = DifferentVerdict;
using MicrovmVerdict = DifferentVerdict;

// Whether the sandbox described is served by gVisor: its details name the
// runtime runsc.
bool UnderGvisor(const Description& description);
// Whether the sandbox described is a VM of the microvm provider.
bool UnderMicrovm(const Description& description);
// Whether its CPU is emulated in software (microvm under TCG, tier kernel):
// every guest instruction is translated, so the agent's own work between
// steps takes seconds on a busy 2-core host, not milliseconds.
bool UnderSoftwareEmulation(const Description& description);

// One hostile program and its verdict.
struct Program {
  std::string name = {};     // the test's name: [A-Za-z0-9_]+
  std::string verdict = {};  // what must happen, in words (printed with every failure)
  // probe.py (run as `python3 probe.py <token>` unless `steps` is given); the
  // helper module hostile.py (kHelperModule) sits beside it. Placeholders are
  // substituted (see Substitute) in every file.
  std::string script = {};
  std::vector<std::vector<std::string>> steps = {};  // "{TOKEN}" etc. substituted too
  std::vector<ProjectFile> files = {};               // extra files
  std::vector<std::string> artifacts = {};
  int64_t timeout_ms = 10'000;
  // Programs the guest image must have (e.g. "node"); the test fails when
  // one is missing (SPEC §7 promises them in the image).
  std::vector<std::string> needs = {};

  // The verdict, checked in this order. Unset parts are not checked.
  std::optional<ProjectOutcome> outcome = ProjectOutcome::kCompleted;
  std::optional<int64_t> exit_code = 0;   // of the last step that ran
  std::optional<size_t> step_count = {};  // how many steps ran
  // Regular expressions (ECMAScript, whole-line match), one per line of the
  // concatenated stdout of all steps, in order.
  std::vector<std::string> stdout_lines = {};
  // Anything else; runs after the checks above.
  std::function<void(const Result&, const Description&)> check = {};
  // The verdict under gVisor and under microvm, where it differs (see
  // DifferentVerdict).
  std::optional<GvisorVerdict> under_gvisor = {};
  std::optional<MicrovmVerdict> under_microvm = {};
};

// gtest prints a parameter with this (the name, not the bytes).
void PrintTo(const Program& program, std::ostream* out);

// The helper module every program can import (`from hostile import *`):
// attempt(label, fn), syscall(nr, *args), libc, errname(errno), TOKEN,
// other_pids(), read(path), interfaces() and way_out(family, kind, proto).
extern const char* const kHelperModule;

// Opens (once per process) the sandbox of `provider`, or says why not:
// returns nullptr and sets *skip_reason, and *fail (when given) when the
// reason is a failure rather than a skip: a provider is skipped only for a
// named host precondition it lacks (tests/common/host_preconditions.h).
Sandbox* OpenOsLevelSandbox(const std::string& provider, std::string* skip_reason,
                            bool* fail = nullptr);

// A test parameterised by provider name, for programs that need more than a
// table row.
class HostileTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;
  Sandbox& sandbox() { return *sandbox_; }
  const Description& description() const { return description_; }

  // Runs a project; fails the test (and returns an empty Result) if it was
  // refused or failed. Checks the record and the post-run host checks.
  Result RunProject(const ProjectPayload& project, int64_t timeout_ms);

 private:
  Sandbox* sandbox_ = nullptr;
  Description description_;
};

// Runs one table row against one provider.
class ProgramTest : public ::testing::TestWithParam<std::tuple<std::string, Program>> {
 protected:
  void SetUp() override;
  Sandbox* sandbox_ = nullptr;
  Description description_;
};

std::string ProgramTestName(const ::testing::TestParamInfo<ProgramTest::ParamType>& info);

// Runs `project` (on a warm sandbox where there is a pool: see
// tests/common/warm_sandbox.h) and applies the checks every hostile run gets.
// Used by both fixtures.
Result RunHostileProject(Sandbox& sandbox, const ProjectPayload& project, int64_t timeout_ms);

}  // namespace plimsoll::hostile

// Instantiates a table of Programs against every provider under test.
#define PLIMSOLL_HOSTILE_PROGRAMS(suite, table)                                          \
  INSTANTIATE_TEST_SUITE_P(                                                              \
      suite, ProgramTest,                                                                \
      ::testing::Combine(::testing::ValuesIn(::plimsoll::hostile::ProvidersUnderTest()), \
                         ::testing::ValuesIn(table)),                                    \
      ::plimsoll::hostile::ProgramTestName)

#endif  // PLIMSOLL_TESTS_HOSTILE_HOSTILE_H_
