// A monotonic clock that tests can drive (admission rates, timeouts).
//
// Usage:
//   admission::AdmissionController controller(limits);          // SystemClock()
//   admission::FakeClock clock;                                  // in tests
//   admission::AdmissionController controller(limits, clock);
//   clock.Advance(std::chrono::seconds(1));
//
// Thread-safety: Now() may be called from any thread; FakeClock may be
// advanced from any thread.
#ifndef PLIMSOLL_DAEMON_ADMISSION_CLOCK_H_
#define PLIMSOLL_DAEMON_ADMISSION_CLOCK_H_

#include <atomic>
#include <chrono>

namespace plimsoll::admission {

class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

// std::chrono::steady_clock; lives for the whole program.
const Clock& SystemClock();

// Starts at an arbitrary fixed point and moves only when told.
class FakeClock final : public Clock {
 public:
  TimePoint Now() const override { return TimePoint(Duration(ticks_.load())); }
  void Advance(Duration by) { ticks_.fetch_add(by.count()); }

 private:
  std::atomic<Duration::rep> ticks_{
      std::chrono::duration_cast<Duration>(std::chrono::hours(1)).count()};
};

}  // namespace plimsoll::admission

#endif  // PLIMSOLL_DAEMON_ADMISSION_CLOCK_H_
