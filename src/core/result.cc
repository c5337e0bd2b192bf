#include "plimsoll/result.h"

#include "base/display_format.h"

namespace plimsoll {

void MeasureDisplays(std::vector<Display>& displays) {
  for (Display& display : displays) {
    std::optional<base::PixelSize> size =
        display.mime == "image/png" ? base::PngSize(display.data) : std::nullopt;
    display.width = size ? size->width : 0;
    display.height = size ? size->height : 0;
  }
}

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
