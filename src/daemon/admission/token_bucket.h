// A per-caller rate limit: a token bucket holding up to `burst` runs that
// refills at `rate_per_min` runs per minute (docs/callers.md).
//
// Implemented as the equivalent generic cell rate algorithm: one integer
// "theoretical arrival time" instead of a fractional token count, so refill
// has no rounding drift and the wait until the next token is exact.
//
// Usage:
//   TokenBucket bucket(60, 60);         // 60 per minute, 60 at once
//   if (!bucket.TryTake(clock.Now())) Shed(bucket.WaitForNext(clock.Now()));
//
// Not thread-safe: the admission controller guards it.
#ifndef PLIMSOLL_DAEMON_ADMISSION_TOKEN_BUCKET_H_
#define PLIMSOLL_DAEMON_ADMISSION_TOKEN_BUCKET_H_

#include <cstdint>

#include "daemon/admission/clock.h"

namespace plimsoll::admission {

class TokenBucket {
 public:
  // Preconditions: rate_per_min >= 1, burst >= 1. A new bucket is full.
  TokenBucket(int64_t rate_per_min, int64_t burst);

  // Takes one token if there is one.
  bool TryTake(Clock::TimePoint now);

  // How long until TryTake would succeed (zero if it would now).
  Clock::Duration WaitForNext(Clock::TimePoint now) const;

  // Whether the bucket is full (an idle caller's state may be dropped).
  bool Full(Clock::TimePoint now) const { return tat_ <= now; }

  // Applies a changed limit, keeping the tokens already spent but never
  // more than the new burst allows.
  void Reconfigure(int64_t rate_per_min, int64_t burst, Clock::TimePoint now);

  int64_t rate_per_min() const { return rate_per_min_; }
  int64_t burst() const { return burst_; }

 private:
  int64_t rate_per_min_;
  int64_t burst_;
  Clock::Duration interval_;   // one token's worth of time
  Clock::Duration tolerance_;  // (burst - 1) intervals
  Clock::TimePoint tat_{};     // when the bucket will be full again
};

}  // namespace plimsoll::admission

#endif  // PLIMSOLL_DAEMON_ADMISSION_TOKEN_BUCKET_H_
