// plimsoll-trial, the built command, end to end.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "runner/unprivileged_for_tests.h"

namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout then stderr
};

Outcome RunShell(const std::string& command) {
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) outcome.output.append(buffer, got);
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

class TrialMainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/plimsoll-trial-main-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
    ASSERT_EQ(chmod(pattern, 0777), 0);  // for Unprivileged()
    std::ofstream(directory_ + "/controller.py")
        << "import sys\n"
           "for line in iter(sys.stdin.readline, ''):\n"
           "    x, v, th, om = map(float, line.split())\n"
           "    print(repr(40 * th + 5 * om + x + v), flush=True)\n";
  }
  void TearDown() override { std::system(("rm -rf " + directory_).c_str()); }

  // Where a sandbox runs the runner: as an unprivileged user. (As root it
  // refuses: RootIsRefused.)
  static std::string Unprivileged() {
    if (geteuid() != 0) return "";
    const std::string id = std::to_string(plimsoll::sims::testing::kUnprivilegedId);
    return "setpriv --reuid " + id + " --regid " + id + " --clear-groups ";
  }

  std::string Command(const std::string& scenario, const std::string& as = Unprivileged()) {
    std::ofstream(directory_ + "/scenario.json") << scenario;
    return as + std::string(PLIMSOLL_TRIAL_BINARY) + " --plant cartpole --scenario " + directory_ +
           "/scenario.json --trajectory " + directory_ + "/trajectory.f64 -- python3 " +
           directory_ + "/controller.py";
  }

  std::string directory_;
};

TEST_F(TrialMainTest, RunsATrialAndPrintsOneJsonLine) {
  const Outcome outcome = RunShell(Command(R"({"plant": "cartpole", "parameters": []})"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  ASSERT_FALSE(outcome.output.empty());
  EXPECT_EQ(outcome.output.find('\n'), outcome.output.size() - 1) << outcome.output;
  const nlohmann::json summary = nlohmann::json::parse(outcome.output, nullptr, false);
  ASSERT_FALSE(summary.is_discarded()) << outcome.output;
  EXPECT_EQ(summary["ended"], "finished");
  EXPECT_EQ(summary["ticks"], 2000);
  EXPECT_EQ(summary["score"], 20.0);
  EXPECT_EQ(summary["trajectory_bytes"], 80000);
  EXPECT_EQ(access((directory_ + "/scenario.json").c_str(), F_OK), -1);
}

TEST_F(TrialMainTest, ExitsNonZeroWithAMessageWhenTheTrialCannotRun) {
  // Usage errors: 2.
  EXPECT_EQ(RunShell(std::string(PLIMSOLL_TRIAL_BINARY) + " 2>&1").exit_code, 2);
  EXPECT_EQ(
      RunShell(std::string(PLIMSOLL_TRIAL_BINARY) + " --plant cartpole --bogus 1 2>&1").exit_code,
      2);
  const std::string without_controller =
      std::string(PLIMSOLL_TRIAL_BINARY) + " --plant cartpole --scenario x --trajectory y 2>&1";
  EXPECT_EQ(RunShell(without_controller).exit_code, 2);
  EXPECT_EQ(
      RunShell(std::string(PLIMSOLL_TRIAL_BINARY) + " --plant cartpole -- true 2>&1").exit_code, 2)
      << "no --trajectory";
  // A refused scenario: 3, one line on stderr.
  const Outcome refused = RunShell(Command(R"({"parameters": [0, 0, 2, 0]})") + " 2>&1");
  EXPECT_EQ(refused.exit_code, 3);
  EXPECT_NE(refused.output.find("refused the scenario"), std::string::npos) << refused.output;
  // A controller that cannot start: 4.
  std::ofstream(directory_ + "/scenario.json") << R"({"parameters": []})";
  const Outcome unstartable =
      RunShell(Unprivileged() + PLIMSOLL_TRIAL_BINARY + " --plant cartpole --scenario " +
               directory_ + "/scenario.json --trajectory " + directory_ + "/t.f64 -- " +
               directory_ + "/no-such-controller 2>&1");
  EXPECT_EQ(unstartable.exit_code, 4) << unstartable.output;
  EXPECT_NE(unstartable.output.find("could not be started"), std::string::npos)
      << unstartable.output;
}

TEST_F(TrialMainTest, WithoutAScenarioFileThePlantsDefaultRuns) {
  const Outcome outcome =
      RunShell(Unprivileged() + PLIMSOLL_TRIAL_BINARY + " --plant cartpole --trajectory " +
               directory_ + "/trajectory.f64 -- python3 " + directory_ + "/controller.py");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const nlohmann::json summary = nlohmann::json::parse(outcome.output, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << outcome.output;
  EXPECT_EQ(summary["scenario_sha256"],
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(summary["fingerprint"],
            "8ba38f43b0a9067f49641258ae2e2555724e3eaad2fba84017746c7e849a5304");
}

TEST_F(TrialMainTest, RootIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: a root runner is what must be refused";
  const Outcome refused = RunShell(Command(R"({"parameters": []})", "") + " 2>&1");
  EXPECT_EQ(refused.exit_code, 4) << refused.output;
  EXPECT_NE(refused.output.find("can read it ("), std::string::npos) << refused.output;
  EXPECT_EQ(access((directory_ + "/scenario.json").c_str(), F_OK), 0) << "nothing was read";
}

}  // namespace
