#include "plimsoll/provider.h"

#include <algorithm>

namespace plimsoll {
namespace {

Error NoSessions(std::string_view provider) {
  return Refusal(NotDispatched::kUnsupported,
                 "The " + std::string(provider) + " provider does not support sessions.");
}

}  // namespace

bool Evidence::AllChecksPassed() const {
  return std::all_of(checks.begin(), checks.end(),
                     [](const EvidenceCheck& check) { return check.passed; });
}

Expected<std::string> Provider::OpenSession(Deadline /*deadline*/) {
  return NoSessions(name());
}

Expected<Result> Provider::RunInSession(std::string_view /*session_id*/, const Request& /*request*/,
                                        Deadline /*deadline*/) {
  return NoSessions(name());
}

Status Provider::CloseSession(std::string_view /*session_id*/) {
  return NoSessions(name());
}

}  // namespace plimsoll
