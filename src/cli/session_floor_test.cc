// `plimsoll session` against an on-path rewriter (issue 39 item 4): each
// `plimsoll session run` is a new process with a new Client, so the floor
// the session was opened with must travel in the CLI's chain file; a cell
// answer whose tier was lowered below it (every digest recomputed, the chain
// still linking) is data_loss, exit 4.
//
// The real plimsolld binary on the linux provider (tier container), with
// tests/clients/adversary.py in front: its `lower_tier` mode passes a
// session's open (201) as it is and lowers every later answer one tier. The
// CLI runs in-process (cli::Main), with its own state directory.
//
// Needs root and the guest image (PLIMSOLL_IMAGE, set by CTest): skipped
// without them, and failed instead when PLIMSOLL_REQUIRE_PROVIDERS lists
// linux (tests/common/host_preconditions.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/cli_test_support.h"
#include "cli/exit_status.h"
#include "common/host_preconditions.h"
#include "linux_behind_adversary.h"
#include "plimsoll/record.h"

namespace plimsoll::cli {
namespace {

using ::testing::HasSubstr;

// A fresh directory, removed at the end.
class TempDirectory {
 public:
  TempDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "plimsoll-cli-floor-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class CliSessionFloorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PLIMSOLL_REQUIRE_HOST("linux");
    served_.emplace();
    ASSERT_TRUE(served_->problem().empty()) << served_->problem();
    proxy_url_ = served_->proxy_url();
  }

  void TearDown() override {
    if (served_) EXPECT_EQ(served_->StopDaemon(), 0) << "plimsolld did not stop cleanly";
  }

  // `plimsoll session ACTION --daemon URL --state-dir STATE ARGS...`.
  Outcome Session(const std::string& action, const std::string& url,
                  std::vector<std::string> args = {}) {
    std::vector<std::string> argv = {"session", action,        "--daemon",
                                     url,       "--state-dir", state_.path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return Invoke(argv);
  }

  std::optional<daemon::testing::LinuxDaemonBehindAdversary> served_;
  std::string proxy_url_;
  TempDirectory state_;
};

TEST_F(CliSessionFloorTest, TheFloorIsKeptInTheChainFileAndAnHonestCellMeetsIt) {
  const std::string url = proxy_url_ + "/pass";
  Outcome opened = Session("open", url, {"--floor", "container"});
  ASSERT_EQ(opened.status, kExitRanOk) << opened.err;
  const std::string id = opened.out.substr(0, opened.out.find('\n'));
  ASSERT_EQ(id.size(), 32u) << opened.out;
  EXPECT_THAT(ReadFile(state_.path() + "/sessions/" + SessionIdDigest(id)),
              HasSubstr("\nfloor container\n"));

  Outcome cell = Session("run", url, {id, "-e", "6 * 7"});
  EXPECT_EQ(cell.status, kExitRanOk) << cell.err;
  EXPECT_THAT(cell.out, HasSubstr("isolation:  container"));
  EXPECT_THAT(cell.out, HasSubstr("\n42\n"));

  Outcome closed = Session("close", url, {id});
  EXPECT_EQ(closed.status, kExitRanOk) << closed.err;
  EXPECT_THAT(closed.out, HasSubstr("session closed after 1 call(s)"));
}

TEST_F(CliSessionFloorTest, ACellLoweredBelowTheSessionsFloorIsDataLossExit4) {
  // The proxy passes the open as it is (tier container, the floor met) and
  // lowers every later answer to process with every digest recomputed: only
  // the session's floor, which this `run` did not ask for, can catch it.
  const std::string url = proxy_url_ + "/lower_tier/cli-session-floor";
  Outcome opened = Session("open", url, {"--floor", "container"});
  ASSERT_EQ(opened.status, kExitRanOk) << opened.err;
  EXPECT_THAT(opened.err, HasSubstr("tier container"));
  const std::string id = opened.out.substr(0, opened.out.find('\n'));
  ASSERT_EQ(id.size(), 32u) << opened.out;

  Outcome cell = Session("run", url, {id, "-e", "6 * 7"});
  EXPECT_EQ(cell.status, kExitMayHaveRun) << "out: " << cell.out << "\nerr: " << cell.err;
  EXPECT_THAT(cell.err, HasSubstr("data_loss"));
  EXPECT_THAT(cell.err, HasSubstr("below the floor \"container\" the session was opened with"));
  EXPECT_THAT(cell.out, ::testing::Not(HasSubstr("42")));

  // The answer was not believed, so the chain did not advance.
  Outcome listed = Invoke({"session", "list", "--state-dir", state_.path()});
  EXPECT_EQ(listed.status, kExitRanOk) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr(SessionIdDigest(id) + "  " + url + "  0 call(s)"));
}

}  // namespace
}  // namespace plimsoll::cli
