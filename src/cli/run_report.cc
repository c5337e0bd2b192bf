#include "cli/run_report.h"

#include <filesystem>

#include "cli/exit_status.h"
#include "cli/human_output.h"
#include "cli/save_displays.h"
#include "plimsoll/wire.h"

namespace plimsoll::cli {

int ReportError(const Error& error, bool json, std::ostream& out, std::ostream& err) {
  if (json) {
    out << ErrorToJson(error, "") << "\n";
  } else {
    PrintError(error, err);
  }
  return NotDispatchedReason(error) ? kExitNothingRan : kExitMayHaveRun;
}

int ReportResult(const Result& result, bool json, std::ostream& out, std::ostream& err,
                 std::string_view why) {
  if (json) {
    out << ResultToJson(result) << "\n";
  } else {
    PrintResult(result, out, why);
    if (result.isolation == Tier::kProcess) {
      err << "warning: isolation is process: this is no wall for hostile code.\n";
    }
  }
  return (result.exit_code == 0 && !result.timed_out) ? kExitRanOk : kExitRanFailed;
}

int ReportResultAndSave(const Result& result, bool json, std::string_view save_displays,
                        std::ostream& out, std::ostream& err, std::string_view why) {
  int status = ReportResult(result, json, out, err, why);
  if (save_displays.empty()) return status;
  Status saved = SaveDisplays(result, std::filesystem::path(save_displays), err);
  if (!saved.ok()) {
    err << "plimsoll: --save-displays: " << saved.error().message() << "\n";
    return kExitRanFailed;
  }
  return status;
}

}  // namespace plimsoll::cli
