#include "engine/session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace plimsoll::engine {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class JavascriptSessionTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(SessionLimits{}); }

  void Open(const SessionLimits& limits) {
    auto session = JavascriptSession::Start(limits);
    ASSERT_TRUE(session.ok()) << session.error().ToString();
    session_ = std::move(*session);
  }

  CellOutcome Cell(std::string_view code, std::chrono::milliseconds timeout = 5s) {
    auto cell = session_->RunCell(code, std::chrono::steady_clock::now() + timeout);
    EXPECT_TRUE(cell.ok()) << cell.error().ToString();
    return cell.ok() ? *cell : CellOutcome{};
  }

  std::unique_ptr<JavascriptSession> session_;
};

TEST_F(JavascriptSessionTest, AnEmptyCellRunsAndHasNoValue) {
  CellOutcome empty = Cell(std::string_view());
  EXPECT_EQ(empty.outcome.exit_code, 0) << empty.outcome.stderr_bytes;
  EXPECT_FALSE(empty.value.has_value());
}

TEST_F(JavascriptSessionTest, VariablesLiveFromCellToCell) {
  EXPECT_FALSE(session_->interpreter_alive());
  CellOutcome first = Cell("let x = 41; var y = 'kept'; function twice(n) { return 2 * n }");
  EXPECT_EQ(first.outcome.exit_code, 0) << first.outcome.stderr_bytes;
  EXPECT_TRUE(first.interpreter_started);
  EXPECT_TRUE(first.state_kept);
  EXPECT_FALSE(first.value.has_value()) << *first.value;
  EXPECT_TRUE(session_->interpreter_alive());

  CellOutcome second = Cell("x += 1; console.log(y); twice(x)");
  EXPECT_EQ(second.outcome.exit_code, 0) << second.outcome.stderr_bytes;
  EXPECT_FALSE(second.interpreter_started);
  EXPECT_TRUE(second.state_kept);
  EXPECT_EQ(second.outcome.stdout_bytes, "kept\n");
  ASSERT_TRUE(second.value.has_value());
  EXPECT_EQ(*second.value, "84");
}

TEST_F(JavascriptSessionTest, EachCellHasItsOwnDisplaysAndCaps) {
  CellOutcome first = Cell("for (let i = 0; i < 20; i++) display('first ' + i)");
  EXPECT_EQ(first.outcome.exit_code, 0) << first.outcome.stderr_bytes;
  EXPECT_EQ(first.outcome.displays.size(), kMaxDisplays);
  EXPECT_TRUE(first.outcome.displays_truncated);
  CellOutcome second = Cell("display('<i>second</i>', 'text/html')");
  ASSERT_EQ(second.outcome.displays.size(), 1u) << "the first cell's displays came back again";
  EXPECT_EQ(second.outcome.displays[0], (Display{"text/html", "<i>second</i>"}));
  EXPECT_FALSE(second.outcome.displays_truncated) << "the caps are per cell";
  EXPECT_TRUE(Cell("1").outcome.displays.empty());
}

TEST_F(JavascriptSessionTest, TheValueIsPrintedAsAReplPrintsIt) {
  EXPECT_EQ(Cell("'text'").value, "'text'");
  EXPECT_EQ(Cell("({ a: 1, b: [1, 2] })").value, "{ a: 1, b: [ 1, 2 ] }");
  EXPECT_EQ(Cell("null").value, "null");
  EXPECT_EQ(Cell("10n ** 20n").value, "100000000000000000000n");
  EXPECT_FALSE(Cell("undefined").value.has_value());
  EXPECT_FALSE(Cell("if (true) {}").value.has_value());
  // An awaited promise gives its settled value, as in node's REPL.
  EXPECT_EQ(Cell("await new Promise(r => setTimeout(() => r(7), 5))").value, "7");
}

TEST_F(JavascriptSessionTest, AnExceptionKeepsTheInterpreterAndItsVariables) {
  Cell("const kept = [1, 2, 3]");
  CellOutcome thrown = Cell("kept.push(4); throw new TypeError('on purpose')");
  EXPECT_EQ(thrown.outcome.exit_code, 1);
  EXPECT_THAT(thrown.outcome.stderr_bytes, HasSubstr("TypeError: on purpose"));
  EXPECT_FALSE(thrown.value.has_value());
  EXPECT_TRUE(thrown.state_kept);
  CellOutcome after = Cell("kept.length");
  EXPECT_FALSE(after.interpreter_started);
  EXPECT_EQ(after.value, "4");
  // A rejected top-level await is the cell's own exception, too.
  EXPECT_EQ(Cell("await Promise.reject(new Error('nope'))").outcome.exit_code, 1);
  EXPECT_EQ(Cell("kept.length").value, "4");
}

TEST_F(JavascriptSessionTest, ASyntaxErrorIsAnExceptionAndKeepsState) {
  Cell("let n = 5");
  CellOutcome broken = Cell("n +* 2");
  EXPECT_EQ(broken.outcome.exit_code, 1);
  EXPECT_THAT(broken.outcome.stderr_bytes, HasSubstr("SyntaxError"));
  EXPECT_EQ(Cell("n").value, "5");
}

TEST_F(JavascriptSessionTest, ADeadlineThrowsTheInterpreterAwayAndTheNextCellSaysSo) {
  Cell("let lost = 1");
  CellOutcome busy = Cell("for (;;) {}", 100ms);
  EXPECT_EQ(busy.outcome.exit_code, 124);
  EXPECT_TRUE(busy.outcome.timed_out);
  EXPECT_FALSE(busy.state_kept);
  EXPECT_FALSE(session_->interpreter_alive());
  CellOutcome fresh = Cell("typeof lost");
  EXPECT_TRUE(fresh.interpreter_started);
  EXPECT_EQ(fresh.value, "'undefined'");
}

TEST_F(JavascriptSessionTest, TheMemoryLimitHoldsForTheWholeSession) {
  SessionLimits limits;
  limits.memory_bytes = size_t{16} << 20;
  Open(limits);
  // Each cell keeps 4 MiB more: one cell alone is well inside the limit,
  // together they are not.
  int last_exit = 0;
  int cells = 0;
  Cell("globalThis.hoard = []");
  while (cells < 20 && last_exit == 0) {
    last_exit = Cell("hoard.push(new Uint8Array(4 << 20).fill(1)); hoard.length").outcome.exit_code;
    ++cells;
  }
  EXPECT_EQ(last_exit, 137) << "after " << cells << " cells";
  EXPECT_LT(cells, 6);
  CellOutcome fresh = Cell("typeof hoard");
  EXPECT_TRUE(fresh.interpreter_started);
  EXPECT_EQ(fresh.value, "'undefined'");
}

TEST_F(JavascriptSessionTest, OutputIsPerCellAndTheValueIsCapped) {
  SessionLimits limits;
  limits.output_cap_bytes = 10;
  limits.value_cap_bytes = 8;
  Open(limits);
  CellOutcome first = Cell("console.log('0123456789abcdef'); 'é'.repeat(20)");
  EXPECT_EQ(first.outcome.stdout_bytes, "0123456789");
  EXPECT_TRUE(first.outcome.stdout_truncated);
  ASSERT_TRUE(first.value.has_value());
  EXPECT_TRUE(first.value_truncated);
  // 8 bytes are a quote and three and a half characters: cut at the whole one.
  EXPECT_EQ(*first.value, "'ééé");
  CellOutcome second = Cell("console.log('ok')");
  EXPECT_EQ(second.outcome.stdout_bytes, "ok\n");
  EXPECT_FALSE(second.outcome.stdout_truncated);
}

TEST_F(JavascriptSessionTest, ADiscardedInterpreterStartsFreshAndSaysSo) {
  Cell("var counter = 1");
  session_->DiscardInterpreter();
  EXPECT_FALSE(session_->interpreter_alive());
  CellOutcome fresh = Cell("typeof counter");
  EXPECT_TRUE(fresh.interpreter_started);
  EXPECT_EQ(fresh.value, "'undefined'");
}

TEST_F(JavascriptSessionTest, ManyCellsDoNotGrowTheInstance) {
  // Every cell's source is given back: 2 000 cells of 64 KiB each would need
  // 128 MiB if they were kept, far above this session's 16 MiB.
  SessionLimits limits;
  limits.memory_bytes = size_t{16} << 20;
  Open(limits);
  const std::string cell = "n = (globalThis.n ?? 0) + 1 /*" + std::string(64 << 10, 'x') + "*/";
  for (int i = 0; i < 2000; ++i) {
    CellOutcome outcome = Cell(cell);
    ASSERT_EQ(outcome.outcome.exit_code, 0) << "cell " << i << ": " << outcome.outcome.stderr_bytes;
    ASSERT_TRUE(outcome.state_kept);
  }
  EXPECT_EQ(Cell("n").value, "2000");
}

TEST_F(JavascriptSessionTest, CellsFromManyThreadsRunOneAtATime) {
  Cell("let total = 0");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this] {
      for (int i = 0; i < 25; ++i) {
        auto cell = session_->RunCell("total += 1", std::chrono::steady_clock::now() + 5s);
        EXPECT_TRUE(cell.ok() && cell->outcome.exit_code == 0);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(Cell("total").value, "100");
}

TEST_F(JavascriptSessionTest, OutOfRangeLimitsAreRefused) {
  SessionLimits limits;
  limits.memory_bytes = 1024;
  auto session = JavascriptSession::Start(limits);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(NotDispatchedReason(session.error()), NotDispatched::kRequest);
}

}  // namespace
}  // namespace plimsoll::engine
