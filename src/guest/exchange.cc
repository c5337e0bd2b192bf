#include "guest/exchange.h"

#include "guest/report_bounds.h"

namespace plimsoll::guest {

Status ExchangeJob(int channel, const Job& job, const Request& request,
                   std::chrono::steady_clock::time_point report_deadline, Result* result,
                   Report* report_out, GrantedCalls* calls) {
  PLIMSOLL_RETURN_IF_ERROR(WriteFrame(channel, EncodeJob(job), report_deadline));
  auto report = ReadSealedReport(channel, job, report_deadline, calls);
  if (!report.ok()) return report.error();
  FillResult(request, *report, result);
  if (report_out) *report_out = std::move(*report);
  return Status::Ok();
}

Expected<Result> AnswerFailedExchange(const Request& request, const Error& failure,
                                      const std::string& message, Result result) {
  if (failure.code() == ErrorCode::kDeadlineExceeded) {
    result.exit_code = kExitTimedOut;
    result.timed_out = true;
    if (request.project) result.outcome = ProjectOutcome::kTimedOut;
    return result;
  }
  if (request.project) {
    result.outcome = ProjectOutcome::kProtocolError;
    result.exit_code = 1;
    result.stderr_bytes = message;
    return result;
  }
  return Failure(ErrorCode::kInternal, message);
}

}  // namespace plimsoll::guest
