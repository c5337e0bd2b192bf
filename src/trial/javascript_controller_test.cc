// Trials with the controller in this process on the engine (the embedded
// tier's way): the same endings and, above all, the same fingerprints as
// the same JavaScript on qjs as a child process (trial_test.cc) and on every
// tier (conformance ExamTest).
#include "trial/javascript_controller.h"

#include <gtest/gtest.h>

#include <string>

#include "trial/trial.h"

namespace plimsoll::trial {
namespace {

using namespace std::chrono_literals;

constexpr char kAcceptedFingerprint[] =
    "8ba38f43b0a9067f49641258ae2e2555724e3eaad2fba84017746c7e849a5304";
constexpr char kDraftFingerprint[] =
    "baa2dfc23c6401607d77e1ceba0efe8c60ca0ec19f110c91d68b2e61615b1b81";

InProcessTrial Trial(const std::string& script,
                     std::chrono::milliseconds deadline = kAnswerDeadline,
                     std::string* printed = nullptr) {
  Expected<InProcessTrial> trial =
      RunTrialInProcess("cartpole", {}, deadline, Deadline::max(),
                        [&] { return InProcessJavascriptController::Start(script, printed); });
  EXPECT_TRUE(trial.ok()) << trial.error().ToString();
  return trial.ok() ? *trial : InProcessTrial{};
}

std::string Ended(const InProcessTrial& trial) {
  return std::string(TrialEndName(trial.summary.ended));
}

TEST(InProcessTrial, TheAcceptedAndTheDraftGiveTheSameFingerprintsAsEverywhere) {
  const InProcessTrial accepted =
      Trial("function control(x, v, theta, omega) { return 40 * theta + 5 * omega + x + v; }");
  EXPECT_EQ(Ended(accepted), "finished");
  EXPECT_EQ(accepted.summary.ticks, 2000);
  EXPECT_EQ(accepted.summary.fingerprint, kAcceptedFingerprint);
  EXPECT_EQ(accepted.trajectory.size(), accepted.summary.trajectory_bytes);
  const InProcessTrial draft =
      Trial("function control(x, v, theta, omega) { return 40 * theta + 5 * omega - x - v; }");
  EXPECT_EQ(Ended(draft), "failed");
  EXPECT_EQ(draft.summary.ticks, 799);
  EXPECT_EQ(draft.summary.ended_at_seconds, 7.99);
  EXPECT_EQ(draft.summary.fingerprint, kDraftFingerprint);
}

TEST(InProcessTrial, BadControllersEndTheTrialAsTheyWouldAsAProcess) {
  std::string printed;
  EXPECT_EQ(Ended(Trial("throw new Error('at load')", kAnswerDeadline, &printed)),
            "controller_exited");
  EXPECT_NE(printed.find("at load"), std::string::npos) << printed;
  EXPECT_EQ(Ended(Trial("let nothing = 1;")), "controller_exited");
  const InProcessTrial thrower =
      Trial("let n = 0; function control() { if (++n == 5) throw new Error('x'); return 0; }");
  EXPECT_EQ(Ended(thrower), "controller_exited");
  EXPECT_EQ(thrower.summary.ticks, 4);
  EXPECT_EQ(Ended(Trial("function control() { return NaN; }")), "non_finite");
  EXPECT_EQ(Ended(Trial("function control() { return undefined; }")), "malformed");
  EXPECT_EQ(Ended(Trial("function control() { return [1, 2]; }")), "malformed");
  const InProcessTrial spinner =
      Trial("let n = 0; function control() { if (++n == 3) for (;;) {} return 0; }", 200ms);
  EXPECT_EQ(Ended(spinner), "late");
  EXPECT_EQ(spinner.summary.ticks, 2);
}

TEST(InProcessTrial, TheRunsDeadlineCutsATrialShortWithoutASummary) {
  const auto start = std::chrono::steady_clock::now();
  Expected<InProcessTrial> trial =
      RunTrialInProcess("cartpole", {}, kAnswerDeadline, start + 300ms, [] {
        return InProcessJavascriptController::Start(
            "let n = 0; function control() { if (++n == 10) for (;;) {} return 0; }", nullptr);
      });
  ASSERT_FALSE(trial.ok());
  EXPECT_EQ(trial.error().code(), ErrorCode::kDeadlineExceeded);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
}

TEST(InProcessTrial, WhatTheControllerPrintsIsKeptApart) {
  std::string printed;
  auto started = InProcessJavascriptController::Start(
      "function control(x) { console.log('x', x); return 0; }", &printed);
  ASSERT_TRUE(started.ok());
  std::string line;
  const double state[] = {0.5, 0, 0, 0};
  ASSERT_EQ((*started)->Converse(state, std::chrono::steady_clock::now() + 2s, &line),
            Exchange::kAnswered);
  EXPECT_EQ(line, "0");
  EXPECT_EQ(printed, "x 0.5\n");
}

}  // namespace
}  // namespace plimsoll::trial
