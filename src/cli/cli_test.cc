#include "cli/cli.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli_test_support.h"
#include "cli/exit_status.h"

namespace plimsoll::cli {
namespace {

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("SANDBOX_PROVIDER"); }
};

TEST_F(CliTest, WithNoProviderNothingRunsAndTheRefusalSaysHowToChoose) {
  Outcome outcome = Invoke({"run", "-e", "console.log(1)"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_NE(outcome.err.find("nothing ran: unsupported: "), std::string::npos) << outcome.err;
  EXPECT_NE(outcome.err.find("--provider embedded"), std::string::npos) << outcome.err;
  EXPECT_EQ(outcome.out, "");
}

TEST_F(CliTest, AFloorAboveTheProviderIsAnIsolationRefusal) {
  Outcome outcome = Invoke({"run", "--floor", "vm", "-e", "console.log(1)"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_NE(outcome.err.find("nothing ran: isolation: "), std::string::npos) << outcome.err;
}

TEST_F(CliTest, AnUnknownFloorIsARequestRefusal) {
  Outcome outcome = Invoke({"run", "--floor", "strong", "-e", "1"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_NE(outcome.err.find("nothing ran: request: "), std::string::npos) << outcome.err;
}

TEST_F(CliTest, TheEnvironmentChoosesTheProviderAndTheFlagOverridesIt) {
  setenv("SANDBOX_PROVIDER", "no-such-provider", 1);
  Outcome outcome = Invoke({"run", "-e", "1"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_NE(outcome.err.find("Unknown provider \"no-such-provider\""), std::string::npos);
  EXPECT_NE(outcome.err.find("valid providers are: disabled"), std::string::npos);
  outcome = Invoke({"run", "--provider", "disabled", "-e", "1"});
  EXPECT_NE(outcome.err.find("nothing ran: unsupported"), std::string::npos) << outcome.err;
}

TEST_F(CliTest, JsonRefusalsCarryTheMark) {
  Outcome outcome = Invoke({"run", "--json", "-e", "1"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_NE(outcome.out.find("\"not_dispatched\":\"unsupported\""), std::string::npos)
      << outcome.out;
}

TEST_F(CliTest, UsageErrorsHaveTheirOwnStatus) {
  EXPECT_EQ(Invoke({}).status, kExitUsage);
  EXPECT_EQ(Invoke({"fly"}).status, kExitUsage);
  EXPECT_EQ(Invoke({"run", "--timeout", "soon"}).status, kExitUsage);
}

TEST_F(CliTest, ImageVariantsAreCheckedBeforeAnythingIsBuilt) {
  Outcome outcome = Invoke({"image", "build", "--variant", "no-such-variant"});
  EXPECT_EQ(outcome.status, kExitUsage);
  EXPECT_NE(outcome.err.find("no variant \"no-such-variant\""), std::string::npos) << outcome.err;
  for (const char* bad : {"../base", "Data", "-x", "current"}) {
    outcome = Invoke({"image", "build", "--variant", bad});
    EXPECT_EQ(outcome.status, kExitUsage) << bad;
    EXPECT_NE(outcome.err.find("is not a variant name"), std::string::npos) << bad << outcome.err;
  }
  outcome = Invoke({"image", "build", "--variant", "data", "--recipe", "/dev/null"});
  EXPECT_EQ(outcome.status, kExitUsage);
  EXPECT_NE(outcome.err.find("excludes"), std::string::npos) << outcome.err;
}

TEST_F(CliTest, SnippetArgumentsAreChecked) {
  Outcome outcome = Invoke({"run", "--provider", "disabled"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_NE(outcome.err.find("Nothing to run"), std::string::npos);
  outcome = Invoke({"run", "--lang", "ruby", "-e", "1"});
  EXPECT_NE(outcome.err.find("--lang must be"), std::string::npos);
  outcome = Invoke({"run", "--step", "ls", "-e", "1"});
  EXPECT_NE(outcome.err.find("need --project"), std::string::npos);
}

TEST_F(CliTest, ProjectsAreReadFromADirectory) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("plimsoll-cli-test-" + std::to_string(getpid()));
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "main.py") << "print(1)\n";
  std::ofstream(dir / "sub" / "data.txt") << "x";
  Outcome outcome = Invoke({"run", "--project", dir.string(), "--step", "python3 main.py"});
  EXPECT_EQ(outcome.status, kExitNothingRan);  // disabled: nothing ran
  EXPECT_NE(outcome.err.find("nothing ran: unsupported"), std::string::npos) << outcome.err;

  fs::create_symlink("/etc/passwd", dir / "link");
  outcome = Invoke({"run", "--project", dir.string(), "--step", "cat link"});
  EXPECT_NE(outcome.err.find("nothing ran: request: link in the project is a symbolic link"),
            std::string::npos)
      << outcome.err;
  outcome = Invoke({"run", "--project", (dir / "nope").string(), "--step", "ls"});
  EXPECT_NE(outcome.err.find("is not a directory"), std::string::npos) << outcome.err;
  fs::remove_all(dir);
}

TEST_F(CliTest, ModuleRunsReadTheirRowsAndPrintOneLineEach) {
  namespace fs = std::filesystem;
  const fs::path rows =
      fs::temp_directory_path() / ("plimsoll-cli-rows-" + std::to_string(getpid()));
  std::ofstream(rows) << "# x, v, theta, omega\n0, 0, 0.05, 0\n\n0,0,3,0\n";
  Outcome outcome = Invoke({"run", "--provider", "embedded", "--module", "cartpole", "--rows",
                            rows.string(), "--end-time", "1", "--tick", "0.01"});
  EXPECT_EQ(outcome.status, 0) << outcome.err << outcome.out;
  EXPECT_NE(outcome.out.find("rows (row,ended,ticks,time,score,final_state...):\n0,end_time,100,1"),
            std::string::npos)
      << outcome.out;
  EXPECT_NE(outcome.out.find("\n1,end_time,100,1"), std::string::npos) << "the empty line";
  EXPECT_NE(outcome.out.find("\n2,\"The model refused the row's parameters (out of range).\""),
            std::string::npos)
      << outcome.out;

  std::ofstream(rows) << "0,0,x,0\n";
  outcome = Invoke({"run", "--provider", "embedded", "--module", "cartpole", "--rows",
                    rows.string(), "--end-time", "1", "--tick", "0.01"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_NE(outcome.err.find("--rows line 1: \"x\" is not a decimal number"), std::string::npos)
      << outcome.err;
  outcome =
      Invoke({"run", "--provider", "embedded", "--module", "cartpole", "--rows", rows.string()});
  EXPECT_NE(outcome.err.find("--end-time SECONDS and --tick SECONDS"), std::string::npos);
  fs::remove(rows);
}

TEST_F(CliTest, VersionAndDescribe) {
  Outcome outcome = Invoke({"version"});
  EXPECT_EQ(outcome.status, kExitRanOk);
  EXPECT_NE(outcome.out.find("plimsoll "), std::string::npos);
  outcome = Invoke({"describe"});
  EXPECT_EQ(outcome.status, kExitRanOk);
  EXPECT_NE(outcome.out.find("provider:     disabled"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("isolation:    none"), std::string::npos) << outcome.out;
}

}  // namespace
}  // namespace plimsoll::cli
