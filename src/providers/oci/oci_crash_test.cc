// Crash recovery of the `oci` provider, for runc, crun and runsc: a provider
// with a full warm pool is SIGKILLed, and a new provider with the same state
// directory must leave nothing of it after Reconcile() (no container under
// the runtime's state root, no bundle, no cgroup of those containers, no
// process naming the state directory).
//
// The provider that crashes runs in a child process forked first thing in
// main(), before gtest or anything else could start a thread; each child
// waits until its test tells it to go (and exits when the pipe closes
// unused, e.g. when its test is filtered out or skipped).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "plimsoll/provider.h"
#include "providers/oci/oci_provider.h"
#include "providers/oci/oci_test_support.h"

namespace plimsoll {
namespace {

using namespace std::chrono_literals;
using oci::RuntimeKind;
using namespace oci::testing;

constexpr char kGo = 'G';
constexpr char kReady = 'R';
constexpr char kFailed = 'F';

std::string StateDirFor(pid_t parent, RuntimeKind kind) {
  return "/run/plimsoll-test-oci-crash-" + std::to_string(parent) + "-" + RuntimeName(kind);
}

OciSettings SettingsFor(RuntimeKind kind, const std::string& state_dir) {
  OciSettings settings;
  settings.runtime = kind;
  settings.runtime_options.state_dir = state_dir;
  settings.pool_size = 2;
  return settings;
}

// One forked child per runtime, as the parent sees it.
struct CrashChild {
  RuntimeKind kind = RuntimeKind::kRunc;
  pid_t pid = -1;
  int go = -1;     // write end: kGo starts the child
  int ready = -1;  // read end: kReady, or kFailed and a message
  std::string state_dir;
};

std::vector<CrashChild>& Children() {
  static std::vector<CrashChild> children;
  return children;
}

[[noreturn]] void Report(int fd, char what, const std::string& message) {
  std::string text(1, what);
  text += message;
  (void)!write(fd, text.data(), text.size());
  _exit(what == kReady ? 0 : 1);
}

// The child's whole life: wait for the go, make a provider with a pool of
// two, confirm the wall, wait until the pool is full, say so, then wait to
// be killed.
[[noreturn]] void ChildMain(RuntimeKind kind, const std::string& state_dir, int go, int ready) {
  char byte = 0;
  ssize_t got;
  do {
    got = read(go, &byte, 1);
  } while (got < 0 && errno == EINTR);
  if (got != 1 || byte != kGo) _exit(0);  // not needed
  close(go);
  auto provider = MakeOciProvider(Limits{}, SettingsFor(kind, state_dir));
  auto evidence = provider->SmokeTest(TestClock::now() + 180s);
  if (!evidence.ok()) Report(ready, kFailed, "SmokeTest: " + evidence.error().ToString());
  if (!evidence->AllChecksPassed()) Report(ready, kFailed, "SmokeTest: " + evidence->summary);
  std::string detail;
  if (!WaitForPool(
          *provider, 120s, [](const PoolCounts& c) { return c.ready == 2; }, &detail)) {
    Report(ready, kFailed, "the pool did not fill: " + detail);
  }
  (void)!write(ready, &kReady, 1);
  for (;;) pause();  // until SIGKILL
}

void ForkCrashChildren() {
  const pid_t parent = getpid();
  for (RuntimeKind kind : AllRuntimes()) {
    int go[2], ready[2];
    if (pipe2(go, O_CLOEXEC) != 0 || pipe2(ready, O_CLOEXEC) != 0) {
      perror("pipe2");
      std::exit(2);
    }
    CrashChild child{kind, -1, go[1], ready[0], StateDirFor(parent, kind)};
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      std::exit(2);
    }
    if (pid == 0) {
      // Only this child's ends stay open, so a closed pipe means "not needed".
      for (const CrashChild& earlier : Children()) {
        close(earlier.go);
        close(earlier.ready);
      }
      close(go[1]);
      close(ready[0]);
      ChildMain(kind, child.state_dir, go[0], ready[1]);
    }
    close(go[0]);
    close(ready[1]);
    child.pid = pid;
    Children().push_back(child);
  }
}

// Closes every child's go pipe (an unused child then exits) and reaps them.
void ReleaseCrashChildren() {
  for (CrashChild& child : Children()) {
    if (child.go >= 0) close(child.go);
    child.go = -1;
    if (child.ready >= 0) close(child.ready);
    child.ready = -1;
    if (child.pid > 0) {
      int status = 0;
      // A child that was started but not killed (a failed assertion) ends here.
      kill(child.pid, SIGKILL);
      waitpid(child.pid, &status, 0);
      child.pid = -1;
    }
  }
}

CrashChild* ChildFor(RuntimeKind kind) {
  for (CrashChild& child : Children()) {
    if (child.kind == kind) return &child;
  }
  return nullptr;
}

// Reads the child's answer: "" once it is ready, else what went wrong.
std::string AwaitReady(CrashChild& child, std::chrono::seconds bound) {
  auto give_up = TestClock::now() + bound;
  std::string answer;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - TestClock::now());
    if (left.count() <= 0) return "the child did not get ready in time";
    pollfd entry{child.ready, POLLIN, 0};
    int polled = poll(&entry, 1, static_cast<int>(left.count()));
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) continue;
    char buffer[4096];
    ssize_t got = read(child.ready, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // the child exited
    answer.append(buffer, static_cast<size_t>(got));
    if (answer[0] == kReady) return "";
  }
  if (answer.empty()) return "the child exited without a word";
  return answer.substr(1);
}

class OciCrashTest : public ::testing::TestWithParam<RuntimeKind> {};

TEST_P(OciCrashTest, ReconcileAfterACrashWithAFullPoolLeavesNothing) {
  RuntimeKind kind = GetParam();
  CrashChild* child = ChildFor(kind);
  ASSERT_NE(child, nullptr);
  ASSERT_GT(child->pid, 0) << "each crash child serves one test (no --gtest_repeat)";
  if (::plimsoll::testing::HostVerdict host = ::plimsoll::testing::JudgeHost(HostParameter(kind));
      !host.message.empty()) {
    std::filesystem::remove_all(child->state_dir);
    if (host.fail) FAIL() << host.message;
    GTEST_SKIP() << host.message;
  }
  struct RemoveStateDir {
    std::string path;
    ~RemoveStateDir() {
      std::error_code error;
      std::filesystem::remove_all(path, error);
    }
  } remove_state_dir{child->state_dir};
  auto runtime = Probe(kind, child->state_dir);
  ASSERT_TRUE(runtime.ok()) << runtime.error().ToString();
  BundleWatch watch(runtime->bundles_dir());
  ASSERT_TRUE(watch.ok());

  ASSERT_EQ(write(child->go, &kGo, 1), 1);
  std::string failure = AwaitReady(*child, 240s);
  ASSERT_EQ(failure, "") << "the crashing provider's child";
  // The pooled containers run.
  std::vector<std::string> running = ListedContainers(*runtime);
  EXPECT_GE(running.size(), 2u) << Join(running);

  ASSERT_EQ(kill(child->pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child->pid, &status, 0), child->pid);
  child->pid = -1;
  std::cout << "left by the crash: " << Leftovers(*runtime, child->state_dir, watch) << "\n";

  auto provider = MakeOciProvider(Limits{}, SettingsFor(kind, child->state_dir));
  Status reconciled = provider->Reconcile();
  EXPECT_TRUE(reconciled.ok()) << reconciled.error().ToString();
  EXPECT_EQ(WaitUntilNothingLeft(*runtime, child->state_dir, watch, 20s), "");
  EXPECT_GE(watch.Ids().size(), 2u);  // the watch saw the containers it judged
  provider.reset();
  EXPECT_EQ(Leftovers(*runtime, child->state_dir, watch), "");
}

std::string ParamName(const ::testing::TestParamInfo<RuntimeKind>& param) {
  return RuntimeName(param.param);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, OciCrashTest,
                         ::testing::Values(RuntimeKind::kRunc, RuntimeKind::kCrun,
                                           RuntimeKind::kRunsc),
                         ParamName);

}  // namespace
}  // namespace plimsoll

int main(int argc, char** argv) {
  // Before anything else: no thread exists yet, so the children are clean
  // copies of a single-threaded process.
  plimsoll::ForkCrashChildren();
  ::testing::InitGoogleTest(&argc, argv);
  int result = RUN_ALL_TESTS();
  plimsoll::ReleaseCrashChildren();
  return result;
}
