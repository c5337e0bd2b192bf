#include "providers/linux/netns_pool.h"

#include <gtest/gtest.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <thread>

namespace plimsoll::linux_sandbox {
namespace {

ino_t InodeOf(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

ino_t ThreadNamespace() {
  struct stat st {};
  return stat("/proc/thread-self/ns/net", &st) == 0 ? st.st_ino : 0;
}

NamespaceFd TakeWithin(NetnsPool& pool, std::chrono::seconds budget) {
  auto give_up = std::chrono::steady_clock::now() + budget;
  for (;;) {
    NamespaceFd net = pool.Take();
    if (net.valid() || std::chrono::steady_clock::now() > give_up) return net;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// What a thread that joins `net` sees: its interfaces, and lo's flags.
struct Inside {
  std::set<std::string> interfaces;
  short lo_flags = 0;
  bool joined = false;
};

Inside LookInside(const NamespaceFd& net) {
  Inside inside;
  std::thread([&] {
    if (setns(net.get(), CLONE_NEWNET) != 0) return;  // the thread ends in it
    inside.joined = true;
    if (struct if_nameindex* names = if_nameindex()) {
      for (struct if_nameindex* name = names; name->if_index != 0; ++name)
        inside.interfaces.insert(name->if_name);
      if_freenameindex(names);
    }
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ifreq request{};
    std::memcpy(request.ifr_name, "lo", 3);
    if (fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &request) == 0) inside.lo_flags = request.ifr_flags;
    if (fd >= 0) close(fd);
  }).join();
  return inside;
}

class NetnsPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "skipped: making network namespaces needs root";
  }
};

TEST_F(NetnsPoolTest, EachNamespaceIsFreshWithOnlyLoopbackUpAndHandedOutOnce) {
  NetnsPool pool(2);
  std::set<ino_t> seen = {ThreadNamespace()};
  for (int i = 0; i < 5; ++i) {
    NamespaceFd net = TakeWithin(pool, std::chrono::seconds(5));
    ASSERT_TRUE(net.valid()) << pool.LastError();
    EXPECT_TRUE(seen.insert(InodeOf(net.get())).second) << "a namespace was handed out twice";
    Inside inside = LookInside(net);
    ASSERT_TRUE(inside.joined);
    EXPECT_EQ(inside.interfaces, std::set<std::string>{"lo"});
    EXPECT_TRUE(inside.lo_flags & IFF_UP);
  }
  EXPECT_EQ(pool.LastError(), "");
}

TEST_F(NetnsPoolTest, ASizeOfZeroMakesNothing) {
  NetnsPool pool(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(pool.Ready(), 0u);
  EXPECT_FALSE(pool.Take().valid());
}

TEST_F(NetnsPoolTest, JoinForCloneStartsTheChildInsideAndBringsTheThreadBack) {
  NetnsPool pool(1);
  NamespaceFd net = TakeWithin(pool, std::chrono::seconds(5));
  ASSERT_TRUE(net.valid()) << pool.LastError();
  ino_t home = ThreadNamespace();
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  long child = JoinForClone(net, [&]() -> long {
    pid_t pid = fork();
    if (pid == 0) {
      ino_t mine = ThreadNamespace();
      (void)!write(report[1], &mine, sizeof mine);
      _exit(0);
    }
    return pid;
  });
  ASSERT_GT(child, 0);
  ino_t seen = 0;
  ASSERT_EQ(read(report[0], &seen, sizeof seen), static_cast<ssize_t>(sizeof seen));
  EXPECT_EQ(seen, InodeOf(net.get()));
  EXPECT_EQ(ThreadNamespace(), home);
  close(report[0]);
  close(report[1]);
  int status = 0;
  waitpid(static_cast<pid_t>(child), &status, 0);
}

TEST_F(NetnsPoolTest, JoinForCloneOfAnInvalidNamespaceClonesNothing) {
  NamespaceFd none;
  bool called = false;
  long result = JoinForClone(none, [&]() -> long {
    called = true;
    return 1;
  });
  EXPECT_EQ(result, -1);
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace plimsoll::linux_sandbox
