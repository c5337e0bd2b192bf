// Sessions (SPEC §9): what a kept sandbox must do whatever its tier, on
// every provider under test whose describe says it keeps sessions; every
// other provider must refuse to open one as `unsupported` (nothing ran).
// Neither part skips: a provider is in one or the other by what it claims.
#include "plimsoll/session.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "conformance/conformance.h"
#include "plimsoll/record.h"

namespace plimsoll::conformance {
namespace {

using namespace std::chrono_literals;

// The providers under test whose description says they keep sessions
// (construction and Describe are cheap and start nothing); with
// `os_level`, only those that also run projects (files and processes).
std::vector<std::string> ProvidersKeepingSessions(bool keeping, bool os_level = false) {
  std::vector<std::string> chosen;
  for (const std::string& name : ProvidersUnderTest()) {
    auto sandbox = Sandbox::Open(name);
    if (!sandbox.ok()) continue;
    Description description = sandbox->Describe();
    const auto& payloads = description.capabilities.payloads;
    bool projects =
        std::find(payloads.begin(), payloads.end(), PayloadKind::kProject) != payloads.end();
    if (description.capabilities.sessions == keeping && (!os_level || projects)) {
      chosen.push_back(name);
    }
  }
  return chosen;
}

class SessionConformanceTest : public ConformanceTest {
 protected:
  std::unique_ptr<Session> Open(SessionOptions options = {}) {
    auto session = sandbox().OpenSession(options);
    EXPECT_TRUE(session.ok()) << session.error().ToString();
    return session.ok() ? std::move(*session) : nullptr;
  }

  // Runs a cell; fails the test if it was refused.
  Result Cell(Session& session, const std::string& language, const std::string& code,
              int64_t timeout_ms = 0) {
    Request request;
    request.timeout_ms = timeout_ms;
    request.cell = CellPayload{language, code};
    auto result = session.Run(request);
    EXPECT_TRUE(result.ok()) << result.error().ToString();
    if (result.ok()) {
      EXPECT_TRUE(result->cell.has_value());
    }
    return result.ok() ? *result : Result{};
  }

  std::vector<std::string> Languages() const {
    std::vector<std::string> languages = {"javascript"};
    if (Accepts(PayloadKind::kPython)) languages.push_back("python");
    return languages;
  }
};

TEST_P(SessionConformanceTest, AJavascriptCellsDisplaysAreThatCellsAndCapped) {
  auto session = Open();
  ASSERT_TRUE(session);
  Result many = Cell(*session, "javascript", "for (let i = 0; i < 20; i++) display('n' + i)");
  EXPECT_EQ(many.exit_code, 0) << many.stderr_bytes;
  ASSERT_EQ(many.displays.size(), kMaxDisplays);
  EXPECT_EQ(many.displays[15].data, "n15");
  EXPECT_TRUE(many.displays_truncated);
  Result next = Cell(*session, "javascript", "display('<i>next</i>', 'text/html')");
  EXPECT_EQ(next.exit_code, 0) << next.stderr_bytes;
  ASSERT_EQ(next.displays.size(), 1u) << "the previous cell's displays came back again";
  EXPECT_EQ(next.displays[0].data, "<i>next</i>");
  EXPECT_FALSE(next.displays_truncated);
}

TEST_P(SessionConformanceTest, VariablesAreKeptFromCellToCell) {
  auto session = Open();
  ASSERT_TRUE(session);
  for (const std::string& language : Languages()) {
    SCOPED_TRACE(language);
    Result first = Cell(*session, language, language == "python" ? "x = 41" : "var x = 41");
    EXPECT_EQ(first.exit_code, 0) << first.stderr_bytes;
    EXPECT_TRUE(first.cell->interpreter_started);
    EXPECT_FALSE(first.cell->value.has_value());
    Result second = Cell(*session, language, "x + 1");
    EXPECT_EQ(second.exit_code, 0) << second.stderr_bytes;
    EXPECT_FALSE(second.cell->interpreter_started);
    EXPECT_TRUE(second.cell->state_kept);
    EXPECT_EQ(second.cell->value, "42");
    EXPECT_EQ(second.kind, PayloadKind::kCell);
    EXPECT_EQ(second.isolation, session->Info().isolation);
  }
}

TEST_P(SessionConformanceTest, AnExceptionKeepsTheInterpreterAndItsVariables) {
  auto session = Open();
  ASSERT_TRUE(session);
  for (const std::string& language : Languages()) {
    SCOPED_TRACE(language);
    const bool python = language == "python";
    Cell(*session, language, python ? "kept = 7" : "var kept = 7");
    Result thrown =
        Cell(*session, language,
             python ? "raise ValueError('on purpose')" : "throw new Error('on purpose')");
    EXPECT_EQ(thrown.exit_code, 1);
    EXPECT_NE(thrown.stderr_bytes.find("on purpose"), std::string::npos) << thrown.stderr_bytes;
    EXPECT_TRUE(thrown.cell->state_kept);
    Result after = Cell(*session, language, "kept");
    EXPECT_FALSE(after.cell->interpreter_started);
    EXPECT_EQ(after.cell->value, "7");
  }
}

TEST_P(SessionConformanceTest, ADeadlineRestartsTheInterpreterAndTheNextCellSaysSo) {
  auto session = Open();
  ASSERT_TRUE(session);
  for (const std::string& language : Languages()) {
    SCOPED_TRACE(language);
    const bool python = language == "python";
    Cell(*session, language, python ? "lost = 1" : "var lost = 1");
    Result busy = Cell(*session, language, python ? "while True: pass" : "for (;;) {}",
                       EmulationScaledMs(300));
    EXPECT_EQ(busy.exit_code, 124);
    EXPECT_TRUE(busy.timed_out);
    EXPECT_FALSE(busy.cell->state_kept);
    Result fresh = Cell(*session, language, python ? "'lost' in globals()" : "typeof lost");
    EXPECT_TRUE(fresh.cell->interpreter_started);
    EXPECT_EQ(fresh.cell->value, python ? "False" : "'undefined'");
  }
}

TEST_P(SessionConformanceTest, ChainedRecordsVerifyAndTheCloseNamesTheLast) {
  auto session = Open();
  ASSERT_TRUE(session);
  ChainState chain{SessionIdDigest(session->id()), 0, ""};
  for (int i = 1; i <= 3; ++i) {
    Request sent;
    sent.cell = CellPayload{"javascript", "globalThis.n = (globalThis.n ?? 0) + 1"};
    auto result = session->Run(sent);
    ASSERT_TRUE(result.ok()) << result.error().ToString();
    Status checked = CheckExchange(sent, *result, &chain);
    EXPECT_TRUE(checked.ok()) << checked.error().ToString();
    EXPECT_EQ(result->cell->value, std::to_string(i));
  }
  SessionClose closed = session->Close();
  EXPECT_EQ(closed.calls, 3);
  EXPECT_EQ(closed.last_record_sha256, chain.last_record_sha256);
  // A call after the close runs nothing and says why.
  Request late;
  late.cell = CellPayload{"javascript", "1"};
  auto refused = session->Run(late);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(NotDispatchedReason(refused.error()).has_value());
}

TEST_P(SessionConformanceTest, AThirdConcurrentCallIsRefusedCapacity) {
  auto session = Open();
  ASSERT_TRUE(session);
  Cell(*session, "javascript", "1");  // the interpreter is up before the race
  std::thread first([&] {
    Cell(*session, "javascript", "await new Promise(r => setTimeout(r, 1000)); 1", 10'000);
  });
  for (int i = 0; i < 500 && !session->Info().busy; ++i) std::this_thread::sleep_for(2ms);
  std::thread second([&] { Cell(*session, "javascript", "2", 10'000); });
  for (int i = 0; i < 500 && !session->Info().queued; ++i) std::this_thread::sleep_for(2ms);
  ASSERT_TRUE(session->Info().queued);
  Request third;
  third.cell = CellPayload{"javascript", "3"};
  auto refused = session->Run(third);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(NotDispatchedReason(refused.error()), NotDispatched::kCapacity);
  first.join();
  second.join();
  EXPECT_EQ(session->Info().calls, 3);
}

TEST_P(SessionConformanceTest, AFloorAboveTheSessionsTierIsRefusedBeforeAnythingRuns) {
  auto session = Open();
  ASSERT_TRUE(session);
  const Tier tier = session->Info().isolation;
  if (tier == Tier::kVm) GTEST_SKIP() << "no tier above vm to ask for";
  Request request;
  request.minimum_isolation = "vm";
  request.cell = CellPayload{"javascript", "globalThis.ran = true"};
  auto refused = session->Run(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(NotDispatchedReason(refused.error()), NotDispatched::kIsolation);
  EXPECT_EQ(Cell(*session, "javascript", "typeof ran").cell->value, "'undefined'");
}

// Sessions in an OS-level sandbox: files in /work and processes (the
// embedded provider has neither, so it is not instantiated here).
using OsSessionConformanceTest = SessionConformanceTest;

TEST_P(OsSessionConformanceTest, FilesInWorkAreKeptFromCallToCall) {
  auto session = Open();
  ASSERT_TRUE(session);
  Result wrote = Cell(*session, "python", "open('kept.txt', 'w').write('from call 1')");
  EXPECT_EQ(wrote.exit_code, 0) << wrote.stderr_bytes;
  Request step;
  step.python = PythonPayload{"print(open('kept.txt').read())"};
  auto read = session->Run(step);
  ASSERT_TRUE(read.ok()) << read.error().ToString();
  EXPECT_EQ(read->stdout_bytes, "from call 1\n") << read->stderr_bytes;
  EXPECT_FALSE(read->cell.has_value());
  // Expected difference: under gVisor /work lives in gVisor's own memory,
  // and in a VM in the guest kernel's, which the host cannot measure
  // (docs/sessions.md); they report 0 and /work's size bounds it.
  bool measured = description().provider != "microvm";
  for (const auto& [key, value] : description().details) {
    if (key == "runtime" && value == "runsc") measured = false;
  }
  if (measured) {
    EXPECT_GT(session->Info().disk_used_bytes, 0);
  }
}

TEST_P(OsSessionConformanceTest, ABackgroundProcessOfOneCallIsGoneAtTheNext) {
  auto session = Open();
  ASSERT_TRUE(session);
  // Call 2 leaves `sleep 1000 &` behind (and one in a session of its own).
  Cell(*session, "python", "import os, subprocess");
  Result left = Cell(*session, "python",
                     "os.system('sleep 1000 &')\n"
                     "p = subprocess.Popen(['setsid', 'sleep', '1000'])\n"
                     "import time; time.sleep(0.05)\n"
                     "p.poll() is None");
  EXPECT_EQ(left.cell->value, "True") << left.stderr_bytes;
  // Call 3 looks for it from inside: the guest's uid sees its own processes.
  Result looked = Cell(*session, "python",
                       "[p for p in os.listdir('/proc') if p.isdigit() and b'sleep' in "
                       "open(f'/proc/{p}/cmdline', 'rb').read()]");
  EXPECT_EQ(looked.cell->value, "[]") << looked.stderr_bytes;
  EXPECT_FALSE(looked.cell->interpreter_started);
}

using NoSessionsTest = ConformanceTest;

TEST_P(NoSessionsTest, OpeningASessionIsRefusedUnsupportedAndNothingRuns) {
  ASSERT_FALSE(description().capabilities.sessions);
  auto session = sandbox().OpenSession(SessionOptions{});
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(NotDispatchedReason(session.error()), NotDispatched::kUnsupported)
      << session.error().ToString();
}

INSTANTIATE_TEST_SUITE_P(Providers, SessionConformanceTest,
                         ::testing::ValuesIn(ProvidersKeepingSessions(true)));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SessionConformanceTest);
INSTANTIATE_TEST_SUITE_P(Providers, OsSessionConformanceTest,
                         ::testing::ValuesIn(ProvidersKeepingSessions(true, /*os_level=*/true)));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OsSessionConformanceTest);
INSTANTIATE_TEST_SUITE_P(Providers, NoSessionsTest,
                         ::testing::ValuesIn(ProvidersKeepingSessions(false)));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NoSessionsTest);

}  // namespace
}  // namespace plimsoll::conformance
