#include "daemon/admission/token_bucket.h"

#include <algorithm>

namespace plimsoll::admission {

TokenBucket::TokenBucket(int64_t rate_per_min, int64_t burst)
    : rate_per_min_(0), burst_(0), interval_(0), tolerance_(0), tat_(Clock::TimePoint::min()) {
  Reconfigure(rate_per_min, burst, Clock::TimePoint::min());
}

void TokenBucket::Reconfigure(int64_t rate_per_min, int64_t burst, Clock::TimePoint now) {
  rate_per_min_ = std::max<int64_t>(rate_per_min, 1);
  burst_ = std::max<int64_t>(burst, 1);
  interval_ = std::chrono::duration_cast<Clock::Duration>(std::chrono::minutes(1)) / rate_per_min_;
  tolerance_ = interval_ * (burst_ - 1);
  if (tat_ != Clock::TimePoint::min() && tat_ - now > tolerance_ + interval_) {
    tat_ = now + tolerance_ + interval_;  // an emptier bucket than the new burst allows
  }
}

bool TokenBucket::TryTake(Clock::TimePoint now) {
  Clock::TimePoint start = std::max(tat_, now);
  if (start - now > tolerance_) return false;
  tat_ = start + interval_;
  return true;
}

Clock::Duration TokenBucket::WaitForNext(Clock::TimePoint now) const {
  Clock::TimePoint start = std::max(tat_, now);
  Clock::Duration wait = (start - now) - tolerance_;
  return std::max(wait, Clock::Duration::zero());
}

}  // namespace plimsoll::admission
