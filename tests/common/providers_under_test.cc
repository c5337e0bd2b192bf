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
    if (name == "disabled") continue;
    if (name == "oci") {
      // One wall per runtime: runc and crun (container), runsc (kernel).
      for (const char* runtime : {"oci:runc", "oci:crun", "oci:runsc"}) names.emplace_back(runtime);
      continue;
    }
    names.emplace_back(name);
  }
  return names;
}

std::string ProviderNameOf(const std::string& parameter) {
  return parameter.substr(0, parameter.find(':'));
}

}  // namespace plimsoll::testing
