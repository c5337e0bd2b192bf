#include "cli/run_report.h"

#include "cli/exit_status.h"
#include "cli/human_output.h"
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

}  // namespace plimsoll::cli
