// plimsoll-trial, the built command, end to end.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "trial/unprivileged_for_tests.h"

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
    const std::string id = std::to_string(plimsoll::trial::testing::kUnprivilegedId);
    return "setpriv --reuid " + id + " --regid " + id + " --clear-groups ";
  }

  // The scenario file, written as the user the runner runs as (it takes a
  // scenario file of its own user only).
  void WriteScenario(const std::string& scenario) {
    std::ofstream(directory_ + "/scenario.json") << scenario;
    EXPECT_TRUE(plimsoll::trial::testing::GiveToUnprivileged(directory_ + "/scenario.json"));
  }

  std::string Command(const std::string& scenario, const std::string& as = Unprivileged()) {
    WriteScenario(scenario);
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
  WriteScenario(R"({"parameters": []})");
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

// --build (build_command.h): the command runs after the scenario file is
// gone and before the controller starts, with stdin /dev/null and its
// output on the runner's stderr; whatever it left in its process group is
// killed before the controller starts.
TEST_F(TrialMainTest, TheBuildRunsAfterTheScenarioIsGoneAndBeforeTheController) {
  const std::string scenario = directory_ + "/scenario.json";
  std::ofstream(directory_ + "/build.py")
      << "import os, subprocess, sys\n"
         "child = subprocess.Popen(['sleep', '60'])\n"
         "with open("
      << nlohmann::json(directory_ + "/built.txt").dump()
      << ", 'w') as f:\n"
         "    f.write('scenario %s, stdin %r, sleeper %d' % (\n"
         "        'present' if os.path.lexists("
      << nlohmann::json(scenario).dump()
      << ") else 'gone',\n"
         "        sys.stdin.read(), child.pid))\n"
         "print('build says hello on stdout', flush=True)\n"
         "print('build says hello on stderr', file=sys.stderr, flush=True)\n";
  // The controller: the accepted law, once it found what the build made.
  std::ofstream(directory_ + "/controller.py")
      << "import os, sys\n"
         "if not os.path.exists("
      << nlohmann::json(directory_ + "/built.txt").dump()
      << "):\n"
         "    sys.exit(9)\n"
         "for line in iter(sys.stdin.readline, ''):\n"
         "    x, v, th, om = map(float, line.split())\n"
         "    print(repr(40 * th + 5 * om + x + v), flush=True)\n";
  WriteScenario(R"({"parameters": []})");
  const std::string command = Unprivileged() + PLIMSOLL_TRIAL_BINARY +
                              " --plant cartpole --scenario " + scenario + " --trajectory " +
                              directory_ + "/t.f64 --build python3 " + directory_ +
                              "/build.py -- python3 " + directory_ + "/controller.py";
  const Outcome stdout_only = RunShell(command + " 2>" + directory_ + "/stderr.txt");
  ASSERT_EQ(stdout_only.exit_code, 0) << stdout_only.output;
  // stdout: the summary line alone (the build's stdout went to stderr).
  EXPECT_EQ(stdout_only.output.find('\n'), stdout_only.output.size() - 1) << stdout_only.output;
  const nlohmann::json summary = nlohmann::json::parse(stdout_only.output, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << stdout_only.output;
  EXPECT_EQ(summary["ended"], "finished");
  std::ifstream stderr_file(directory_ + "/stderr.txt");
  const std::string errors((std::istreambuf_iterator<char>(stderr_file)),
                           std::istreambuf_iterator<char>());
  EXPECT_NE(errors.find("build says hello on stdout"), std::string::npos) << errors;
  EXPECT_NE(errors.find("build says hello on stderr"), std::string::npos) << errors;
  std::ifstream built_file(directory_ + "/built.txt");
  const std::string built((std::istreambuf_iterator<char>(built_file)),
                          std::istreambuf_iterator<char>());
  EXPECT_EQ(built.rfind("scenario gone, stdin '', sleeper ", 0), 0u) << built;
  // The sleeper it left in its process group did not outlive the build.
  const std::string sleeper = built.substr(built.rfind(' ') + 1);
  std::ifstream stat_file("/proc/" + sleeper + "/stat");
  std::string stat;
  std::getline(stat_file, stat);
  EXPECT_TRUE(stat.empty() || stat.find(") Z ") != std::string::npos)
      << "the build's sleeper " << sleeper << " still runs: " << stat;
}

TEST_F(TrialMainTest, AFailedBuildExits5AndStartsNoController) {
  std::ofstream(directory_ + "/controller.py")
      << "open(" << nlohmann::json(directory_ + "/started.txt").dump() << ", 'w').close()\n";
  const std::string scenario = directory_ + "/scenario.json";
  const std::string runner = Unprivileged() + PLIMSOLL_TRIAL_BINARY +
                             " --plant cartpole --scenario " + scenario + " --trajectory " +
                             directory_ + "/t.f64 --build ";
  const std::string controller = " -- python3 " + directory_ + "/controller.py 2>&1";

  WriteScenario(R"({"parameters": []})");
  const Outcome failed =
      RunShell(runner + "sh -c 'echo controller.c:1:1: error: nope >&2; exit 1'" + controller);
  EXPECT_EQ(failed.exit_code, 5) << failed.output;
  EXPECT_NE(failed.output.find("controller.c:1:1: error: nope"), std::string::npos)
      << failed.output;
  EXPECT_NE(failed.output.find("plimsoll-trial: The build command sh exited 1"), std::string::npos)
      << failed.output;
  EXPECT_EQ(failed.output.find("\"ended\""), std::string::npos) << "no summary";
  EXPECT_EQ(access((directory_ + "/started.txt").c_str(), F_OK), -1) << "a controller started";
  EXPECT_EQ(access(scenario.c_str(), F_OK), -1) << "the scenario file is still there";

  WriteScenario(R"({"parameters": []})");
  const Outcome killed = RunShell(runner + "sh -c 'kill -9 $$'" + controller);
  EXPECT_EQ(killed.exit_code, 5) << killed.output;
  EXPECT_NE(killed.output.find("was killed by signal 9"), std::string::npos) << killed.output;

  WriteScenario(R"({"parameters": []})");
  const Outcome missing = RunShell(runner + directory_ + "/no-such-compiler" + controller);
  EXPECT_EQ(missing.exit_code, 5) << missing.output;
  EXPECT_NE(missing.output.find("could not be started"), std::string::npos) << missing.output;
  EXPECT_EQ(access((directory_ + "/started.txt").c_str(), F_OK), -1) << "a controller started";

  // A refused scenario builds nothing.
  WriteScenario(R"({"parameters": [0, 0, 2, 0]})");
  const Outcome refused = RunShell(runner + "python3 -c 'open(\"" + directory_ +
                                   "/started.txt\", \"w\")'" + controller);
  EXPECT_EQ(refused.exit_code, 3) << refused.output;
  EXPECT_EQ(access((directory_ + "/started.txt").c_str(), F_OK), -1) << "the build ran";

  // Usage: --build needs a command and a controller after it.
  EXPECT_EQ(RunShell(runner + "-- true 2>&1").exit_code, 2);
  EXPECT_EQ(RunShell(runner + "make 2>&1").exit_code, 2);
}

TEST_F(TrialMainTest, RootIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: a root runner is what must be refused";
  const Outcome refused = RunShell(Command(R"({"parameters": []})", "") + " 2>&1");
  EXPECT_EQ(refused.exit_code, 4) << refused.output;
  EXPECT_NE(refused.output.find("can read it ("), std::string::npos) << refused.output;
  EXPECT_EQ(access((directory_ + "/scenario.json").c_str(), F_OK), 0) << "nothing was read";
}

}  // namespace
