#include "native_imports.h"

#include <time.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "abi.h"

// From the guest driver (driver.h includes quickjs.h, which is C, not C++).
extern "C" {
int32_t plimsoll_run(const char* code, uint32_t length, uint32_t js_memory_limit, uint32_t flags);

namespace {
std::string* g_out[2];
}  // namespace

void plimsoll_native_write(int fd, const char* bytes, size_t length) {
  if ((fd == 1 || fd == 2) && g_out[fd - 1] != nullptr) g_out[fd - 1]->append(bytes, length);
}
int32_t plimsoll_deadline_reached(void) {
  return 0;
}
// No deadline natively: sleeps until the timer is due (as the engine's host).
int32_t plimsoll_sleep_until(double monotonic_ms) {
  if (!(monotonic_ms > 0)) return 0;
  const auto target_ns = static_cast<int64_t>(monotonic_ms * 1e6);
  timespec wake = {static_cast<time_t>(target_ns / 1'000'000'000),
                   static_cast<long>(target_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nullptr) == EINTR) {
  }
  return 0;
}
int32_t plimsoll_host_call(const char*, int32_t) {
  return PLIMSOLL_HOST_NO_GRANT;
}
int32_t plimsoll_host_response_length(void) {
  return 0;
}
int32_t plimsoll_host_response_read(char*, int32_t) {
  return 0;
}
}

namespace plimsoll::bench {

NativeRun RunNative(std::string_view code, size_t memory_bytes) {
  NativeRun run;
  g_out[0] = &run.stdout_bytes;
  g_out[1] = &run.stderr_bytes;
  std::string source(code);  // NUL-terminated
  run.exit_code = plimsoll_run(source.c_str(), static_cast<uint32_t>(source.size()),
                               static_cast<uint32_t>(memory_bytes), 0);
  g_out[0] = g_out[1] = nullptr;
  return run;
}

}  // namespace plimsoll::bench
