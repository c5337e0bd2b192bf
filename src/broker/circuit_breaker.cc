#include "broker/circuit_breaker.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

namespace plimsoll::broker {
namespace {

using std::chrono::seconds;

std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::optional<int> Digits(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// IMF-fixdate (RFC 9110 §5.6.7): "Sun, 06 Nov 1994 08:49:37 GMT".
std::optional<std::chrono::system_clock::time_point> ParseHttpDate(std::string_view text) {
  static constexpr std::array<std::string_view, 7> kDays = {"Mon", "Tue", "Wed", "Thu",
                                                            "Fri", "Sat", "Sun"};
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  // 0         1         2
  // 01234567890123456789012345678
  // Sun, 06 Nov 1994 08:49:37 GMT
  if (text.size() != 29 || text.substr(3, 2) != ", " || text[7] != ' ' || text[11] != ' ' ||
      text[16] != ' ' || text[19] != ':' || text[22] != ':' || text.substr(25) != " GMT") {
    return std::nullopt;
  }
  if (std::find(kDays.begin(), kDays.end(), text.substr(0, 3)) == kDays.end()) return std::nullopt;
  auto month = std::find(kMonths.begin(), kMonths.end(), text.substr(8, 3));
  if (month == kMonths.end()) return std::nullopt;
  auto day = Digits(text.substr(5, 2));
  auto year = Digits(text.substr(12, 4));
  auto hour = Digits(text.substr(17, 2));
  auto minute = Digits(text.substr(20, 2));
  auto second = Digits(text.substr(23, 2));
  if (!day || !year || !hour || !minute || !second) return std::nullopt;
  if (*hour > 23 || *minute > 59 || *second > 60) return std::nullopt;
  std::chrono::year_month_day date{
      std::chrono::year(*year),
      std::chrono::month(static_cast<unsigned>(month - kMonths.begin() + 1)),
      std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) return std::nullopt;
  return std::chrono::sys_days(date) + std::chrono::hours(*hour) + std::chrono::minutes(*minute) +
         seconds(*second);
}

}  // namespace

BreakerClock BreakerClock::System() {
  return BreakerClock{[] { return std::chrono::steady_clock::now(); },
                      [] { return std::chrono::system_clock::now(); }};
}

seconds RetryAfterWait(std::optional<std::string_view> retry_after,
                       std::chrono::system_clock::time_point wall_now) {
  if (!retry_after) return kDefaultRetryAfter;
  std::string_view value = TrimSpaces(*retry_after);
  if (!value.empty() && value.find_first_not_of("0123456789") == std::string_view::npos) {
    // Any number of digits: a long one is simply more than the cap.
    if (value.size() > 4) return kMaxRetryAfter;
    return std::min(seconds(*Digits(value)), kMaxRetryAfter);
  }
  if (auto date = ParseHttpDate(value)) {
    auto wait = std::chrono::ceil<seconds>(*date - wall_now);
    return std::clamp(wait, seconds(0), kMaxRetryAfter);
  }
  return kDefaultRetryAfter;
}

CircuitBreaker::CircuitBreaker(BreakerClock clock) : clock_(std::move(clock)) {}

CircuitBreaker::Admission CircuitBreaker::Admit() {
  std::lock_guard lock(mutex_);
  auto now = clock_.now();
  switch (state_) {
    case State::kClosed:
      return Admission::kCall;
    case State::kOpen:
      if (now < until_) return Admission::kRefuse;
      break;
    case State::kProbing:
      if (now - probe_started_ < kProbeLease) return Admission::kRefuse;
      break;
  }
  state_ = State::kProbing;
  probe_started_ = now;
  return Admission::kProbe;
}

void CircuitBreaker::OpenLocked(std::optional<std::string_view> retry_after) {
  auto until = clock_.now() + RetryAfterWait(retry_after, clock_.wall_now());
  // A second 429 while already open never shortens the wait.
  until_ = state_ == State::kOpen ? std::max(until_, until) : until;
  state_ = State::kOpen;
}

void CircuitBreaker::RecordAnswer(int status, std::optional<std::string_view> retry_after) {
  std::lock_guard lock(mutex_);
  if (status == 429 || status == 503) OpenLocked(retry_after);
}

void CircuitBreaker::RecordProbeAnswer(int status, std::optional<std::string_view> retry_after) {
  std::lock_guard lock(mutex_);
  const bool backoff = status == 429 || status == 503;
  if (state_ != State::kProbing) {
    if (backoff) OpenLocked(retry_after);
    return;
  }
  if (backoff || status == 0) {
    OpenLocked(retry_after);
  } else {
    state_ = State::kClosed;
  }
}

void CircuitBreaker::RecordHealthCheck(int status, std::optional<std::string_view> retry_after) {
  std::lock_guard lock(mutex_);
  bool healthy = status >= 200 && status < 300;
  if (state_ != State::kProbing) {
    if (status == 429 || status == 503) OpenLocked(retry_after);
    return;
  }
  if (healthy) {
    state_ = State::kClosed;
  } else {
    OpenLocked(retry_after);
  }
}

void CircuitBreaker::AbandonProbe() {
  std::lock_guard lock(mutex_);
  if (state_ != State::kProbing) return;
  // until_ passed before the probe was admitted, so the next Admit probes.
  state_ = State::kOpen;
  until_ = std::min(until_, clock_.now());
}

CircuitBreaker::State CircuitBreaker::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

std::chrono::steady_clock::duration CircuitBreaker::RetryIn() const {
  std::lock_guard lock(mutex_);
  if (state_ != State::kOpen) return {};
  auto now = clock_.now();
  return now < until_ ? until_ - now : std::chrono::steady_clock::duration{};
}

}  // namespace plimsoll::broker
