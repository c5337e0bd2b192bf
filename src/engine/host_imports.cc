// Host imports of the guest module. See host_imports.h.
//
// Each import is an extern "C" function wasm2c's generated code calls
// directly. The pattern in every one of them: do the work inside a
// HostSection (the deadline signal cannot interrupt C++ code), let every C++
// object die, then TrapIfDeadlinePending() — a trap longjmps, and must never
// skip a destructor.
#include "engine/host_imports.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <string_view>

#include "base/display_format.h"
#include "engine/guest/abi.h"
#include "engine/runtime/wasm_runtime.h"
#include "quickjs_wasm.h"  // generated: the exact import signatures

namespace plimsoll::engine {
namespace {

// WASI errno values (wasi_snapshot_preview1).
constexpr u32 kWasiSuccess = 0;
constexpr u32 kWasiBadFileDescriptor = 8;
constexpr u32 kWasiFault = 21;
constexpr u32 kWasiInvalid = 28;
constexpr u32 kWasiNotSupported = 58;

constexpr u32 kClockRealtime = 0;
constexpr u32 kClockMonotonic = 1;
constexpr u32 kClockProcessCpu = 2;
constexpr u32 kClockThreadCpu = 3;

bool InBounds(const HostContext& context, u64 address, u64 length) {
  return context.memory != nullptr && address <= context.memory->size &&
         length <= context.memory->size - address;
}

uint8_t* GuestBytes(const HostContext& context, u64 address) {
  return context.memory->data + address;
}

bool StoreU32(HostContext& context, u32 address, u32 value) {
  if (!InBounds(context, address, 4)) return false;
  std::memcpy(GuestBytes(context, address), &value, 4);
  return true;
}

bool StoreU64(HostContext& context, u32 address, u64 value) {
  if (!InBounds(context, address, 8)) return false;
  std::memcpy(GuestBytes(context, address), &value, 8);
  return true;
}

// The bytes the `index`-th WASI iovec at `iovs` names (the caller checked
// that the iovec array itself is in linear memory), or nullopt when they are
// not all in linear memory.
std::optional<std::string_view> GuestIovec(HostContext& context, u32 iovs, u32 index) {
  u32 base, length;
  std::memcpy(&base, GuestBytes(context, u64{iovs} + u64{index} * 8), 4);
  std::memcpy(&length, GuestBytes(context, u64{iovs} + u64{index} * 8 + 4), 4);
  if (!InBounds(context, base, length)) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(GuestBytes(context, base)), length);
}

// One display() record: the MIME type, "\n", the bytes, gathered from the
// iovecs (display() writes each record in one call).
u32 FdWriteDisplay(HostContext& context, u32 iovs, u32 iovs_length, u32 written_address) {
  if (!InBounds(context, iovs, u64{iovs_length} * 8)) return kWasiFault;
  const size_t room = kMaxDisplayBytes - context.display_bytes + base::kMaxDisplayMimeBytes + 1;
  std::string record;
  bool over = context.displays.size() >= kMaxDisplays;
  u64 total = 0;
  for (u32 i = 0; i < iovs_length; i++) {
    std::optional<std::string_view> bytes = GuestIovec(context, iovs, i);
    if (!bytes) return kWasiFault;
    total += bytes->size();
    if (over || record.size() + bytes->size() > room) {
      over = true;
      continue;
    }
    record.append(*bytes);
  }
  size_t newline = record.find('\n');
  const bool well_formed = newline != std::string::npos &&
                           base::IsDisplayMime(std::string_view(record).substr(0, newline));
  if (!over && well_formed &&
      record.size() - newline - 1 > kMaxDisplayBytes - context.display_bytes) {
    over = true;
  }
  if (over) {
    context.displays_truncated = true;  // past the caps: this one and later ones
  } else if (well_formed) {
    Display display;
    display.mime = record.substr(0, newline);
    display.data = record.substr(newline + 1);
    context.display_bytes += display.data.size();
    context.displays.push_back(std::move(display));
  }  // else malformed (display() checks the type first): dropped
  return StoreU32(context, written_address, static_cast<u32>(total)) ? kWasiSuccess : kWasiFault;
}

u32 FdWrite(HostContext& context, u32 fd, u32 iovs, u32 iovs_length, u32 written_address) {
  wasm::HostSection host;
  if (fd == PLIMSOLL_DISPLAY_FD) return FdWriteDisplay(context, iovs, iovs_length, written_address);
  const bool value = fd == PLIMSOLL_VALUE_FD && context.value_channel;
  if (fd != 1 && fd != 2 && !value) return kWasiBadFileDescriptor;
  if (!InBounds(context, iovs, u64{iovs_length} * 8)) return kWasiFault;
  std::string& sink = value ? context.value : context.output[fd - 1];
  const size_t cap = value ? context.value_cap_bytes : context.output_cap_bytes;
  bool& truncated = value ? context.value_truncated : context.truncated[fd - 1];
  if (value) context.value_written = true;
  u64 total = 0;
  for (u32 i = 0; i < iovs_length; i++) {
    std::optional<std::string_view> bytes = GuestIovec(context, iovs, i);
    if (!bytes) return kWasiFault;
    size_t room = cap > sink.size() ? cap - sink.size() : 0;
    size_t kept = bytes->size() < room ? bytes->size() : room;
    if (kept < bytes->size()) truncated = true;
    sink.append(bytes->substr(0, kept));
    total += bytes->size();
  }
  // The guest is told everything was written: a capped stream is dropped,
  // not blocked, so the script runs on unchanged.
  if (!StoreU32(context, written_address, static_cast<u32>(total))) {
    return kWasiFault;
  }
  return kWasiSuccess;
}

u32 ClockTimeGet(HostContext& context, u32 clock, u32 time_address) {
  wasm::HostSection host;
  clockid_t id;
  switch (clock) {
    case kClockRealtime:
      id = CLOCK_REALTIME;
      break;
    case kClockMonotonic:
      id = CLOCK_MONOTONIC;
      break;
    case kClockProcessCpu:
      id = CLOCK_THREAD_CPUTIME_ID;
      break;  // ours alone
    case kClockThreadCpu:
      id = CLOCK_THREAD_CPUTIME_ID;
      break;
    default:
      return kWasiInvalid;
  }
  timespec now;
  if (clock_gettime(id, &now) != 0) return kWasiInvalid;
  u64 nanoseconds = static_cast<u64>(now.tv_sec) * 1'000'000'000u + static_cast<u64>(now.tv_nsec);
  return StoreU64(context, time_address, nanoseconds) ? kWasiSuccess : kWasiFault;
}

u32 RandomGet(HostContext& context, u32 buffer, u32 length) {
  wasm::HostSection host;
  if (!InBounds(context, buffer, length)) return kWasiFault;
  u32 filled = 0;
  while (filled < length) {
    ssize_t got = getrandom(GuestBytes(context, u64{buffer} + filled), length - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return kWasiInvalid;
    }
    filled += static_cast<u32>(got);
  }
  return kWasiSuccess;
}

u32 DeadlineReached(HostContext& context) {
  wasm::HostSection host;
  return std::chrono::steady_clock::now() >= context.soft_deadline ? 1 : 0;
}

// Sleeps until CLOCK_MONOTONIC reaches `monotonic_ms` or the soft deadline
// comes, whichever is first (see abi.h). The hard-deadline signal may cut a
// sleep short (EINTR): the loop sleeps again, and since the sleep ends at the
// soft deadline at the latest, it is never the sleep that the hard deadline
// has to stop.
u32 SleepUntil(HostContext& context, f64 monotonic_ms) {
  wasm::HostSection host;
  const auto deadline = context.soft_deadline;
  // NaN and anything before now: no sleep. Clamp to the deadline (and so to
  // a representable time) before converting.
  const auto now = std::chrono::steady_clock::now();
  if (now >= deadline) return 1;
  const double deadline_ms =
      std::chrono::duration<double, std::milli>(deadline.time_since_epoch()).count();
  const bool until_deadline = !(monotonic_ms < deadline_ms);
  const double target_ms = until_deadline ? deadline_ms : monotonic_ms;
  if (!(target_ms > 0)) return 0;
  const int64_t target_ns = static_cast<int64_t>(target_ms * 1e6);
  timespec wake = {static_cast<time_t>(target_ns / 1'000'000'000),
                   static_cast<long>(target_ns % 1'000'000'000)};
  // steady_clock is CLOCK_MONOTONIC on Linux (libstdc++), the clock the
  // guest reads through clock_time_get.
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nullptr) == EINTR) {
  }
  return until_deadline || std::chrono::steady_clock::now() >= deadline ? 1 : 0;
}

s32 HostCall(HostContext& context, u32 request, u32 length) {
  wasm::HostSection host;
  context.response.clear();
  if (length > PLIMSOLL_HOST_MAX_REQUEST || !InBounds(context, request, length)) {
    context.response = "The host call request is malformed.";
    return PLIMSOLL_HOST_BAD_REQUEST;
  }
  if (context.host_call == nullptr || !*context.host_call) {
    context.response =
        "This run has no grant: host calls are refused (ask for a grant "
        "profile to call the operator's APIs).";
    return PLIMSOLL_HOST_NO_GRANT;
  }
  HostAnswer answer = (*context.host_call)(
      std::string_view(reinterpret_cast<const char*>(GuestBytes(context, request)), length));
  context.response = std::move(answer.body);
  return answer.ok ? PLIMSOLL_HOST_OK : PLIMSOLL_HOST_REFUSED;
}

s32 HostResponseRead(HostContext& context, u32 buffer, u32 length) {
  wasm::HostSection host;
  size_t count = context.response.size() < length ? context.response.size() : length;
  if (!InBounds(context, buffer, count)) return -1;
  std::memcpy(GuestBytes(context, buffer), context.response.data(), count);
  return static_cast<s32>(count);
}

template <typename Instance>
HostContext& ContextOf(Instance* instance) {
  return *instance->context;
}

}  // namespace
}  // namespace plimsoll::engine

namespace engine = plimsoll::engine;
namespace wasm = plimsoll::engine::wasm;

extern "C" {

// ---- wasi_snapshot_preview1 -------------------------------------------------

u32 Z_wasi_snapshot_preview1Z_fd_write(Z_wasi_snapshot_preview1_instance_t* i, u32 fd, u32 iovs,
                                       u32 iovs_length, u32 written) {
  u32 result = engine::FdWrite(engine::ContextOf(i), fd, iovs, iovs_length, written);
  wasm::TrapIfDeadlinePending();
  return result;
}

u32 Z_wasi_snapshot_preview1Z_fd_close(Z_wasi_snapshot_preview1_instance_t* i, u32 fd) {
  (void)i;
  (void)fd;
  return engine::kWasiBadFileDescriptor;
}

u32 Z_wasi_snapshot_preview1Z_fd_seek(Z_wasi_snapshot_preview1_instance_t* i, u32 fd, u64 offset,
                                      u32 whence, u32 new_offset) {
  (void)i;
  (void)fd;
  (void)offset;
  (void)whence;
  (void)new_offset;
  return engine::kWasiBadFileDescriptor;
}

u32 Z_wasi_snapshot_preview1Z_fd_fdstat_get(Z_wasi_snapshot_preview1_instance_t* i, u32 fd,
                                            u32 stat) {
  (void)i;
  (void)fd;
  (void)stat;
  return engine::kWasiBadFileDescriptor;
}

u32 Z_wasi_snapshot_preview1Z_clock_time_get(Z_wasi_snapshot_preview1_instance_t* i, u32 clock,
                                             u64 precision, u32 time) {
  (void)precision;
  u32 result = engine::ClockTimeGet(engine::ContextOf(i), clock, time);
  wasm::TrapIfDeadlinePending();
  return result;
}

u32 Z_wasi_snapshot_preview1Z_random_get(Z_wasi_snapshot_preview1_instance_t* i, u32 buffer,
                                         u32 length) {
  u32 result = engine::RandomGet(engine::ContextOf(i), buffer, length);
  wasm::TrapIfDeadlinePending();
  return result;
}

// No arguments and no environment.
u32 Z_wasi_snapshot_preview1Z_args_sizes_get(Z_wasi_snapshot_preview1_instance_t* i, u32 count,
                                             u32 size) {
  engine::HostContext& context = engine::ContextOf(i);
  bool ok = engine::StoreU32(context, count, 0) && engine::StoreU32(context, size, 0);
  return ok ? engine::kWasiSuccess : engine::kWasiFault;
}
u32 Z_wasi_snapshot_preview1Z_args_get(Z_wasi_snapshot_preview1_instance_t* i, u32 argv,
                                       u32 buffer) {
  (void)i;
  (void)argv;
  (void)buffer;
  return engine::kWasiSuccess;
}
u32 Z_wasi_snapshot_preview1Z_environ_sizes_get(Z_wasi_snapshot_preview1_instance_t* i, u32 count,
                                                u32 size) {
  return Z_wasi_snapshot_preview1Z_args_sizes_get(i, count, size);
}
u32 Z_wasi_snapshot_preview1Z_environ_get(Z_wasi_snapshot_preview1_instance_t* i, u32 environ,
                                          u32 buffer) {
  return Z_wasi_snapshot_preview1Z_args_get(i, environ, buffer);
}

u32 Z_wasi_snapshot_preview1Z_fd_read(Z_wasi_snapshot_preview1_instance_t* i, u32 fd, u32 iovs,
                                      u32 iovs_length, u32 read) {
  (void)i;
  (void)fd;
  (void)iovs;
  (void)iovs_length;
  (void)read;
  return engine::kWasiBadFileDescriptor;
}

u32 Z_wasi_snapshot_preview1Z_sched_yield(Z_wasi_snapshot_preview1_instance_t* i) {
  (void)i;
  return engine::kWasiNotSupported;
}

// proc_exit ends the guest: recorded, then the instance is stopped (a trap
// the engine recognises through HostContext::exited).
void Z_wasi_snapshot_preview1Z_proc_exit(Z_wasi_snapshot_preview1_instance_t* i, u32 status) {
  engine::HostContext& context = engine::ContextOf(i);
  context.exited = true;
  context.exit_status = static_cast<int>(status);
  wasm_rt_trap(WASM_RT_TRAP_UNREACHABLE);
}

// ---- plimsoll ---------------------------------------------------------------

u32 Z_plimsollZ_deadline_reached(Z_plimsoll_instance_t* i) {
  u32 result = engine::DeadlineReached(engine::ContextOf(i));
  wasm::TrapIfDeadlinePending();
  return result;
}

u32 Z_plimsollZ_sleep_until(Z_plimsoll_instance_t* i, f64 monotonic_ms) {
  u32 result = engine::SleepUntil(engine::ContextOf(i), monotonic_ms);
  wasm::TrapIfDeadlinePending();
  return result;
}

u32 Z_plimsollZ_host_call(Z_plimsoll_instance_t* i, u32 request, u32 length) {
  s32 result = engine::HostCall(engine::ContextOf(i), request, length);
  wasm::TrapIfDeadlinePending();
  return static_cast<u32>(result);
}

u32 Z_plimsollZ_host_response_length(Z_plimsoll_instance_t* i) {
  return static_cast<u32>(engine::ContextOf(i).response.size());
}

u32 Z_plimsollZ_host_response_read(Z_plimsoll_instance_t* i, u32 buffer, u32 length) {
  s32 result = engine::HostResponseRead(engine::ContextOf(i), buffer, length);
  wasm::TrapIfDeadlinePending();
  return static_cast<u32>(result);
}

}  // extern "C"
