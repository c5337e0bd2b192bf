#include "common/providers_under_test.h"

#include <cstdlib>
#include <sstream>

#include "plimsoll/provider.h"

namespace plimsoll::testing {

std::vector<std::string> ProvidersUnderTest(std::initializer_list<const char*> variables) {
  std::vector<std::string> names;
  for (const char* variable : variables) {
    const char* chosen = std::getenv(variable);
    if (chosen == nullptr || *chosen == '\0') continue;
    std::stringstream list(chosen);
    for (std::string name; std::getline(list, name, ',');) {
      if (!name.empty()) names.push_back(name);
    }
    return names;
  }
  for (std::string_view name : ProviderNames()) {
    if (name != "disabled") names.emplace_back(name);
  }
  return names;
}

}  // namespace plimsoll::testing
