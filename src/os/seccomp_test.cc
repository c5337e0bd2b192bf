#include "os/seccomp.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace plimsoll::os {
namespace {

TEST(SeccompPolicyTest, TheBuiltInPolicyParsesAndCompiles) {
  auto policy = ParseSeccompPolicy(BuiltInSeccompPolicyText());
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  EXPECT_EQ(policy->default_errno, EPERM);
  auto program = CompileSeccompPolicy(*policy);
  ASSERT_TRUE(program.ok()) << program.error().ToString();
  EXPECT_GT(program->instructions.size(), 10u);
}

TEST(SeccompPolicyTest, TheBuiltInPolicyDeniesWhatSpecSectionSixLists) {
  auto policy = ParseSeccompPolicy(BuiltInSeccompPolicyText());
  ASSERT_TRUE(policy.ok());
  std::vector<std::string> denied = policy->DeniedSyscalls();
  for (const char* name :
       {"unshare",         "setns",       "ptrace",        "mount",         "umount2",
        "pivot_root",      "keyctl",      "add_key",       "request_key",   "bpf",
        "perf_event_open", "init_module", "finit_module",  "delete_module", "kexec_load",
        "kexec_file_load", "reboot",      "clock_settime", "settimeofday",  "adjtimex"}) {
    EXPECT_NE(std::find(denied.begin(), denied.end(), name), denied.end()) << name;
  }
  // No denied call is also allowed somewhere.
  for (const SeccompRule& rule : policy->rules) {
    if (rule.allow) {
      EXPECT_EQ(std::find(denied.begin(), denied.end(), rule.syscall), denied.end())
          << rule.syscall;
    }
  }
}

TEST(SeccompPolicyTest, ParsesConditionsErrnosAndComments) {
  auto policy = ParseSeccompPolicy(
      "# c\nversion 1\ndefault deny\nallow read write # io\n"
      "allow socket if arg0 == AF_UNIX\nallow clone if arg0 & CLONE_NEWNS|CLONE_NEWUSER == 0\n"
      "deny ENOSYS clone3\n");
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  ASSERT_EQ(policy->rules.size(), 5u);
  EXPECT_TRUE(policy->rules[2].condition.has_value());
  EXPECT_EQ(policy->rules[2].condition->value, 1u);
  EXPECT_EQ(policy->rules[3].condition->mask, 0x10020000u);
  EXPECT_EQ(policy->rules[4].errno_value, ENOSYS);
}

TEST(SeccompPolicyTest, RejectsMalformedPoliciesNamingTheLine) {
  struct Case {
    const char* text;
    const char* mentions;
  } cases[] = {
      {"", "empty"},
      {"default deny\n", "version 1"},
      {"version 2\n", "version 1"},
      {"version 1\nallow read\n", "default deny"},
      {"version 1\ndefault allow\n", "deny by default"},
      {"version 1\ndefault deny\nallow not_a_syscall\n", "not_a_syscall"},
      {"version 1\ndefault deny\npermit read\n", "unknown rule"},
      {"version 1\ndefault deny\ndeny EWHAT read\n", "EWHAT"},
      {"version 1\ndefault deny\nallow socket if arg9 == 1\n", "arg0..arg5"},
      {"version 1\ndefault deny\nallow socket if arg0 < 1\n", "== or !="},
      {"version 1\ndefault deny\nallow socket if arg0 == AF_NOPE\n", "AF_NOPE"},
      {"version 1\ndefault deny\nallow\n", "names no system call"},
  };
  for (const Case& c : cases) {
    auto policy = ParseSeccompPolicy(c.text);
    ASSERT_FALSE(policy.ok()) << c.text;
    EXPECT_NE(policy.error().message().find(c.mentions), std::string::npos)
        << c.text << " -> " << policy.error().message();
  }
}

// Installs the built-in filter in a forked child and checks each denial there.
TEST(SeccompPolicyTest, TheCompiledFilterDeniesWithEpermAndClone3WithEnosys) {
  auto policy = ParseSeccompPolicy(BuiltInSeccompPolicyText());
  ASSERT_TRUE(policy.ok());
  auto program = CompileSeccompPolicy(*policy);
  ASSERT_TRUE(program.ok());
  sock_fprog fprog = program->Fprog();
  char pattern[] = "/tmp/plimsoll-seccomp-test-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string directory = pattern;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const char* what = "";
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || InstallSeccompProgram(fprog, &what) != 0)
      _exit(100);
    struct {
      long number;
      long a0, a1, a2;
      int want;
    } calls[] = {
        {SYS_unshare, 0x10000000, 0, 0, EPERM},
        {SYS_setns, 0, 0, 0, EPERM},
        {SYS_ptrace, 0, 0, 0, EPERM},
        {SYS_mount, 0, 0, 0, EPERM},
        {SYS_umount2, 0, 0, 0, EPERM},
        {SYS_pivot_root, 0, 0, 0, EPERM},
        {SYS_keyctl, 0, 0, 0, EPERM},
        {SYS_add_key, 0, 0, 0, EPERM},
        {SYS_request_key, 0, 0, 0, EPERM},
        {SYS_bpf, 0, 0, 0, EPERM},
        {SYS_perf_event_open, 0, 0, 0, EPERM},
        {SYS_init_module, 0, 0, 0, EPERM},
        {SYS_finit_module, 0, 0, 0, EPERM},
        {SYS_delete_module, 0, 0, 0, EPERM},
        {SYS_kexec_load, 0, 0, 0, EPERM},
        {SYS_reboot, 0, 0, 0, EPERM},
        {SYS_clock_settime, 0, 0, 0, EPERM},
        {SYS_settimeofday, 0, 0, 0, EPERM},
        {SYS_adjtimex, 0, 0, 0, EPERM},
        {SYS_socket, 2 /*AF_INET*/, 1, 0, EPERM},
        {SYS_clone, 0x00020000 /*CLONE_NEWNS*/, 0, 0, EPERM},
        {SYS_clone3, 0, 0, 0, ENOSYS},
        // Fileless execution and the per-user inotify counters (issue 13).
        {SYS_memfd_create, 0, 0, 0, EPERM},
        {SYS_inotify_init, 0, 0, 0, EPERM},
        {SYS_inotify_init1, 0, 0, 0, EPERM},
    };
    int index = 0;
    for (const auto& call : calls) {
      ++index;
      errno = 0;
      long rc = syscall(call.number, call.a0, call.a1, call.a2, 0, 0);
      if (rc != -1 || errno != call.want) _exit(index);
    }
    long unix_socket = syscall(SYS_socket, 1 /*AF_UNIX*/, 1, 0);
    if (unix_socket < 0) _exit(99);
    // execveat runs a path, never the file a descriptor holds (fexecve):
    // AT_EMPTY_PATH is refused before the kernel looks at the descriptor.
    char empty[] = "";
    char* no_argv[] = {nullptr};
    errno = 0;
    if (syscall(SYS_execveat, 0, empty, no_argv, no_argv, AT_EMPTY_PATH) != -1 || errno != EPERM)
      _exit(95);
    // Without it, execveat is allowed: a missing path gets the kernel's ENOENT.
    char missing[] = "/plimsoll-no-such-program";
    errno = 0;
    if (syscall(SYS_execveat, AT_FDCWD, missing, no_argv, no_argv, 0) != -1 || errno != ENOENT)
      _exit(96);
    // mknod: FIFOs and sockets are allowed, device nodes are not (the child
    // is host root with CAP_MKNOD, so only the filter can refuse them).
    std::string fifo = directory + "/fifo", sock = directory + "/sock", dev = directory + "/dev";
    if (syscall(SYS_mknodat, AT_FDCWD, fifo.c_str(), S_IFIFO | 0600, 0) != 0) _exit(90);
    if (syscall(SYS_mknod, sock.c_str(), S_IFSOCK | 0600, 0) != 0) _exit(91);
    errno = 0;
    if (syscall(SYS_mknodat, AT_FDCWD, dev.c_str(), S_IFCHR | 0600, makedev(1, 3)) != -1 ||
        errno != EPERM)
      _exit(92);
    errno = 0;
    if (syscall(SYS_mknod, dev.c_str(), S_IFBLK | 0600, makedev(7, 0)) != -1 || errno != EPERM)
      _exit(93);
    errno = 0;
    if (syscall(SYS_mknodat, AT_FDCWD, dev.c_str(), S_IFREG | 0600, 0) != -1 || errno != EPERM)
      _exit(94);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "the call at index " << WEXITSTATUS(status) << " was not denied as expected";
  struct stat info {};
  EXPECT_EQ(stat((directory + "/fifo").c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
  EXPECT_NE(stat((directory + "/dev").c_str(), &info), 0);
  for (const char* name : {"/fifo", "/sock", "/dev"}) unlink((directory + name).c_str());
  rmdir(directory.c_str());
}

}  // namespace
}  // namespace plimsoll::os
