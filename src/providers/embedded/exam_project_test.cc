// Exam projects on the embedded provider, at the edges: what is refused
// (nothing ran), usage errors as plimsoll-trial reports them, the run's
// deadline, the artifacts. The trials themselves, on every tier, are
// conformance ExamTest's.
#include "providers/embedded/exam_project.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace plimsoll {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr char kAccepted[] =
    "function control(x, v, theta, omega) { return 40 * theta + 5 * omega + x + v; }";

ProjectPayload Exam(std::vector<std::string> controller, std::string script = kAccepted,
                    std::vector<std::string> artifacts = {"trajectory.f64"}) {
  std::vector<std::string> step = {"plimsoll-trial", "--plant",        "cartpole",
                                   "--trajectory",   "trajectory.f64", "--"};
  step.insert(step.end(), controller.begin(), controller.end());
  return ProjectPayload{{{"controller.js", std::move(script)}}, {step}, std::move(artifacts)};
}

TEST(ExamProject, OnlyOnePlimsollTrialStepIsAnExam) {
  EXPECT_TRUE(IsExamProject(Exam({"qjs", "--controller", "controller.js"})));
  ProjectPayload two = Exam({"qjs", "--controller", "controller.js"});
  two.steps.push_back({"true"});
  EXPECT_FALSE(IsExamProject(two));
  EXPECT_FALSE(IsExamProject(ProjectPayload{{}, {{"node", "a.js"}}, {}}));
}

TEST(ExamProject, ControllersOtherThanQjsAreRefusedWithNothingRun) {
  for (const auto& controller :
       std::vector<std::vector<std::string>>{{"python3", "controller.py"},
                                             {"qjs", "controller.js"},
                                             {"qjs", "--controller", "controller.js", "-x"}}) {
    Expected<Result> result = RunExamProject(Exam(controller), Clock::now() + 5s, Limits{});
    ASSERT_FALSE(result.ok()) << controller[0];
    EXPECT_EQ(result.error().not_dispatched(), NotDispatched::kUnsupported);
  }
}

// A build command (a C controller's compile, --build) runs an image
// program: refused, even with a qjs controller after it.
TEST(ExamProject, ABuildCommandIsRefusedWithNothingRun) {
  ProjectPayload project = Exam({"qjs", "--controller", "controller.js"});
  project.steps[0] = {"plimsoll-trial", "--plant", "cartpole", "--trajectory", "trajectory.f64",
                      "--build",        "true",    "--",       "qjs",          "--controller",
                      "controller.js"};
  ASSERT_TRUE(IsExamProject(project));
  Expected<Result> result = RunExamProject(project, Clock::now() + 5s, Limits{});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().not_dispatched(), NotDispatched::kUnsupported);
  EXPECT_NE(result.error().message().find("--build"), std::string::npos)
      << result.error().message();
}

TEST(ExamProject, UsageErrorsAreExitTwoAsFromTheCommand) {
  ProjectPayload project = Exam({"qjs", "--controller", "controller.js"});
  project.steps[0] = {"plimsoll-trial", "--plant", "cartpole", "--bogus", "1", "--", "qjs"};
  Expected<Result> result = RunExamProject(project, Clock::now() + 5s, Limits{});
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->exit_code, 2);
  EXPECT_NE(result->stderr_bytes.find("unknown option --bogus"), std::string::npos)
      << result->stderr_bytes;
  EXPECT_NE(result->stderr_bytes.find("usage: plimsoll-trial"), std::string::npos);
}

TEST(ExamProject, TheTrajectoryIsTheOnlyArtifactThere) {
  Expected<Result> result =
      RunExamProject(Exam({"/usr/local/bin/qjs", "--controller", "/work/controller.js"}, kAccepted,
                          {"./trajectory.f64", "other"}),
                     Clock::now() + 30s, Limits{});
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->exit_code, 0) << result->stderr_bytes;
  ASSERT_EQ(result->artifacts.size(), 1u);
  EXPECT_EQ(result->artifacts[0].path, "./trajectory.f64");
  EXPECT_EQ(result->artifacts[0].content.size(), 2000u * 5 * 8);
  ASSERT_EQ(result->steps.size(), 1u);
  EXPECT_EQ(result->steps[0].stdout_bytes, result->stdout_bytes);
  EXPECT_EQ(result->outcome, ProjectOutcome::kCompleted);
}

TEST(ExamProject, TheRunsDeadlineTimesTheStepOut) {
  for (const char* script : {"for (;;) {}", "function control() { for (;;) {} }"}) {
    const Clock::time_point start = Clock::now();
    Expected<Result> result = RunExamProject(Exam({"qjs", "--controller", "controller.js"}, script),
                                             start + 300ms, Limits{});
    ASSERT_TRUE(result.ok()) << result.error().ToString();
    EXPECT_EQ(result->exit_code, 124) << script << ": " << result->stderr_bytes;
    EXPECT_TRUE(result->timed_out);
    EXPECT_EQ(result->outcome, ProjectOutcome::kTimedOut);
    EXPECT_EQ(result->stdout_bytes, "");
    EXPECT_LT(Clock::now() - start, 2s) << script;
  }
}

}  // namespace
}  // namespace plimsoll
