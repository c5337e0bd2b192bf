// Tests of the runner as root. The runner refuses to hold a scenario while a
// process of its own user could read it, and root can (CAP_SYS_PTRACE; and
// without it, root still reads an undumpable process's environ). Inside a
// sandbox the runner is an unprivileged user with no capability; these
// helpers put a forked child of the test in that position.
//
// Usage:
//   std::string answer = InChild([] { BecomeUnprivileged(); return Work(); });
#ifndef PLIMSOLL_TRIAL_UNPRIVILEGED_FOR_TESTS_H_
#define PLIMSOLL_TRIAL_UNPRIVILEGED_FOR_TESTS_H_

#include <sys/types.h>

#include <functional>
#include <string>

namespace plimsoll::trial::testing {

// "nobody": what the tests become when they run as root.
inline constexpr uid_t kUnprivilegedId = 65534;

// In a child: as root, drops supplementary groups and switches gid and uid
// to kUnprivilegedId (which clears every capability); otherwise nothing.
// False if a switch failed.
bool BecomeUnprivileged();

// As root, gives `path` to kUnprivilegedId (the runner takes a scenario
// file only from its own user, as a sandbox's project files are the step
// user's); otherwise nothing. False if the chown failed.
bool GiveToUnprivileged(const std::string& path);

// Runs `body` in a forked child and returns what it returned, so that it may
// change process-wide state (uid, dumpability) without touching the test.
// "child failed" if the child died without answering.
std::string InChild(const std::function<std::string()>& body);

}  // namespace plimsoll::trial::testing

#endif  // PLIMSOLL_TRIAL_UNPRIVILEGED_FOR_TESTS_H_
