// What a one-shot run (engine.cc) and a session (session.cc) share about a
// module instance: one-time initialisation, the linear memory bound, and how
// a guarded call's trap and exit code become an Outcome. Internal to the
// engine.
#ifndef PLIMSOLL_ENGINE_INSTANCE_SUPPORT_H_
#define PLIMSOLL_ENGINE_INSTANCE_SUPPORT_H_

#include <cstddef>
#include <cstdint>

#include "engine/engine.h"
#include "engine/host_imports.h"
#include "plimsoll/error.h"

namespace plimsoll::engine {

// Linear memory beyond the QuickJS heap limit: the guest's shadow stack and
// static data (below 2 MiB), libc's own allocations (console buffers, the
// copied script) and allocator overhead.
inline constexpr size_t kLinearMemoryAllowance = size_t{8} << 20;

// Installs the runtime's signal handlers and registers the module's function
// types, once per process. Thread-safe.
Status EnsureModuleInitialized();

// Pages of linear memory for a QuickJS heap limit of `memory_bytes`.
uint32_t LinearMemoryPages(size_t memory_bytes);

// The outcome of a guarded call that returned `trap` (0: none) and, when it
// returned normally, `guest_exit_code`. Moves the streams out of `context`.
// Reads the calling thread's per-run flags: call inside the run's RunScope.
Outcome OutcomeOf(int trap, int guest_exit_code, HostContext& context);

// The refusal for an instance the host could not allocate (nothing ran).
Error InstanceRefusal(int allocation_errno);

}  // namespace plimsoll::engine

#endif  // PLIMSOLL_ENGINE_INSTANCE_SUPPORT_H_
