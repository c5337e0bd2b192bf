// Shared fixture of the conformance suite: the same behavioural tests run
// against every provider this machine can host (DESIGN.md "One conformance
// suite"). A provider is skipped (with its reason, never counted as passed)
// only for a named host precondition it lacks; one that has them all but
// fails to open or to pass its smoke test fails every test, and
// PLIMSOLL_REQUIRE_PROVIDERS turns a skip into a failure too
// (tests/common/host_preconditions.h).
//
// Which providers: $PLIMSOLL_CONFORMANCE_PROVIDERS (comma-separated) if set,
// else every provider this build knows except `disabled`.
//
// Expected differences are written where they occur, each stating why and
// what still holds. `microvm` boots one VM per run (seconds under TCG), so:
// timed tests first wait for a warm VM (AwaitWarmSandbox: the run's own
// time starts once its VM is up, and the tests time the run), and the
// concurrency test makes fewer runs per thread. Under TCG (software
// emulation) python3 needs 0.5-0.9 s to start, so the deadlines that must cut
// a python3 step mid-run are scaled (EmulationScaledMs).
#ifndef PLIMSOLL_TESTS_CONFORMANCE_CONFORMANCE_H_
#define PLIMSOLL_TESTS_CONFORMANCE_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "plimsoll/sandbox.h"

namespace plimsoll::conformance {

std::vector<std::string> ProvidersUnderTest();

class ConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;

  // The provider's sandbox, shared by every test of one provider so that its
  // evidence is collected once.
  Sandbox& sandbox() { return *sandbox_; }
  const Description& description() const { return description_; }
  bool Accepts(PayloadKind kind) const;

  // Runs `request`; fails the test if it was refused or its record does not
  // match the exchange (CheckExchange).
  Result RunChecked(const Request& request);

  // Runs a JavaScript snippet; fails the test if it was refused.
  Result RunJavascript(const std::string& code, int64_t timeout_ms = 0);

  // For a test that times a run: when the provider keeps a warm pool, waits
  // until it holds a ready sandbox (at most 60 s; the test fails if it does
  // not), so that the time measured is the run's and not a cold start's.
  // Returns at once for providers without a pool or with the pool off.
  void AwaitWarmSandbox();

  // Whether every run of this provider boots a VM of its own (`microvm`).
  bool EachRunBootsAVm() const { return description_.provider == "microvm"; }
  // Whether the guest's CPU is emulated in software (`microvm` under TCG,
  // tier kernel): every guest instruction is translated, so starting
  // python3 takes 0.5-0.9 s instead of ~20 ms.
  bool UnderSoftwareEmulation() const {
    return description_.provider == "microvm" && description_.tier != Tier::kVm;
  }
  // A deadline of `ms` for a test that must cut a python3 step while it
  // runs: 4x under software emulation (see above), else `ms` unchanged.
  int64_t EmulationScaledMs(int64_t ms) const { return UnderSoftwareEmulation() ? 4 * ms : ms; }

 private:
  Sandbox* sandbox_ = nullptr;
  Description description_;
};

}  // namespace plimsoll::conformance

#endif  // PLIMSOLL_TESTS_CONFORMANCE_CONFORMANCE_H_
