// Descriptors a process must not pass on, handled without allocating (so
// the calls are safe between vfork/fork and execve).
//
// close_range(2) does it in one call; where it is missing (gVisor's kernel
// of 2022 answers EINVAL to it), the open descriptors are listed from
// /proc/self/fd with getdents64 into a stack buffer, so only those are
// touched: looping over every number up to RLIMIT_NOFILE costs ~15 ms there
// (one emulated system call each). Without /proc the loop is the last
// resort.
//
// Usage (in a vfork child, after the dup2s):
//   MarkCloseOnExecFrom(3);       // everything above stderr goes at execve
#ifndef PLIMSOLL_OS_DESCRIPTORS_H_
#define PLIMSOLL_OS_DESCRIPTORS_H_

namespace plimsoll::os {

// Marks every descriptor >= `lowest` close-on-exec.
void MarkCloseOnExecFrom(int lowest);

// Closes every descriptor >= `lowest`.
void CloseFrom(int lowest);

}  // namespace plimsoll::os

#endif  // PLIMSOLL_OS_DESCRIPTORS_H_
