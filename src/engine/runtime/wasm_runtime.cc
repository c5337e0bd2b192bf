// Our implementation of wasm-rt.h (wabt 1.0.32) and the guest guard. See
// wasm_runtime.h for the contract.
//
// Signal-safety: the handlers touch only `t_state` (a constant-initialised
// thread_local of trivial type, so no lazy TLS initialisation happens inside
// a handler), clock_gettime, sigaction and siglongjmp.
#include "engine/runtime/wasm_runtime.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <wasm-rt.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "engine/runtime/wasm_image.h"

extern "C" {
// wasm2c's call-depth counter, per thread (see wasm2c_prelude.h).
__thread uint32_t plimsoll_wasm_call_depth __attribute__((tls_model("initial-exec"))) = 0;
}

namespace plimsoll::engine::wasm {
namespace {

// 4 GiB addressable + 4 GiB so that any u32 address plus any u32 static
// offset lands inside the reservation.
constexpr uint64_t kReservationBytes = uint64_t{8} << 30;
constexpr int kMaxReservations = 16;
constexpr size_t kAltStackBytes = 64 * 1024;
// After the first deadline signal, repeat it this often until the guest is
// caught in guest code (the first one may land inside a host import).
constexpr long kDeadlineRepeatNanoseconds = 2'000'000;

struct Reservation {
  uintptr_t begin;
  uintptr_t end;
};

struct ThreadState {
  sigjmp_buf* jump;
  volatile sig_atomic_t in_guest;
  volatile sig_atomic_t deadline_hit;
  volatile sig_atomic_t deadline_pending;
  int64_t hard_deadline_ns;  // CLOCK_MONOTONIC; INT64_MAX: none
  uint32_t memory_limit_pages;
  bool grow_refused;
  int allocation_errno;
  int reservation_count;
  Reservation reservations[kMaxReservations];
};

constinit thread_local ThreadState t_state = {nullptr,   0,     0, 0, INT64_MAX,
                                              kMaxPages, false, 0, 0, {}};

// Resources that need a destructor at thread exit: the alternate signal stack
// and the deadline timer. Created on the thread's first run.
class ThreadResources {
 public:
  ThreadResources() {
    stack_t current;
    if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
      void* memory =
          mmap(nullptr, kAltStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (memory != MAP_FAILED) {
        stack_t ours = {};
        ours.ss_sp = memory;
        ours.ss_size = kAltStackBytes;
        if (sigaltstack(&ours, nullptr) == 0) {
          alt_stack_ = memory;
        } else {
          munmap(memory, kAltStackBytes);
        }
      }
    }
  }
  ~ThreadResources() {
    if (timer_created_) timer_delete(timer_);
    if (alt_stack_ != nullptr) {
      stack_t disable = {};
      disable.ss_flags = SS_DISABLE;
      sigaltstack(&disable, nullptr);
      munmap(alt_stack_, kAltStackBytes);
    }
  }
  ThreadResources(const ThreadResources&) = delete;
  ThreadResources& operator=(const ThreadResources&) = delete;

  // The timer that signals this thread alone.
  Expected<timer_t> Timer() {
    if (!timer_created_) {
      sigevent event = {};
      event.sigev_notify = SIGEV_THREAD_ID;
      event.sigev_signo = HardDeadlineSignal();
      event._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
      if (timer_create(CLOCK_MONOTONIC, &event, &timer_) != 0) {
        return SystemError("timer_create for the engine's hard deadline", errno);
      }
      timer_created_ = true;
    }
    return timer_;
  }

 private:
  void* alt_stack_ = nullptr;
  timer_t timer_{};
  bool timer_created_ = false;
};

ThreadResources& Resources() {
  thread_local ThreadResources resources;
  return resources;
}

struct sigaction g_previous_segv;
struct sigaction g_previous_bus;
std::once_flag g_init_once;
Status* g_init_status = nullptr;

int64_t MonotonicNanoseconds() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

bool InsideThreadReservation(uintptr_t address) {
  const ThreadState& state = t_state;
  for (int i = 0; i < state.reservation_count; i++) {
    if (address >= state.reservations[i].begin && address < state.reservations[i].end) {
      return true;
    }
  }
  return false;
}

void OnFault(int signal_number, siginfo_t* info, void* context) {
  (void)context;
  ThreadState& state = t_state;
  uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  if (state.jump != nullptr && state.in_guest && InsideThreadReservation(address)) {
    state.in_guest = 0;
    siglongjmp(*state.jump, WASM_RT_TRAP_OOB);
  }
  // Not ours: a real crash. Give the signal back to whoever had it (or the
  // default action) and return; the faulting instruction runs again.
  sigaction(signal_number, signal_number == SIGSEGV ? &g_previous_segv : &g_previous_bus, nullptr);
}

void OnDeadline(int signal_number, siginfo_t* info, void* context) {
  (void)signal_number;
  (void)info;
  (void)context;
  ThreadState& state = t_state;
  if (state.jump == nullptr) return;  // between runs: a stale signal
  if (MonotonicNanoseconds() < state.hard_deadline_ns) return;
  state.deadline_hit = 1;
  if (state.in_guest) {
    state.in_guest = 0;
    siglongjmp(*state.jump, kTrapHardDeadline);
  }
  state.deadline_pending = 1;  // in host code: the import traps on return
}

Status InstallHandlers() {
  struct sigaction action = {};
  action.sa_sigaction = OnFault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSEGV, &action, &g_previous_segv) != 0) {
    return SystemError("sigaction(SIGSEGV) for the wasm runtime", errno);
  }
  if (sigaction(SIGBUS, &action, &g_previous_bus) != 0) {
    return SystemError("sigaction(SIGBUS) for the wasm runtime", errno);
  }
  struct sigaction deadline = {};
  deadline.sa_sigaction = OnDeadline;
  deadline.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&deadline.sa_mask);
  if (sigaction(HardDeadlineSignal(), &deadline, nullptr) != 0) {
    return SystemError("sigaction for the engine's hard-deadline signal", errno);
  }
  return Status::Ok();
}

[[noreturn]] void Trap(int code) {
  ThreadState& state = t_state;
  if (state.jump == nullptr) {
    // Guest code always runs under RunGuarded; reaching here is a bug in
    // plimsoll, not something a guest can cause.
    std::fprintf(stderr, "plimsoll: wasm trap %d outside RunGuarded\n", code);
    std::abort();
  }
  state.in_guest = 0;
  siglongjmp(*state.jump, code);
}

// Function-type registry (wasm_rt_register_func_type): process-wide.
std::mutex g_types_mutex;
std::vector<std::vector<uint32_t>>* g_types = nullptr;

}  // namespace

int HardDeadlineSignal() {
  return SIGRTMIN + 4;
}

Status EnsureInitialized() {
  std::call_once(g_init_once, [] {
    g_init_status = new Status(InstallHandlers());  // lives for the process
  });
  return *g_init_status;
}

RunScope::RunScope(const RunOptions& options) {
  ThreadState& state = t_state;
  Resources();  // the alternate signal stack, before any guest code
  state.memory_limit_pages = options.memory_limit_pages;
  state.grow_refused = false;
  state.allocation_errno = 0;
  state.deadline_hit = 0;
  state.deadline_pending = 0;
  state.hard_deadline_ns = INT64_MAX;
  if (options.hard_deadline == std::chrono::steady_clock::time_point::max()) {
    return;
  }
  // steady_clock is CLOCK_MONOTONIC on Linux.
  int64_t deadline_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(options.hard_deadline.time_since_epoch())
          .count();
  state.hard_deadline_ns = deadline_ns;
  auto timer = Resources().Timer();
  if (!timer.ok()) {
    status_ = timer.error();
    return;
  }
  itimerspec spec = {};
  spec.it_value.tv_sec = deadline_ns / 1'000'000'000;
  spec.it_value.tv_nsec = deadline_ns % 1'000'000'000;
  if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) {
    spec.it_value.tv_nsec = 1;  // zero would disarm
  }
  spec.it_interval.tv_nsec = kDeadlineRepeatNanoseconds;
  if (timer_settime(*timer, TIMER_ABSTIME, &spec, nullptr) != 0) {
    status_ = SystemError("timer_settime for the engine's hard deadline", errno);
  }
}

RunScope::~RunScope() {
  ThreadState& state = t_state;
  if (state.hard_deadline_ns != INT64_MAX) {
    auto timer = Resources().Timer();
    if (timer.ok()) {
      itimerspec disarm = {};
      timer_settime(*timer, 0, &disarm, nullptr);
    }
  }
  state.hard_deadline_ns = INT64_MAX;
  state.memory_limit_pages = kMaxPages;
}

int RunGuarded(void (*fn)(void*), void* arg) {
  ThreadState& state = t_state;
  sigjmp_buf buffer;
  sigjmp_buf* const previous_jump = state.jump;
  const sig_atomic_t previous_in_guest = state.in_guest;
  const uint32_t saved_depth = plimsoll_wasm_call_depth;
  int code = sigsetjmp(buffer, 1);
  if (code == 0) {
    state.jump = &buffer;
    state.in_guest = 1;
    if (state.deadline_pending || state.deadline_hit) {
      code = kTrapHardDeadline;
    } else {
      fn(arg);
    }
  } else {
    plimsoll_wasm_call_depth = saved_depth;
  }
  state.in_guest = previous_in_guest;
  state.jump = previous_jump;
  return code;
}

bool ThreadMemoryGrowRefused() {
  return t_state.grow_refused;
}
int ThreadAllocationErrno() {
  return t_state.allocation_errno;
}
bool ThreadHardDeadlineHit() {
  return t_state.deadline_hit != 0;
}
int ThreadLiveReservations() {
  return t_state.reservation_count;
}

HostSection::HostSection() : previous_(t_state.in_guest) {
  t_state.in_guest = 0;
}
HostSection::~HostSection() {
  t_state.in_guest = previous_;
}

void TrapIfDeadlinePending() {
  if (t_state.deadline_pending) Trap(kTrapHardDeadline);
}

}  // namespace plimsoll::engine::wasm

// ---- wasm-rt.h ------------------------------------------------------------

using plimsoll::engine::wasm::HostSection;
using plimsoll::engine::wasm::Trap;
namespace wasm = plimsoll::engine::wasm;

extern "C" {

void wasm_rt_init(void) {
  (void)wasm::EnsureInitialized();
}

bool wasm_rt_is_initialized(void) {
  return wasm::g_init_status != nullptr && wasm::g_init_status->ok();
}

// Handlers stay installed for the life of the process: other threads may be
// running guest code.
void wasm_rt_free(void) {}

void wasm_rt_trap(wasm_rt_trap_t code) {
  Trap(code);
}

const char* wasm_rt_strerror(wasm_rt_trap_t trap) {
  switch (trap) {
    case WASM_RT_TRAP_NONE:
      return "no error";
    case WASM_RT_TRAP_OOB:
      return "out-of-bounds memory access";
    case WASM_RT_TRAP_INT_OVERFLOW:
      return "integer overflow";
    case WASM_RT_TRAP_DIV_BY_ZERO:
      return "integer divide by zero";
    case WASM_RT_TRAP_INVALID_CONVERSION:
      return "invalid conversion to integer";
    case WASM_RT_TRAP_UNREACHABLE:
      return "unreachable executed";
    case WASM_RT_TRAP_CALL_INDIRECT:
      return "invalid indirect call";
    case WASM_RT_TRAP_UNCAUGHT_EXCEPTION:
      return "uncaught exception";
    case WASM_RT_TRAP_EXHAUSTION:
      return "call stack exhausted";
  }
  return "unknown trap";
}

uint32_t wasm_rt_register_func_type(uint32_t params, uint32_t results, ...) {
  std::vector<uint32_t> signature;
  signature.reserve(params + results + 1);
  signature.push_back(params);
  signature.push_back(results);
  va_list types;
  va_start(types, results);
  for (uint32_t i = 0; i < params + results; i++) {
    signature.push_back(static_cast<uint32_t>(va_arg(types, int)));
  }
  va_end(types);
  std::lock_guard lock(wasm::g_types_mutex);
  if (wasm::g_types == nullptr) {
    wasm::g_types = new std::vector<std::vector<uint32_t>>();
  }
  for (size_t i = 0; i < wasm::g_types->size(); i++) {
    if ((*wasm::g_types)[i] == signature) return static_cast<uint32_t>(i + 1);
  }
  wasm::g_types->push_back(std::move(signature));
  return static_cast<uint32_t>(wasm::g_types->size());
}

// Exception handling: the module is built without wasm exceptions; these
// exist because wasm-rt.h declares them. A throw without a catch traps.
namespace {
thread_local uint32_t t_exception_tag;
thread_local uint32_t t_exception_size;
thread_local unsigned char t_exception[256];
thread_local WASM_RT_UNWIND_TARGET* t_unwind_target;
std::atomic<uint32_t> g_next_tag{0};
}  // namespace

uint32_t wasm_rt_register_tag(uint32_t size) {
  (void)size;
  return g_next_tag.fetch_add(1);
}

void wasm_rt_load_exception(uint32_t tag, uint32_t size, const void* values) {
  if (size > sizeof t_exception) Trap(WASM_RT_TRAP_EXHAUSTION);
  t_exception_tag = tag;
  t_exception_size = size;
  if (size > 0) std::memcpy(t_exception, values, size);
}

void wasm_rt_throw(void) {
  if (t_unwind_target == nullptr) Trap(WASM_RT_TRAP_UNCAUGHT_EXCEPTION);
  WASM_RT_UNWIND_TARGET* target = t_unwind_target;
  siglongjmp(*target, 1);
}

WASM_RT_UNWIND_TARGET* wasm_rt_get_unwind_target(void) {
  return t_unwind_target;
}
void wasm_rt_set_unwind_target(WASM_RT_UNWIND_TARGET* target) {
  t_unwind_target = target;
}
uint32_t wasm_rt_exception_tag(void) {
  return t_exception_tag;
}
uint32_t wasm_rt_exception_size(void) {
  return t_exception_size;
}
void* wasm_rt_exception(void) {
  return t_exception;
}

// ---- memories --------------------------------------------------------------

// Copies the image's hot pages into a fresh private mapping at `base` (see
// wasm_image.h). Best effort: pages it could not copy fault in as usual.
static void PopulateHotPages(uint8_t* base, const plimsoll_wasm_image& image) {
  static std::atomic<bool> unsupported{false};
  if (unsupported.load(std::memory_order_relaxed)) return;
  const uint64_t image_bytes = uint64_t{image.pages} * wasm::kPageSize;
  for (uint32_t i = 0; i < image.hot_count; i++) {
    const uint64_t offset = uint64_t{image.hot[i].first} * 4096;
    const uint64_t length = uint64_t{image.hot[i].count} * 4096;
    if (offset + length > image_bytes) continue;
    if (madvise(base + offset, length, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
      unsupported.store(true, std::memory_order_relaxed);  // before Linux 5.14
      return;
    }
  }
}

// Reserves a memory of `initial_pages` (at most `max_pages`, clamped by the
// run's limit). With an `image` the first `initial_pages` pages are a
// private copy-on-write mapping of its file (a sealed MemoryImage) and its
// hot pages are copied in up front; else they are fresh zero pages. Traps
// on failure, with the errno kept.
static void AllocateMemory(wasm_rt_memory_t* memory, uint32_t initial_pages, uint32_t max_pages,
                           const plimsoll_wasm_image* image) {
  const int image_fd = image != nullptr ? image->fd : -1;
  *memory = {};
  wasm::ThreadState& state = wasm::t_state;
  {
    HostSection host;  // the reservation list must not be torn by a longjmp
    uint32_t limit = max_pages < state.memory_limit_pages ? max_pages : state.memory_limit_pages;
    if (initial_pages > limit) {
      state.allocation_errno = ENOMEM;
      state.grow_refused = true;
    } else if (state.reservation_count == wasm::kMaxReservations) {
      state.allocation_errno = EMFILE;
    } else {
      void* base = mmap(nullptr, wasm::kReservationBytes, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      const uint64_t initial_bytes = uint64_t{initial_pages} * wasm::kPageSize;
      if (base == MAP_FAILED) {
        state.allocation_errno = errno;
      } else if (initial_pages > 0 && image_fd >= 0 &&
                 mmap(base, initial_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED,
                      image_fd, 0) == MAP_FAILED) {
        state.allocation_errno = errno;
        munmap(base, wasm::kReservationBytes);
      } else if (initial_pages > 0 && image_fd < 0 &&
                 mprotect(base, initial_bytes, PROT_READ | PROT_WRITE) != 0) {
        state.allocation_errno = errno;
        munmap(base, wasm::kReservationBytes);
      } else {
        if (image != nullptr) PopulateHotPages(static_cast<uint8_t*>(base), *image);
        uintptr_t begin = reinterpret_cast<uintptr_t>(base);
        state.reservations[state.reservation_count++] = {begin, begin + wasm::kReservationBytes};
        memory->data = static_cast<uint8_t*>(base);
        memory->pages = initial_pages;
        memory->max_pages = limit;
        memory->size = static_cast<uint32_t>(initial_bytes);
      }
    }
  }
  if (memory->data == nullptr) Trap(WASM_RT_TRAP_OOB);
}

void wasm_rt_allocate_memory(wasm_rt_memory_t* memory, uint32_t initial_pages, uint32_t max_pages) {
  AllocateMemory(memory, initial_pages, max_pages, nullptr);
}

void plimsoll_wasm_rt_allocate_memory_from_image(wasm_rt_memory_t* memory,
                                                 const plimsoll_wasm_image* image,
                                                 uint32_t max_pages) {
  AllocateMemory(memory, image->pages, max_pages, image);
}

uint32_t wasm_rt_grow_memory(wasm_rt_memory_t* memory, uint32_t delta) {
  uint32_t old_pages = memory->pages;
  if (delta == 0) return old_pages;
  uint64_t new_pages = uint64_t{old_pages} + delta;
  if (new_pages > memory->max_pages) {
    wasm::t_state.grow_refused = true;
    return UINT32_MAX;
  }
  uint8_t* start = memory->data + uint64_t{old_pages} * wasm::kPageSize;
  if (mprotect(start, uint64_t{delta} * wasm::kPageSize, PROT_READ | PROT_WRITE) != 0) {
    wasm::t_state.allocation_errno = errno;
    wasm::t_state.grow_refused = true;
    return UINT32_MAX;
  }
  memory->pages = static_cast<uint32_t>(new_pages);
  // 65536 pages is 4 GiB, one more than u32 holds: the limit keeps us below.
  memory->size = static_cast<uint32_t>(new_pages * wasm::kPageSize);
  return old_pages;
}

void wasm_rt_free_memory(wasm_rt_memory_t* memory) {
  if (memory->data == nullptr) return;
  HostSection host;
  wasm::ThreadState& state = wasm::t_state;
  uintptr_t begin = reinterpret_cast<uintptr_t>(memory->data);
  munmap(memory->data, wasm::kReservationBytes);
  for (int i = 0; i < state.reservation_count; i++) {
    if (state.reservations[i].begin == begin) {
      state.reservations[i] = state.reservations[--state.reservation_count];
      break;
    }
  }
  *memory = {};
}

}  // extern "C"

// ---- tables ----------------------------------------------------------------

namespace {

template <typename Table, typename Element>
void AllocateTable(Table* table, uint32_t elements, uint32_t max_elements) {
  *table = {};
  if (elements > 0) {
    void* data = std::calloc(elements, sizeof(Element));
    if (data == nullptr) {
      wasm::t_state.allocation_errno = ENOMEM;
      Trap(WASM_RT_TRAP_OOB);
    }
    table->data = static_cast<Element*>(data);
  }
  table->size = elements;
  table->max_size = max_elements;
}

template <typename Table, typename Element>
uint32_t GrowTable(Table* table, uint32_t delta, Element init) {
  uint32_t old_size = table->size;
  uint64_t new_size = uint64_t{old_size} + delta;
  if (new_size > table->max_size) return UINT32_MAX;
  if (delta == 0) return old_size;
  void* data = std::realloc(table->data, new_size * sizeof(Element));
  if (data == nullptr) return UINT32_MAX;
  table->data = static_cast<Element*>(data);
  for (uint64_t i = old_size; i < new_size; i++) table->data[i] = init;
  table->size = static_cast<uint32_t>(new_size);
  return old_size;
}

}  // namespace

extern "C" {

void wasm_rt_allocate_funcref_table(wasm_rt_funcref_table_t* table, uint32_t elements,
                                    uint32_t max_elements) {
  AllocateTable<wasm_rt_funcref_table_t, wasm_rt_funcref_t>(table, elements, max_elements);
}

void wasm_rt_free_funcref_table(wasm_rt_funcref_table_t* table) {
  std::free(table->data);
  *table = {};
}

void wasm_rt_allocate_externref_table(wasm_rt_externref_table_t* table, uint32_t elements,
                                      uint32_t max_elements) {
  AllocateTable<wasm_rt_externref_table_t, wasm_rt_externref_t>(table, elements, max_elements);
}

void wasm_rt_free_externref_table(wasm_rt_externref_table_t* table) {
  std::free(table->data);
  *table = {};
}

uint32_t wasm_rt_grow_funcref_table(wasm_rt_funcref_table_t* table, uint32_t delta,
                                    wasm_rt_funcref_t init) {
  return GrowTable(table, delta, init);
}

uint32_t wasm_rt_grow_externref_table(wasm_rt_externref_table_t* table, uint32_t delta,
                                      wasm_rt_externref_t init) {
  return GrowTable(table, delta, init);
}

}  // extern "C"
