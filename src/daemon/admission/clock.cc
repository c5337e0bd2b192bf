#include "daemon/admission/clock.h"

namespace plimsoll::admission {
namespace {

class SteadyClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace

const Clock& SystemClock() {
  static const SteadyClock clock;
  return clock;
}

}  // namespace plimsoll::admission
