// Sessions (SPEC §9) under attack: a kept sandbox lives across calls, so a
// cell gets more than one chance at the agent. A cell must not reach the
// agent's channel (the descriptor that carries the report key), must not
// get a report of its own making taken for the agent's, and must not leave
// a process running past its answer. Instantiated for the providers under
// test whose describe says they keep sessions.
#include <algorithm>

#include "hostile/hostile.h"
#include "plimsoll/session.h"

namespace plimsoll::hostile {
namespace {

class HostileSessionTest : public HostileTest {
 protected:
  void SetUp() override {
    HostileTest::SetUp();
    if (IsSkipped() || HasFailure()) return;
    ASSERT_TRUE(description().capabilities.sessions);
    auto session = sandbox().OpenSession(SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.error().ToString();
    session_ = std::move(*session);
  }

  Result Cell(const std::string& code) {
    Request request;
    request.timeout_ms = 10'000;
    request.cell = CellPayload{"python", Substitute(code)};
    auto result = session_->Run(request);
    if (!result.ok()) {
      ADD_FAILURE() << result.error().ToString();
      return Result{};
    }
    return *result;
  }

  std::unique_ptr<Session> session_;
};

TEST_P(HostileSessionTest, ACellCannotReachTheAgentsChannel) {
  // The agent is pid 2 under its init (or 1); its channel is its fd 3. The
  // cell's own process holds only its interpreter's pipes (at 100 and up).
  Result result = Cell(
      "import os, errno\n"
      "seen = []\n"
      "for pid in (1, 2):\n"
      "    for what in ('fd/3', 'fdinfo/3', 'mem', 'environ'):\n"
      "        try:\n"
      "            open(f'/proc/{pid}/{what}', 'rb').read(1)\n"
      "            seen.append(f'{pid}/{what}: opened')\n"
      "        except OSError as e:\n"
      "            seen.append(f'{pid}/{what}: {errno.errorcode[e.errno]}')\n"
      "low = [fd for fd in range(3, 100) if os.path.exists(f'/proc/self/fd/{fd}')]\n"
      "(seen, low)");
  ASSERT_TRUE(result.cell && result.cell->value) << result.stderr_bytes;
  const std::string& value = *result.cell->value;
  // The channel (and the key in the agent's memory) stay out of reach on
  // every tier.
  for (const char* secret : {"1/fd/3: opened", "2/fd/3: opened", "1/mem: opened", "2/mem: opened"}) {
    EXPECT_EQ(value.find(secret), std::string::npos) << value;
  }
  // Expected difference: gVisor's /proc lets any process read another's
  // environ and fdinfo (it does not apply dumpable to them, as in a one-off
  // run); the agent's environment holds PATH, HOME and LANG, and fdinfo a
  // descriptor's flags, nothing secret.
  if (!UnderGvisor(description())) {
    EXPECT_EQ(value.find("opened"), std::string::npos) << value;
  }
  EXPECT_NE(value.find("], [])"), std::string::npos)
      << "the interpreter has descriptors below 100 (its channel must be moved): " << value;
}

TEST_P(HostileSessionTest, AReportACellPrintsIsOnlyItsOutput) {
  // The bytes of a report frame, then a seal of the right length, on the
  // cell's stdout and stderr: they come back as output, nothing more.
  Result result = Cell(
      "import sys\n"
      "fake = b'\\x00\\x00\\x00\\x5c' + b'{\"version\":1,\"outcome\":\"completed\",\"steps\":[],"
      "\"artifacts\":[],\"detail\":\"\",\"cell\":{\"value\":\"forged\"}}' + b'\\x00\\x00\\x00\\x40' "
      "+ b'f' * 64\n"
      "sys.stdout.buffer.write(fake); sys.stdout.flush()\n"
      "sys.stderr.buffer.write(fake); sys.stderr.flush()\n"
      "'honest'");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  ASSERT_TRUE(result.cell.has_value());
  EXPECT_EQ(result.cell->value, "'honest'");
  EXPECT_NE(result.stdout_bytes.find("forged"), std::string::npos);
  // The chain holds: the next call is answered and counted.
  Result next = Cell("1 + 1");
  EXPECT_EQ(next.cell->value, "2");
  EXPECT_EQ(session_->Info().calls, 2);
}

TEST_P(HostileSessionTest, NoProcessOfACellOutlivesItsAnswer) {
  // Every way out a process has: the background, a new session, a double
  // fork, a daemon thread that forks after the answer. {TOKEN} rides on each
  // argv, so the host can look for them.
  Result result = Cell(
      "import os, subprocess, threading, time\n"
      "os.system('sleep 1000 {TOKEN} &')\n"
      "subprocess.Popen(['setsid', 'sleep', '1000', '{TOKEN}'])\n"
      "if os.fork() == 0:\n"
      "    if os.fork() == 0:\n"
      "        os.setsid(); os.execvp('sleep', ['sleep', '1000', '{TOKEN}'])\n"
      "    os._exit(0)\n"
      "def later():\n"
      "    time.sleep(0.2)\n"
      "    subprocess.Popen(['sleep', '1000', '{TOKEN}', 'late'])\n"
      "threading.Thread(target=later, daemon=True).start()\n"
      "time.sleep(0.05)");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(HostProcessesCarrying(Host().token), std::vector<std::string>{});
  // The thread is stopped with its interpreter: 0.5 s later there is still none.
  usleep(500'000);
  EXPECT_EQ(HostProcessesCarrying(Host().token), std::vector<std::string>{});
  Result next = Cell("'still here'");
  EXPECT_FALSE(next.cell->interpreter_started);
  EXPECT_EQ(HostProcessesCarrying(Host().token), std::vector<std::string>{});
  // From inside too (a VM's processes are not the host's): the guest's uid
  // sees its own processes, and none of call 1's carries the token. (The
  // thread's `late` one is left out: the thread runs again once its
  // interpreter does, as docs/sessions.md says, so it may start it during
  // this very call; the host checks above cover it.)
  Result inside = Cell(
      "import os\n"
      "def argv(p):\n"
      "    try:\n"
      "        return open(f'/proc/{p}/cmdline', 'rb').read()\n"
      "    except OSError:\n"
      "        return b''\n"
      "[p for p in os.listdir('/proc') if p.isdigit() and b'{TOKEN}' in argv(p)\n"
      "    and not argv(p).endswith(b'late\\0')]");
  ASSERT_TRUE(inside.cell && inside.cell->value) << inside.stderr_bytes;
  EXPECT_EQ(*inside.cell->value, "[]");
}

// The OS-level providers under test (they run projects) that claim
// sessions; Describe starts nothing.
std::vector<std::string> ProvidersKeepingSessions() {
  std::vector<std::string> chosen;
  for (const std::string& name : ProvidersUnderTest()) {
    auto sandbox = Sandbox::Open(name);
    if (!sandbox.ok()) continue;
    Description description = sandbox->Describe();
    const auto& payloads = description.capabilities.payloads;
    if (description.capabilities.sessions &&
        std::find(payloads.begin(), payloads.end(), PayloadKind::kProject) != payloads.end()) {
      chosen.push_back(name);
    }
  }
  return chosen;
}

INSTANTIATE_TEST_SUITE_P(Providers, HostileSessionTest,
                         ::testing::ValuesIn(ProvidersKeepingSessions()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HostileSessionTest);

}  // namespace
}  // namespace plimsoll::hostile
