// The call caps of one run under one grant profile: `max_calls` and
// `route_max_calls` (SPEC §8).
//
// The broker asks Take() for every call that matched an allow entry, before
// it goes upstream. A call refused by a route's cap does not spend the
// profile's budget; a call refused for any other reason (bad path, not
// allowed) never reaches Take() and is only counted in the trace.
//
// Usage:
//
//   CallBudget budget(profile);  // one per run
//   CallRefusal refusal = budget.Take(matched->text());
//   if (refusal != CallRefusal::kNone) return Refused(refusal);  // max_calls, route_max_calls
//
// Thread-safe.
#ifndef PLIMSOLL_BROKER_CALL_BUDGET_H_
#define PLIMSOLL_BROKER_CALL_BUDGET_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "broker/grants.h"
#include "broker/trace.h"

namespace plimsoll::broker {

class CallBudget {
 public:
  // Copies the caps; `profile` need not outlive the budget.
  explicit CallBudget(const Profile& profile);

  // Spends one call of `route` ("GET /items/*", an allow entry's text):
  // kNone when it may go, kMaxCalls or kRouteMaxCalls when a cap is spent.
  CallRefusal Take(std::string_view route);

  // Calls that Take() let through.
  int64_t used() const;

 private:
  int64_t max_calls_;
  std::map<std::string, int64_t, std::less<>> route_caps_;
  mutable std::mutex mutex_;
  int64_t used_ = 0;                                      // guarded by mutex_
  std::map<std::string, int64_t, std::less<>> by_route_;  // guarded by mutex_
};

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_CALL_BUDGET_H_
