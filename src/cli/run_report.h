// How `plimsoll run` ends: the result or the error printed the way the
// caller asked (people or --json), and the exit status of
// cli/exit_status.h. Shared by the in-process path and `--daemon`, so both
// print and exit exactly alike.
//
// Usage:
//   if (!result.ok()) return ReportError(result.error(), options.json, out, err);
//   return ReportResult(*result, options.json, out, err);
#ifndef PLIMSOLL_CLI_RUN_REPORT_H_
#define PLIMSOLL_CLI_RUN_REPORT_H_

#include <ostream>
#include <string_view>

#include "plimsoll/result.h"

namespace plimsoll::cli {

// Prints `error` (to `out` as the API's JSON with --json, else to `err` as
// "nothing ran: ..." or "error (the code may have run): ...") and returns
// kExitNothingRan for a refusal, kExitMayHaveRun otherwise.
int ReportError(const Error& error, bool json, std::ostream& out, std::ostream& err);

// Prints `result` (JSON or human, plus the process-tier warning on `err`;
// the human form names `why`, the evidence's reason for the tier, when
// given) and returns kExitRanOk or kExitRanFailed.
int ReportResult(const Result& result, bool json, std::ostream& out, std::ostream& err,
                 std::string_view why = {});

// ReportResult, then (when `save_displays` is not empty) the displays saved
// there (save_displays.h; "saved:" lines on `err`). A save that fails is
// reported on `err` and makes the status kExitRanFailed: the code ran.
int ReportResultAndSave(const Result& result, bool json, std::string_view save_displays,
                        std::ostream& out, std::ostream& err, std::string_view why = {});

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_RUN_REPORT_H_
