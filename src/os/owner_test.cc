#include "os/owner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace plimsoll::os {
namespace {

TEST(OwnerTest, OurOwnTagIsAlive) {
  EXPECT_EQ(OwnerTag().rfind(std::to_string(getpid()) + "-", 0), 0u) << OwnerTag();
  EXPECT_TRUE(OwnerAlive(OwnerTag()));
  EXPECT_TRUE(OwnerAlive(OwnerTag() + "-0123abcd"));
  EXPECT_FALSE(LeftByDeadOwner(OwnerTag() + "-7"));
}

TEST(OwnerTest, AReusedPidIsNotTheOwner) {
  // Our pid with another start time: a process that had our pid before.
  std::string other =
      std::to_string(getpid()) + "-" + std::to_string(ProcessStartTime(getpid()) + 1) + "-x";
  EXPECT_FALSE(OwnerAlive(other));
  EXPECT_TRUE(LeftByDeadOwner(other));
}

TEST(OwnerTest, ADeadProcessIsNoOwner) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  long long start = ProcessStartTime(child);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(ProcessStartTime(child), -1);
  EXPECT_TRUE(LeftByDeadOwner(std::to_string(child) + "-" + std::to_string(start) + "-1"));
}

TEST(OwnerTest, NamesWithoutATagHaveNoOwner) {
  for (const char* name : {"", "0123456789abcdef", "12", "12-", "-12-34", "12-x", "12-34x", "0-0-1",
                           "99999999999999999999-1-1"}) {
    EXPECT_FALSE(OwnerAlive(name)) << name;
  }
}

}  // namespace
}  // namespace plimsoll::os
