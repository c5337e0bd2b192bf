// The self-check's profiles: which checks each names, the arguments its
// script gets, and how a run's output is parsed (no sandbox needed; the
// script itself is proved inside the real walls by the providers' smoke
// tests, and outside any wall by self_check_test.cc).
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <set>
#include <string>
#include <vector>

#include "os/self_check.h"

namespace plimsoll::os {
namespace {

constexpr SelfCheckProfile kAllProfiles[] = {SelfCheckProfile::kLinux, SelfCheckProfile::kOciRunc,
                                             SelfCheckProfile::kGvisor, SelfCheckProfile::kMicrovm};

std::string PassingOutput(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    out += R"({"name": ")" + name + R"(", "passed": true, "detail": "seen"})" + "\n";
  }
  return out;
}

TEST(SelfCheckTest, EveryProfileChecksSeccompAndTheHigherTiersTheirKernelOnTop) {
  const std::vector<std::string>& linux_names = SelfCheckNames();
  EXPECT_EQ(&linux_names, &SelfCheckNames(SelfCheckProfile::kLinux));
  EXPECT_EQ(SelfCheckNames(SelfCheckProfile::kOciRunc), linux_names);
  std::set<std::string> linux_set(linux_names.begin(), linux_names.end());
  EXPECT_EQ(linux_set.size(), 11u);
  EXPECT_TRUE(linux_set.count("seccomp_filter"));
  EXPECT_TRUE(linux_set.count("proc_masked"));
  EXPECT_FALSE(linux_set.count("guest_kernel_is_gvisor"));

  const std::vector<std::string>& gvisor = SelfCheckNames(SelfCheckProfile::kGvisor);
  std::set<std::string> gvisor_set(gvisor.begin(), gvisor.end());
  EXPECT_EQ(gvisor_set.size(), gvisor.size());
  EXPECT_TRUE(gvisor_set.count("seccomp_filter"));
  EXPECT_TRUE(gvisor_set.count("guest_kernel_is_gvisor"));
  EXPECT_TRUE(gvisor_set.count("host_kernel_interfaces_absent"));
  // gVisor's procfs has none of the entries runc masks.
  for (const std::string& name : linux_names) {
    if (name != "proc_masked") {
      EXPECT_TRUE(gvisor_set.count(name)) << name;
    }
  }
  const std::vector<std::string>& microvm = SelfCheckNames(SelfCheckProfile::kMicrovm);
  EXPECT_NE(std::find(microvm.begin(), microvm.end(), "seccomp_filter"), microvm.end());
  EXPECT_NE(std::find(microvm.begin(), microvm.end(), "guest_kernel_is_own"), microvm.end());
}

TEST(SelfCheckTest, TheScriptReportsEveryNameOfEveryProfile) {
  for (SelfCheckProfile profile : kAllProfiles) {
    ProjectPayload project = SelfCheckProject(Limits{}, profile);
    ASSERT_EQ(project.files.size(), 1u);
    for (const std::string& name : SelfCheckNames(profile)) {
      EXPECT_NE(project.files[0].content.find("report(\"" + name + "\""), std::string::npos)
          << name;
    }
  }
}

TEST(SelfCheckTest, TheProfileAndForGvisorTheHostReleaseAreArguments) {
  Limits limits;
  limits.tmp_bytes = int64_t{16} << 20;
  limits.work_bytes = int64_t{128} << 20;
  limits.pids = 256;
  auto step_of = [&](SelfCheckProfile profile) {
    ProjectPayload project = SelfCheckProject(limits, profile);
    EXPECT_EQ(project.steps.size(), 1u);
    return project.steps.empty() ? std::vector<std::string>() : project.steps[0];
  };
  std::vector<std::string> head = {"python3", "self_check.py", "--tmp",  "16777216",
                                   "--work",  "134217728",     "--pids", "256"};
  auto with = [&](std::vector<std::string> tail) {
    std::vector<std::string> step = head;
    step.insert(step.end(), tail.begin(), tail.end());
    return step;
  };
  EXPECT_EQ(step_of(SelfCheckProfile::kLinux), with({"--profile", "linux"}));
  EXPECT_EQ(SelfCheckProject(limits), SelfCheckProject(limits, SelfCheckProfile::kLinux));
  EXPECT_EQ(step_of(SelfCheckProfile::kOciRunc), with({"--profile", "oci-runc"}));
  utsname host{};
  ASSERT_EQ(uname(&host), 0);
  EXPECT_EQ(step_of(SelfCheckProfile::kGvisor),
            with({"--profile", "gvisor", "--host-release", host.release}));
}

TEST(SelfCheckTest, ACompleteRunParsesToEveryCheckOfItsProfile) {
  for (SelfCheckProfile profile : kAllProfiles) {
    auto checks = ParseSelfCheckOutput(PassingOutput(SelfCheckNames(profile)), profile);
    ASSERT_TRUE(checks.ok()) << checks.error().ToString();
    ASSERT_EQ(checks->size(), SelfCheckNames(profile).size());
    for (const EvidenceCheck& check : *checks) EXPECT_TRUE(check.passed) << check.name;
  }
}

TEST(SelfCheckTest, AMissingCheckIsAddedAsFailed) {
  for (SelfCheckProfile profile : kAllProfiles) {
    std::vector<std::string> names = SelfCheckNames(profile);
    std::string dropped = names[3];
    names.erase(names.begin() + 3);
    auto checks = ParseSelfCheckOutput(PassingOutput(names), profile);
    ASSERT_TRUE(checks.ok()) << checks.error().ToString();
    ASSERT_EQ(checks->size(), names.size() + 1);
    EXPECT_EQ(checks->back().name, dropped);
    EXPECT_FALSE(checks->back().passed);
    EXPECT_EQ(checks->back().detail, "the self-check did not report this check");
  }
}

TEST(SelfCheckTest, AGvisorRunIsIncompleteForTheContainerProfilesAndTheReverse) {
  // gVisor's run has no proc_masked: under kLinux and kOciRunc it fails.
  std::string gvisor_run = PassingOutput(SelfCheckNames(SelfCheckProfile::kGvisor));
  for (SelfCheckProfile profile : {SelfCheckProfile::kLinux, SelfCheckProfile::kOciRunc}) {
    auto checks = ParseSelfCheckOutput(gvisor_run, profile);
    ASSERT_TRUE(checks.ok());
    ASSERT_FALSE(checks->empty());
    EXPECT_EQ(checks->back().name, "proc_masked");
    EXPECT_FALSE(checks->back().passed);
  }
  auto checks = ParseSelfCheckOutput(PassingOutput(SelfCheckNames()), SelfCheckProfile::kGvisor);
  ASSERT_TRUE(checks.ok());
  std::set<std::string> failed;
  for (const EvidenceCheck& check : *checks) {
    if (!check.passed) failed.insert(check.name);
  }
  EXPECT_EQ(failed,
            (std::set<std::string>{"guest_kernel_is_gvisor", "host_kernel_interfaces_absent"}));
}

TEST(SelfCheckTest, ALineThatIsNotACheckIsAnError) {
  for (SelfCheckProfile profile : kAllProfiles) {
    for (const char* line : {"Traceback (most recent call last):\n",
                             R"({"name": "pids_limit", "passed": "yes", "detail": ""})",
                             R"({"name": "pids_limit", "passed": true})", "[1, 2]"}) {
      EXPECT_FALSE(ParseSelfCheckOutput(std::string(line), profile).ok()) << line;
    }
  }
}

}  // namespace
}  // namespace plimsoll::os
