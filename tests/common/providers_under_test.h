// Which providers a cross-cutting suite runs against: the first of the given
// environment variables that is set (a comma-separated list of names), else
// every provider this build knows except `disabled`, with `oci` as one entry
// per runtime ("oci:runc", "oci:crun", "oci:runsc"). A provider this machine
// cannot host stays in the list: the suites report it as skipped, with why.
#ifndef PLIMSOLL_TESTS_COMMON_PROVIDERS_UNDER_TEST_H_
#define PLIMSOLL_TESTS_COMMON_PROVIDERS_UNDER_TEST_H_

#include <initializer_list>
#include <string>
#include <vector>

namespace plimsoll::testing {

std::vector<std::string> ProvidersUnderTest(std::initializer_list<const char*> variables);

// The provider's own name in a suite parameter: "oci:runsc" -> "oci" (what
// results carry in `provider`).
std::string ProviderNameOf(const std::string& parameter);

}  // namespace plimsoll::testing

#endif  // PLIMSOLL_TESTS_COMMON_PROVIDERS_UNDER_TEST_H_
