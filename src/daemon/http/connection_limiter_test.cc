#include "daemon/http/connection_limiter.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace plimsoll::daemon::http {
namespace {

using Rejection = ConnectionLimiter::Rejection;

TEST(ConnectionLimiter, OnePeerStopsAtItsCapAndOthersStillGetIn) {
  ConnectionLimiter limiter({.max_connections = 5, .max_per_peer = 3});
  std::vector<ConnectionLimiter::Slot> held;
  for (int i = 0; i < 3; ++i) {
    auto admitted = limiter.TryAcquire("ip:127.0.0.2");
    ASSERT_TRUE(std::holds_alternative<ConnectionLimiter::Slot>(admitted));
    held.push_back(std::move(std::get<ConnectionLimiter::Slot>(admitted)));
  }
  auto over = limiter.TryAcquire("ip:127.0.0.2");
  ASSERT_TRUE(std::holds_alternative<Rejection>(over));
  EXPECT_EQ(RejectionName(std::get<Rejection>(over)), "peer");

  auto other = limiter.TryAcquire("ip:127.0.0.3");
  ASSERT_TRUE(std::holds_alternative<ConnectionLimiter::Slot>(other));
  auto third = limiter.TryAcquire("ip:127.0.0.4");
  ASSERT_TRUE(std::holds_alternative<ConnectionLimiter::Slot>(third));
  auto full = limiter.TryAcquire("ip:127.0.0.5");
  ASSERT_TRUE(std::holds_alternative<Rejection>(full));
  EXPECT_EQ(RejectionName(std::get<Rejection>(full)), "global");
  EXPECT_EQ(limiter.open(), 5u);

  held.pop_back();  // a slot released is a place for anyone
  EXPECT_EQ(limiter.open_for("ip:127.0.0.2"), 2u);
  EXPECT_TRUE(std::holds_alternative<ConnectionLimiter::Slot>(limiter.TryAcquire("ip:127.0.0.5")));
}

TEST(ConnectionLimiter, RefusalsInProgressAreBounded) {
  ConnectionLimiter limiter({.max_connections = 1, .max_per_peer = 1});
  std::vector<std::unique_ptr<ConnectionLimiter::RefusalSlot>> refusing;
  for (size_t i = 0; i < ConnectionLimiter::kMaxRefusing; ++i) {
    refusing.push_back(limiter.TryBeginRefusal());
    ASSERT_NE(refusing.back(), nullptr);
  }
  EXPECT_EQ(limiter.TryBeginRefusal(), nullptr);
  refusing.pop_back();
  EXPECT_NE(limiter.TryBeginRefusal(), nullptr);
}

}  // namespace
}  // namespace plimsoll::daemon::http
