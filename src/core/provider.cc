#include "plimsoll/provider.h"

#include <algorithm>

namespace plimsoll {
namespace {

Error NoSessions(std::string_view provider) {
  return Refusal(NotDispatched::kUnsupported,
                 "The " + std::string(provider) + " provider does not support sessions.");
}

}  // namespace

Expected<Result> Provider::RunGranted(const Request& /*request*/, Deadline /*deadline*/,
                                      GrantedCalls& /*calls*/) {
  return Refusal(NotDispatched::kUnsupported,
                 "The " + std::string(name()) +
                     " provider does not serve grants yet: its guests have no path to the "
                     "broker, so a run naming a grant profile is refused and nothing ran.");
}

Expected<Result> ProviderSession::RunGranted(const Request& /*request*/, Deadline /*deadline*/,
                                             GrantedCalls& /*calls*/) {
  return Refusal(NotDispatched::kUnsupported,
                 "This session's sandbox does not serve grants: a session call naming a grant "
                 "profile is refused and nothing ran.");
}

bool Evidence::AllChecksPassed() const {
  return std::all_of(checks.begin(), checks.end(),
                     [](const EvidenceCheck& check) { return check.passed; });
}

Expected<std::unique_ptr<ProviderSession>> Provider::OpenSession(const SessionSpec& /*spec*/,
                                                                 Deadline /*deadline*/) {
  return NoSessions(name());
}

}  // namespace plimsoll
