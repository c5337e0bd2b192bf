// Shared fixture of the conformance suite: the same behavioural tests run
// against every provider this machine can host (DESIGN.md "One conformance
// suite"). A provider that cannot start here is skipped with its reason,
// never counted as passed.
//
// Which providers: $PLIMSOLL_CONFORMANCE_PROVIDERS (comma-separated) if set,
// else every provider this build knows except `disabled`.
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

  // Runs a JavaScript snippet; fails the test if it was refused.
  Result RunJavascript(const std::string& code, int64_t timeout_ms = 0);

 private:
  Sandbox* sandbox_ = nullptr;
  Description description_;
};

}  // namespace plimsoll::conformance

#endif  // PLIMSOLL_TESTS_CONFORMANCE_CONFORMANCE_H_
