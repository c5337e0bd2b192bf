// `plimsoll session`'s chain file, without a daemon: what a command does
// with a file it cannot believe, before it sends anything. The commands
// against a real daemon are tests/integration/cli_daemon_test.sh and, for
// the session's floor, session_floor_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_test_support.h"
#include "cli/exit_status.h"
#include "plimsoll/record.h"

namespace plimsoll::cli {
namespace {

using ::testing::HasSubstr;

constexpr char kId[] = "0123456789abcdef0123456789abcdef";
// Nothing listens on port 1: a command that got as far as sending would be
// refused `capacity` (exit 3), not data_loss.
constexpr char kNowhere[] = "http://127.0.0.1:1";

class SessionCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "plimsoll-session-XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    state_ = pattern;
    ASSERT_EQ(mkdir((state_ + "/sessions").c_str(), 0700), 0);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(state_, ignored);
  }

  void WriteChainFile(const std::string& floor_line) {
    std::ofstream file(state_ + "/sessions/" + SessionIdDigest(kId));
    file << "daemon " << kNowhere << "\nsession_sha256 " << SessionIdDigest(kId)
         << "\nlast_sequence 0\nlast_record_sha256 -\n"
         << floor_line;
  }

  Outcome RunCell() {
    return Invoke({"session", "run", "--daemon", kNowhere, "--state-dir", state_, kId, "-e", "1"});
  }

  std::string state_;
};

TEST_F(SessionCommandTest, AFloorThatIsNotATierIsADamagedFileAndNothingIsSent) {
  // An edited floor must not loosen the check (nor pass unread).
  for (const char* floor : {"floor bogus\n", "floor none\n", "floor unknown\n"}) {
    SCOPED_TRACE(floor);
    WriteChainFile(floor);
    Outcome cell = RunCell();
    EXPECT_EQ(cell.status, kExitMayHaveRun) << cell.err;
    EXPECT_THAT(cell.err, HasSubstr("data_loss"));
    EXPECT_THAT(cell.err, HasSubstr("is damaged"));
  }
}

TEST_F(SessionCommandTest, AFileWithAFloorOrNoneIsReadAndTheCellSent) {
  // `floor -` (opened without --floor) and a file from before the floor was
  // kept are read; the command then sends, and finds nobody listening.
  for (const char* floor : {"floor -\n", "floor container\n", ""}) {
    SCOPED_TRACE(floor);
    WriteChainFile(floor);
    Outcome cell = RunCell();
    EXPECT_EQ(cell.status, kExitNothingRan) << cell.err;
    EXPECT_THAT(cell.err, HasSubstr("capacity"));
  }
}

}  // namespace
}  // namespace plimsoll::cli
