// plimsoll's own runtime behind wasm2c's wasm-rt.h (wabt 1.0.32), plus the
// per-thread guard that runs guest code.
//
// What it provides, and why it is not wabt's wasm-rt-impl.c:
//   - Traps are per thread: each thread that runs guest code has its own jump
//     buffer, so many threads run many instances at once.
//   - Linear memory is a guard-page reservation (8 GiB PROT_NONE: 4 GiB of
//     addressable space plus 4 GiB for the largest static offset), made
//     readable and writable page range by page range as the memory grows,
//     and unmapped whole when freed: address space never leaks.
//   - The SIGSEGV/SIGBUS handler claims a fault only when the faulting
//     address lies inside a live reservation of the faulting thread while
//     that thread runs guest code. Any other fault is a real crash: the
//     handler reinstalls the previous disposition and returns, so the fault
//     repeats and kills the process as it would have without us.
//   - Each thread running guest code gets an alternate signal stack.
//   - Failures to reserve or protect memory are reported (a trap plus
//     ThreadAllocationErrno()), never abort().
//   - A hard deadline: a per-thread POSIX timer sends a signal to exactly
//     this thread; when it lands while the thread runs guest code, the guest
//     is stopped as a trap (kTrapHardDeadline). Code that never polls (a
//     busy native loop inside QuickJS) is stopped this way.
//
// Usage (what engine.cc does):
//
//   wasm::EnsureInitialized();
//   wasm::RunScope scope({.memory_limit_pages = 4096,
//                         .hard_deadline = deadline});
//   int trap = wasm::RunGuarded(+[](void* arg) { ...call exports... }, &state);
//   if (trap == wasm::kTrapHardDeadline) { ... }
//
// Everything here is thread-safe; a RunScope and its instances belong to the
// thread that created them.
#ifndef PLIMSOLL_ENGINE_RUNTIME_WASM_RUNTIME_H_
#define PLIMSOLL_ENGINE_RUNTIME_WASM_RUNTIME_H_

#include <chrono>
#include <cstdint>

#include "plimsoll/error.h"

namespace plimsoll::engine::wasm {

// Trap codes RunGuarded returns beyond wasm-rt.h's wasm_rt_trap_t values.
inline constexpr int kTrapHardDeadline = 100;  // the hard deadline fired
inline constexpr int kTrapHostFailure = 101;   // a host import failed fatally

// Pages are 64 KiB. 65536 pages = the whole 32-bit address space.
inline constexpr uint64_t kPageSize = 65536;
inline constexpr uint32_t kMaxPages = 65536;

// The signal the hard-deadline timer delivers (a real-time signal).
int HardDeadlineSignal();

// Installs the fault and deadline signal handlers once. Thread-safe.
// Fails only if sigaction fails.
Status EnsureInitialized();

struct RunOptions {
  // Largest number of pages any memory of this run may reach (clamps the
  // module's own maximum).
  uint32_t memory_limit_pages = kMaxPages;
  // When the guest is stopped whatever it does. time_point::max(): never.
  std::chrono::steady_clock::time_point hard_deadline =
      std::chrono::steady_clock::time_point::max();
};

// Scopes one run on the calling thread: sets the memory limit, arms the
// hard-deadline timer (and disarms it on destruction), clears the per-run
// flags. Not nestable; not movable.
class RunScope {
 public:
  explicit RunScope(const RunOptions& options);
  ~RunScope();
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;

  // Whether arming the timer failed (the run must then be refused).
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// Calls fn(arg) as guest code. Returns 0 when it returned normally, else the
// trap code (a wasm_rt_trap_t value or kTrap*). After a trap the instances
// touched are in an unknown state: free them, never call into them again.
// Nestable (an inner trap returns to the inner call).
int RunGuarded(void (*fn)(void*), void* arg);

// Per-run flags of the calling thread (reset by RunScope).
bool ThreadMemoryGrowRefused();  // a memory.grow hit the limit
int ThreadAllocationErrno();     // mmap/mprotect/calloc failure, or 0
bool ThreadHardDeadlineHit();    // kTrapHardDeadline happened or is pending

// Host imports call these around their work so that the deadline signal
// never interrupts host (C++) code: inside a HostSection the signal only
// marks the deadline as pending; TrapIfDeadlinePending() (called by the
// import after the section, with no C++ objects alive) then stops the guest.
class HostSection {
 public:
  HostSection();
  ~HostSection();
  HostSection(const HostSection&) = delete;
  HostSection& operator=(const HostSection&) = delete;

 private:
  int previous_;
};
void TrapIfDeadlinePending();

// Number of live memory reservations of the calling thread (for tests).
int ThreadLiveReservations();

}  // namespace plimsoll::engine::wasm

#endif  // PLIMSOLL_ENGINE_RUNTIME_WASM_RUNTIME_H_
