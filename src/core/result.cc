#include "plimsoll/result.h"

namespace plimsoll {

std::string_view ProjectOutcomeName(ProjectOutcome outcome) {
  switch (outcome) {
    case ProjectOutcome::kCompleted:
      return "completed";
    case ProjectOutcome::kSetupFailed:
      return "setup_failed";
    case ProjectOutcome::kTimedOut:
      return "timed_out";
    case ProjectOutcome::kProtocolError:
      return "protocol_error";
  }
  return "protocol_error";
}

std::optional<ProjectOutcome> ParseProjectOutcome(std::string_view name) {
  for (ProjectOutcome outcome : {ProjectOutcome::kCompleted, ProjectOutcome::kSetupFailed,
                                 ProjectOutcome::kTimedOut, ProjectOutcome::kProtocolError}) {
    if (ProjectOutcomeName(outcome) == name) return outcome;
  }
  return std::nullopt;
}

}  // namespace plimsoll
