// For suite tests that time a run: a provider with a warm pool (oci,
// microvm) answers a run from a sandbox started ahead, or starts one for it
// when the pool is empty; a result's duration includes that start (seconds
// for a TCG VM). AwaitWarmSandbox waits until the pool holds a ready one, so
// the time a test measures is the run's.
//
// Usage:
//   if (std::string why = AwaitWarmSandbox(sandbox); !why.empty()) ADD_FAILURE() << why;
//   auto start = std::chrono::steady_clock::now();
//   auto result = sandbox.Run(request);
#ifndef PLIMSOLL_TESTS_COMMON_WARM_SANDBOX_H_
#define PLIMSOLL_TESTS_COMMON_WARM_SANDBOX_H_

#include <string>

#include "plimsoll/sandbox.h"

namespace plimsoll::testing {

// Returns once `sandbox`'s pool holds a ready sandbox, at once when it has
// no pool or its pool is off, and after 60 s at most: then with a sentence
// saying so (empty otherwise). Polls Describe() every 50 ms: the pool offers
// no event to wait on. Thread-safe as Sandbox::Describe is.
std::string AwaitWarmSandbox(const Sandbox& sandbox);

}  // namespace plimsoll::testing

#endif  // PLIMSOLL_TESTS_COMMON_WARM_SANDBOX_H_
