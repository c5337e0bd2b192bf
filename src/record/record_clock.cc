// RecordClock: wall-clock start, monotonic elapsed (SPEC §5: the end is
// start + monotonic elapsed, never before the start).
#include <chrono>
#include <cstdint>
#include <limits>

#include "plimsoll/record.h"

namespace plimsoll {

RecordClock RecordClock::Start() {
  // Read the monotonic origin first so the wall-clock read cannot be
  // counted twice in the elapsed time.
  auto origin = std::chrono::steady_clock::now();
  auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  return RecordClock(static_cast<int64_t>(wall), origin);
}

RecordClock::Span RecordClock::Stop() const {
  return StopAt(std::chrono::steady_clock::now());
}

RecordClock::Span RecordClock::StopAt(std::chrono::steady_clock::time_point now) const {
  int64_t elapsed_ms = 0;
  if (now > origin_) {
    elapsed_ms = static_cast<int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(now - origin_).count());
  }
  int64_t ended = 0;
  if (__builtin_add_overflow(started_unix_ms_, elapsed_ms, &ended)) {
    ended = std::numeric_limits<int64_t>::max();  // saturate rather than wrap
  }
  return Span{started_unix_ms_, ended};
}

}  // namespace plimsoll
