// Jail uid leases: one uid per live VM, across processes, freed on close,
// skipping uids a live process runs as.
#include "providers/microvm/jail_uid.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

namespace plimsoll::microvm {
namespace {

class JailUidTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/plimsoll-jail-uid-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    range_.lock_directory = std::string(pattern) + "/locks";
    range_.base = 700000;
    range_.count = 3;
  }
  void TearDown() override {
    std::error_code error;
    std::filesystem::remove_all(std::filesystem::path(range_.lock_directory).parent_path(), error);
  }
  UidRange range_;
};

TEST_F(JailUidTest, EachLiveLeaseHasItsOwnUidUntilReleased) {
  std::vector<UidLease> leases;
  for (uid_t expected : {700000u, 700001u, 700002u}) {
    auto lease = LeaseJailUid(range_, {});
    ASSERT_TRUE(lease.ok()) << lease.error().message();
    EXPECT_EQ(lease->uid(), expected);
    leases.push_back(std::move(*lease));
  }
  auto exhausted = LeaseJailUid(range_, {});
  ASSERT_FALSE(exhausted.ok());
  EXPECT_EQ(exhausted.error().code(), ErrorCode::kResourceExhausted);
  leases.erase(leases.begin() + 1);  // 700001 is free again, its file gone
  EXPECT_FALSE(std::filesystem::exists(range_.lock_directory + "/700001"));
  EXPECT_TRUE(std::filesystem::exists(range_.lock_directory + "/700002"));
  auto again = LeaseJailUid(range_, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->uid(), 700001u);
  leases.clear();
  again = LeaseJailUid(range_, {700001});  // move-assigned: the old lease released
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->uid(), 700000u);
  EXPECT_FALSE(std::filesystem::exists(range_.lock_directory + "/700001"));
  EXPECT_FALSE(std::filesystem::exists(range_.lock_directory + "/700002"));
}

// A moved lease releases once (when its last owner goes), and the released
// uid is leased again on a fresh file. (The open/flock race with a releasing
// holder is handled by the inode check in LeaseJailUid; it cannot be forced
// from here.)
TEST_F(JailUidTest, AMovedLeaseReleasesOnceAndTheUidIsLeasedAgain) {
  auto first = LeaseJailUid(range_, {});
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->uid(), 700000u);
  {
    UidLease released = std::move(*first);  // then destroyed: file unlinked
  }
  auto second = LeaseJailUid(range_, {});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->uid(), 700000u);
  EXPECT_TRUE(std::filesystem::exists(range_.lock_directory + "/700000"));
}

TEST_F(JailUidTest, SkipsUidsInUse) {
  auto lease = LeaseJailUid(range_, {700000, 700001});
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->uid(), 700002u);
  EXPECT_EQ(UidsInUse().count(getuid()), 1u);
}

TEST_F(JailUidTest, AnotherProcessesLeaseIsRespectedAndDiesWithIt) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lease = LeaseJailUid(range_, {});
    char byte = lease.ok() && lease->uid() == 700000 ? 'y' : 'n';
    (void)!write(ready[1], &byte, 1);
    pause();
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  EXPECT_EQ(byte, 'y');
  auto mine = LeaseJailUid(range_, {});
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->uid(), 700001u);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  auto freed = LeaseJailUid(range_, {});
  ASSERT_TRUE(freed.ok());
  EXPECT_EQ(freed->uid(), 700000u);
  close(ready[0]);
  close(ready[1]);
}

}  // namespace
}  // namespace plimsoll::microvm
