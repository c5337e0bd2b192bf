// When a cross-cutting suite may skip a provider, and when it must not.
//
// A provider is skipped only for a named host precondition this machine
// lacks: not root (the OS-level providers), the runtime binary absent
// (oci:<runtime>), QEMU absent (microvm), no guest image or no microvm guest
// build. Anything else that stops a provider from opening or from passing
// its smoke test (its self-check found a hole in the wall, a runtime that is
// installed but fails) is a test failure, never a skip: otherwise a
// regression that breaks the wall would make every test of that provider
// skip while CTest says Passed.
//
// PLIMSOLL_REQUIRE_PROVIDERS (comma-separated suite parameters, e.g.
// "embedded,linux,oci:runc") names the providers this machine is known to
// host (`make test` sets it from scripts/hosted-providers): a listed provider
// must not be skipped for a host precondition either.
//
// Usage, in a fixture's SetUp:
//
//   PLIMSOLL_REQUIRE_HOST("oci:runsc");       // before trying: skip or fail
//   ...                                       // open the provider; if it fails:
//   HostVerdict verdict = JudgeUnavailable(name, error.message());
//   if (verdict.fail) FAIL() << verdict.message;
//   GTEST_SKIP() << verdict.message;
#ifndef PLIMSOLL_TESTS_COMMON_HOST_PRECONDITIONS_H_
#define PLIMSOLL_TESTS_COMMON_HOST_PRECONDITIONS_H_

#include <string>
#include <vector>

namespace plimsoll::testing {

// The named host precondition that suite parameter `parameter` ("linux",
// "oci:runsc", "microvm", ...) lacks on this machine, in words; "" when it
// has them all (or needs none, like `embedded`).
std::string MissingHostPrecondition(const std::string& parameter);

// The parameters PLIMSOLL_REQUIRE_PROVIDERS lists (empty when unset).
std::vector<std::string> RequiredProviders();
bool IsRequired(const std::string& parameter);

// What a suite does with a provider it could not open or whose evidence
// could not be collected (`why`): skip it (fail == false) only when a host
// precondition is missing and the provider is not required; the message says
// which, and starts with "skipped: " when it is a skip.
struct HostVerdict {
  bool fail = false;
  std::string message;
};
HostVerdict JudgeUnavailable(const std::string& parameter, const std::string& why);

// Whether this machine hosts `parameter` at all, before anything is tried:
// {false, ""} when it has every host precondition; a skip ("skipped: ...")
// when one is missing; a failure when one is missing but the provider is
// required. For tests of one provider (the provider tests, the crash and
// fault suites): PLIMSOLL_REQUIRE_HOST below applies it.
HostVerdict JudgeHost(const std::string& parameter);

}  // namespace plimsoll::testing

// In a GoogleTest test body or SetUp: fails, or skips with the reason, and
// returns, unless this machine hosts `parameter` (JudgeHost). What fails after
// this line (a runtime that is installed but broken, a smoke test that finds
// a hole) is the test's failure, never a skip.
#define PLIMSOLL_REQUIRE_HOST(parameter)                                       \
  do {                                                                         \
    const ::plimsoll::testing::HostVerdict plimsoll_host_verdict_ =            \
        ::plimsoll::testing::JudgeHost(parameter);                             \
    if (plimsoll_host_verdict_.fail) FAIL() << plimsoll_host_verdict_.message; \
    if (!plimsoll_host_verdict_.message.empty()) {                             \
      GTEST_SKIP() << plimsoll_host_verdict_.message;                          \
    }                                                                          \
  } while (false)

#endif  // PLIMSOLL_TESTS_COMMON_HOST_PRECONDITIONS_H_
