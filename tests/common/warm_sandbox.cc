#include "common/warm_sandbox.h"

#include <chrono>
#include <optional>
#include <thread>

namespace plimsoll::testing {

std::string AwaitWarmSandbox(const Sandbox& sandbox) {
  using namespace std::chrono_literals;
  auto give_up = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    std::optional<PoolState> pool = sandbox.Describe().pool;
    if (!pool || !pool->enabled || pool->size == 0 || pool->ready > 0) return "";
    if (std::chrono::steady_clock::now() > give_up) {
      return "the warm pool held no ready sandbox within 60 s (start failures: " +
             std::to_string(pool->start_failures) + ")";
    }
    std::this_thread::sleep_for(50ms);
  }
}

}  // namespace plimsoll::testing
