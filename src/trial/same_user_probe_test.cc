// The proof before a hidden scenario: it must be able to fail (a dumpable
// process, or root, is read) and must pass where a sandbox puts the runner
// (an unprivileged user, undumpable). Each case runs in a child, since
// uid and dumpability belong to the process.
#include "trial/same_user_probe.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <string>

#include "trial/scenario.h"
#include "trial/unprivileged_for_tests.h"

namespace plimsoll::trial {
namespace {

std::string Leaks() {
  Expected<std::vector<std::string>> leaks = ProbeFromSameUser();
  if (!leaks.ok()) return "error: " + leaks.error().message();
  std::string names;
  for (const std::string& leak : *leaks) names += leak + ";";
  return names;
}

TEST(SameUserProbe, ReadsADumpableProcessOfItsOwnUser) {
  const std::string leaks = testing::InChild([] {
    if (!testing::BecomeUnprivileged()) return std::string("cannot switch user");
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    return Leaks();
  });
  // Reading descriptors and the environment is a "read" ptrace access,
  // which a same-user process gets on a dumpable target (Yama, where a host
  // has it, restricts only "attach" access: /proc/PID/mem, process_vm_readv).
  EXPECT_NE(leaks.find("/proc/PID/fd/N;"), std::string::npos) << leaks;
  EXPECT_NE(leaks.find("readlink fd;"), std::string::npos) << leaks;
  EXPECT_NE(leaks.find("/proc/PID/environ;"), std::string::npos) << leaks;
}

TEST(SameUserProbe, AnUndumpableProcessWithoutPtraceCapabilityIsHidden) {
  const std::string outcome = testing::InChild([] {
    if (!testing::BecomeUnprivileged()) return std::string("cannot switch user");
    Status prepared = PrepareToHoldScenario();
    if (!prepared.ok()) return "refused: " + prepared.error().message();
    return "leaks: " + Leaks();
  });
  EXPECT_EQ(outcome, "leaks: ");
}

TEST(SameUserProbe, WithPtraceCapabilityEverythingIsReadAndTheRunnerRefuses) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root (CAP_SYS_PTRACE) to show a reader the runner must refuse";
  const std::string outcome = testing::InChild([] {
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    const std::string leaks = Leaks();
    Status prepared = PrepareToHoldScenario();
    return leaks + (prepared.ok() ? " | accepted" : " | refused: " + prepared.error().message());
  });
  EXPECT_NE(outcome.find("/proc/PID/mem;process_vm_readv;/proc/PID/environ;/proc/PID/fd/N;readlink "
                         "fd; | refused: "),
            std::string::npos)
      << outcome;
  EXPECT_NE(outcome.find("can read it (/proc/PID/mem, process_vm_readv"), std::string::npos)
      << outcome;
}

}  // namespace
}  // namespace plimsoll::trial
