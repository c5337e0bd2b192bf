// The seccomp policy of a linux sandbox: data, not code (DESIGN.md).
//
// The policy lives in one readable file, image/seccomp.policy, compiled into
// the provider at build time (so a daemon always carries the reviewed
// policy) and overridable with PLIMSOLL_SECCOMP_POLICY=<file>. Grammar, one
// rule per line, `#` starts a comment:
//
//   version 1
//   default deny [ERRNO]              what every unlisted system call gets
//   allow   NAME... [if COND]
//   deny    [ERRNO] NAME... [if COND] ERRNO: EPERM (default), ENOSYS, ...
//   COND  = argN [& MASK] (==|!=) VALUE
//   MASK, VALUE = a number (decimal or 0x hex) or constants joined by `|`
//                 (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, CLONE_NEW*,
//                 S_IFMT, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK, S_IFREG,
//                 AT_EMPTY_PATH)
//
// A denied call returns an errno (never kills), so programs see a clean
// error. System calls of another architecture (i386/x32 entry points) kill
// the process: no honest program makes them.
//
// The filter is compiled to BPF once per provider (libseccomp allocates, so
// this happens in the parent) and installed by the sandbox's init just
// before it starts the agent, after no_new_privs: the agent, and every step
// it runs, are filtered.
//
// Usage:
//   auto policy = ParseSeccompPolicy(text);              // Expected<SeccompPolicy>
//   auto program = CompileSeccompPolicy(*policy);         // Expected<SeccompProgram>
//   // child: InstallSeccompProgram(*program, &what);
#ifndef PLIMSOLL_OS_SECCOMP_H_
#define PLIMSOLL_OS_SECCOMP_H_

#include <linux/filter.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::os {

struct SeccompCondition {
  unsigned argument = 0;  // 0..5
  uint64_t mask = ~uint64_t{0};
  bool equal = true;  // == (true) or != (false)
  uint64_t value = 0;
};

struct SeccompRule {
  bool allow = false;
  int errno_value = 1;  // EPERM; for deny rules
  std::string syscall;
  std::optional<SeccompCondition> condition;
  int line = 0;
};

struct SeccompPolicy {
  int default_errno = 1;  // EPERM
  std::vector<SeccompRule> rules;

  // The names of system calls with an unconditional deny rule (for tests and docs).
  std::vector<std::string> DeniedSyscalls() const;
};

// Parses the grammar above. Errors name the line and what was wrong; an
// unknown system call name is an error.
Expected<SeccompPolicy> ParseSeccompPolicy(std::string_view text);

// The policy compiled into this build (image/seccomp.policy at build time).
std::string_view BuiltInSeccompPolicyText();

// The policy text in force: the file named by PLIMSOLL_SECCOMP_POLICY, else
// the built-in one. `source` receives where it came from.
Expected<std::string> ActiveSeccompPolicyText(std::string* source);

struct SeccompProgram {
  std::vector<sock_filter> instructions;
  sock_fprog Fprog() const;
};

Expected<SeccompProgram> CompileSeccompPolicy(const SeccompPolicy& policy);

// Child side, async-signal-safe. Precondition: no_new_privs is set.
int InstallSeccompProgram(const sock_fprog& program, const char** what);

}  // namespace plimsoll::os

#endif  // PLIMSOLL_OS_SECCOMP_H_
