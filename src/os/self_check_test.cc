// The self-check must be able to fail: each profile's program, run outside
// any wall (as root, on the bare host), reports every wall check failed, and
// the seccomp check is not fooled by a filter that is not our policy (an
// allow-all filter, or one that denies only the calls an older check probed,
// both show "Seccomp: 2"). Under our real policy the same check passes.
#include "os/self_check.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "os/seccomp.h"

namespace plimsoll::os {
namespace {

// Limits no host matches by chance: a /tmp of exactly this size, 4 pids.
Limits OddLimits() {
  Limits limits;
  limits.tmp_bytes = 12'345 * 1024;
  limits.work_bytes = 23'456 * 1024;
  limits.pids = 4;
  return limits;
}

std::string FindPython() {
  for (const char* path : {"/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

// Runs the profile's self-check project directly on the host (no namespace,
// no cgroup), as this process's user, under `filter` when given. Returns
// its stdout, or nullopt (with a gtest failure) when it could not run.
std::optional<std::string> RunOnBareHost(SelfCheckProfile profile,
                                         const std::vector<sock_filter>* filter) {
  ProjectPayload project = SelfCheckProject(OddLimits(), profile);
  char pattern[] = "/tmp/plimsoll-self-check-test-XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    return std::nullopt;
  }
  const std::string directory = pattern;
  for (const ProjectFile& file : project.files) {
    std::ofstream(directory + "/" + file.path, std::ios::binary) << file.content;
  }
  std::vector<std::string> step = project.steps.at(0);
  step[0] = FindPython();
  std::vector<char*> argv;
  for (std::string& argument : step) argv.push_back(argument.data());
  argv.push_back(nullptr);
  sock_fprog program{};
  if (filter) {
    program.len = static_cast<unsigned short>(filter->size());
    program.filter = const_cast<sock_filter*>(filter->data());
  }
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2 failed";
    return std::nullopt;
  }
  bool probe_existed = access("/plimsoll-probe", F_OK) == 0;
  pid_t child = fork();
  if (child == 0) {
    dup2(out[1], STDOUT_FILENO);
    if (chdir(directory.c_str()) != 0) _exit(120);
    if (filter && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
                   syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0)) {
      _exit(121);
    }
    execv(argv[0], argv.data());
    _exit(122);
  }
  close(out[1]);
  std::string output;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (char buffer[4096];;) {
    pollfd ready{out[0], POLLIN, 0};
    if (poll(&ready, 1, 1000) == 0) {
      if (std::chrono::steady_clock::now() > give_up) {
        kill(child, SIGKILL);
        break;
      }
      continue;
    }
    ssize_t n = read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    output.append(buffer, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  // The root_read_only probe succeeds on the bare host: leave / as it was.
  if (!probe_existed) unlink("/plimsoll-probe");
  for (const ProjectFile& file : project.files) unlink((directory + "/" + file.path).c_str());
  rmdir(directory.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ADD_FAILURE() << "the self-check exited with status " << status << "; stdout:\n" << output;
    return std::nullopt;
  }
  return output;
}

std::string Skip() {
  if (geteuid() != 0) return "skipped: needs root (the bare host must be seen as root sees it)";
  if (FindPython().empty()) return "skipped: no python3 on the host";
  return "";
}

bool HostHasOtherInterfaces() {
  std::ifstream dev("/proc/net/dev");
  std::string line;
  int row = 0;
  while (std::getline(dev, line)) {
    if (++row <= 2) continue;
    std::string name = line.substr(0, line.find(':'));
    name.erase(0, name.find_first_not_of(' '));
    if (name != "lo") return true;
  }
  return false;
}

bool HostHasRoutes() {
  std::ifstream route("/proc/net/route");
  std::string header, entry;
  std::getline(route, header);
  return static_cast<bool>(std::getline(route, entry)) && !entry.empty();
}

std::vector<EvidenceCheck> ChecksOf(const std::string& output, SelfCheckProfile profile) {
  auto checks = ParseSelfCheckOutput(output, profile);
  EXPECT_TRUE(checks.ok()) << (checks.ok() ? "" : checks.error().ToString());
  return checks.ok() ? *checks : std::vector<EvidenceCheck>{};
}

const EvidenceCheck* Find(const std::vector<EvidenceCheck>& checks, const std::string& name) {
  for (const EvidenceCheck& check : checks) {
    if (check.name == name) return &check;
  }
  return nullptr;
}

class BareHostSelfCheckTest : public ::testing::TestWithParam<SelfCheckProfile> {};

TEST_P(BareHostSelfCheckTest, EveryWallCheckFailsOutsideAnyWall) {
  if (std::string why = Skip(); !why.empty()) GTEST_SKIP() << why;
  SelfCheckProfile profile = GetParam();
  auto output = RunOnBareHost(profile, nullptr);
  ASSERT_TRUE(output.has_value());
  std::vector<EvidenceCheck> checks = ChecksOf(*output, profile);
  ASSERT_EQ(checks.size(), SelfCheckNames(profile).size()) << *output;
  bool network_profile =
      profile == SelfCheckProfile::kGvisor || profile == SelfCheckProfile::kMicrovm;
  for (const EvidenceCheck& check : checks) {
    // Host-dependent: a host with only lo (and no route) is not walled in,
    // but these two checks cannot tell. Every other check must fail.
    if (check.name == "loopback_only" && !HostHasOtherInterfaces()) continue;
    if (check.name == "no_route_out" && network_profile && !HostHasRoutes()) continue;
    EXPECT_FALSE(check.passed) << check.name << " passed on the bare host: " << check.detail;
  }
}

INSTANTIATE_TEST_SUITE_P(Profiles, BareHostSelfCheckTest,
                         ::testing::Values(SelfCheckProfile::kLinux, SelfCheckProfile::kOciRunc,
                                           SelfCheckProfile::kGvisor, SelfCheckProfile::kMicrovm),
                         [](const auto& profile) {
                           switch (profile.param) {
                             case SelfCheckProfile::kLinux:
                               return std::string("linux");
                             case SelfCheckProfile::kOciRunc:
                               return std::string("oci_runc");
                             case SelfCheckProfile::kGvisor:
                               return std::string("gvisor");
                             case SelfCheckProfile::kMicrovm:
                               return std::string("microvm");
                           }
                           return std::string("unknown");
                         });

// A filter that returns `errno_value` for `denied` calls and allows the rest
// (x86_64 only; the tests run there).
std::vector<sock_filter> DenyOnly(const std::vector<int>& denied, int errno_value) {
  std::vector<sock_filter> filter;
  filter.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  for (int number : denied) {
    filter.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(number), 0, 1));
    filter.push_back(BPF_STMT(BPF_RET | BPF_K,
                              SECCOMP_RET_ERRNO | (static_cast<uint32_t>(errno_value) & 0xffff)));
  }
  filter.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return filter;
}

const EvidenceCheck SeccompCheckUnder(const std::vector<sock_filter>& filter) {
  auto output = RunOnBareHost(SelfCheckProfile::kLinux, &filter);
  if (!output) return {"seccomp_filter", true, "the self-check did not run"};
  std::vector<EvidenceCheck> checks = ChecksOf(*output, SelfCheckProfile::kLinux);
  const EvidenceCheck* check = Find(checks, "seccomp_filter");
  return check ? *check : EvidenceCheck{"seccomp_filter", true, "not reported"};
}

TEST(SeccompSelfCheckTest, AnAllowAllFilterDoesNotPass) {
  if (std::string why = Skip(); !why.empty()) GTEST_SKIP() << why;
  EvidenceCheck check = SeccompCheckUnder(DenyOnly({}, EPERM));
  EXPECT_NE(check.detail.find("Seccomp: 2"), std::string::npos) << check.detail;
  EXPECT_FALSE(check.passed) << check.detail;
}

TEST(SeccompSelfCheckTest, AFilterDenyingOnlyTheProbedCallsDoesNotPass) {
  if (std::string why = Skip(); !why.empty()) GTEST_SKIP() << why;
  // The five calls the check once probed, denied with EPERM, everything
  // else allowed: "Seccomp: 2" and five EPERMs, but no deny-by-default policy.
  EvidenceCheck check =
      SeccompCheckUnder(DenyOnly({SYS_unshare, SYS_mount, SYS_ptrace, SYS_keyctl, SYS_bpf}, EPERM));
  EXPECT_NE(check.detail.find("Seccomp: 2"), std::string::npos) << check.detail;
  EXPECT_FALSE(check.passed) << check.detail;
}

TEST(SeccompSelfCheckTest, OurPolicyPasses) {
  if (std::string why = Skip(); !why.empty()) GTEST_SKIP() << why;
  auto policy = ParseSeccompPolicy(BuiltInSeccompPolicyText());
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  auto program = CompileSeccompPolicy(*policy);
  ASSERT_TRUE(program.ok()) << program.error().ToString();
  EvidenceCheck check = SeccompCheckUnder(program->instructions);
  EXPECT_TRUE(check.passed) << check.detail;
}

}  // namespace
}  // namespace plimsoll::os
