#include "broker/call_budget.h"

namespace plimsoll::broker {

CallBudget::CallBudget(const Profile& profile)
    : max_calls_(profile.max_calls),
      route_caps_(profile.route_max_calls.begin(), profile.route_max_calls.end()) {}

CallRefusal CallBudget::Take(std::string_view route) {
  std::lock_guard lock(mutex_);
  if (used_ >= max_calls_) return CallRefusal::kMaxCalls;
  if (auto cap = route_caps_.find(route); cap != route_caps_.end()) {
    auto used = by_route_.find(route);
    if (used == by_route_.end()) used = by_route_.emplace(std::string(route), 0).first;
    if (used->second >= cap->second) return CallRefusal::kRouteMaxCalls;
    ++used->second;
  }
  ++used_;
  return CallRefusal::kNone;
}

int64_t CallBudget::used() const {
  std::lock_guard lock(mutex_);
  return used_;
}

}  // namespace plimsoll::broker
