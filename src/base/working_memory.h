// The memory a process is about to use, touched while it still waits.
//
// Under gVisor's ptrace platform the first touch of a page is a fault that
// the Sentry serves from outside the process, several times dearer than a
// system call. A warm pool's processes wait, sometimes for seconds, before
// their run: the agent for its job (--prestart-job), the prestarted qjs for
// its script. Measured on a pooled runsc run, the faults of their first
// heap blocks and stack buffers after the wait were ~3 ms of ~10 (the job's
// and the report's blocks, the 64 KiB stack buffers that drain a step's
// pipes or read a script). Touching them while waiting moves that cost off
// the run's path.
//
// PrefaultWorkingMemory() also keeps the heap from shrinking back (no
// trim) and serves blocks up to `heap_bytes` from the heap rather than from
// fresh mmaps, so later allocations land in the pages it touched. The
// process then holds that much more memory for its lifetime (counted in its
// sandbox's limit like any other).
//
// Usage (the agent's main.cc, qjs_main.cc):
//   PrefaultWorkingMemory(size_t{1} << 20, size_t{256} << 10);   // before waiting
#ifndef PLIMSOLL_BASE_WORKING_MEMORY_H_
#define PLIMSOLL_BASE_WORKING_MEMORY_H_

#include <cstddef>

namespace plimsoll {

// At most 16 MiB of heap and 1 MiB of stack (below the caller's frame; the
// stack limit must leave room for it).
void PrefaultWorkingMemory(size_t heap_bytes, size_t stack_bytes);

}  // namespace plimsoll

#endif  // PLIMSOLL_BASE_WORKING_MEMORY_H_
