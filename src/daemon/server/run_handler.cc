// POST /v1/runs: parse (protocol first), run on the worker pool through the
// Sandbox (validation, floors against evidence, records), answer the flat
// result object of SPEC §4 — the same bytes `plimsoll run --json` prints.
#include <algorithm>
#include <chrono>
#include <exception>
#include <string>

#include "daemon/http/errors_to_http.h"
#include "daemon/server/handlers.h"
#include "daemon/server/run_on_pool.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon {
namespace {

// Sandbox::Run on a worker thread; never throws.
Expected<Result> RunGuarded(Sandbox& sandbox, Metrics& metrics, const Request& request) noexcept {
  metrics.RunStarted();
  Expected<Result> result = Failure(ErrorCode::kInternal, "The run did not complete.");
  try {
    result = sandbox.Run(request);
  } catch (const std::exception& exception) {
    result = Failure(ErrorCode::kInternal, std::string("The run threw: ") + exception.what());
  } catch (...) {
    result = Failure(ErrorCode::kInternal, "The run threw a non-standard exception.");
  }
  metrics.RunFinished();
  return result;
}

void CountRun(ApiServices& services, const Expected<Result>& result) {
  if (result.ok()) {
    services.metrics.CountRun(result->provider, result->isolation,
                              result->timed_out ? "timed_out" : "exited");
  } else if (!result.error().not_dispatched()) {
    services.metrics.CountRun(services.sandbox.provider().name(), Tier::kUnknown, "failed");
  }
}

}  // namespace

boost::asio::awaitable<http::Answer> HandleRun(ApiServices& services,
                                               http::RequestContext& context) {
  Expected<Request> request = ParseRequestJson(context.body);
  if (!request.ok()) co_return http::ErrorAnswer(request.error(), context.request_id, services.log);

  // Admission (per-caller concurrency, global concurrency, caller rate;
  // src/daemon/admission/) before the pool; the pool's own bound is the last
  // line. The permit is held until the coroutine returns, across the await.
  admission::ShedInfo shed;
  const Caller no_caller;
  const Caller& caller = context.caller ? *context.caller : no_caller;
  Expected<admission::Permit> permit =
      services.admission.TryAdmit({.name = caller.name,
                                   .max_concurrent = caller.max_concurrent,
                                   .rate_per_min = caller.rate_per_min},
                                  &shed);
  if (!permit.ok()) {
    services.metrics.CountShed(admission::ShedReasonName(shed.reason));
    http::Answer answer = http::ErrorAnswer(permit.error(), context.request_id, services.log);
    if (shed.retry_after > admission::Clock::Duration::zero()) {
      auto seconds = std::chrono::ceil<std::chrono::seconds>(shed.retry_after).count();
      answer.headers.emplace_back("Retry-After", std::to_string(std::max<int64_t>(seconds, 1)));
    }
    co_return answer;
  }
  // A named local, not a temporary: g++ 12 destroys non-trivial temporaries
  // of a co_await expression twice (seen under ASan).
  auto work = [&sandbox = services.sandbox, &metrics = services.metrics,
               request = std::move(*request)]() noexcept {
    return RunGuarded(sandbox, metrics, request);
  };
  auto outcome = co_await RunOnPool(services.pool, std::move(work));
  if (!outcome) {
    http::Answer answer = http::ErrorAnswer(
        Refusal(NotDispatched::kCapacity,
                "Every run worker is busy and the run queue is full; try again shortly."),
        context.request_id, services.log);
    answer.headers.emplace_back("Retry-After", "1");
    co_return answer;
  }
  CountRun(services, *outcome);
  if (!outcome->ok()) {
    co_return http::ErrorAnswer(outcome->error(), context.request_id, services.log);
  }
  co_return http::JsonAnswer(http::HttpStatus::ok, ResultToJson(outcome->value()));
}

}  // namespace plimsoll::daemon
