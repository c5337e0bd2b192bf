// POST /v1/runs: parse (protocol first), admit, run on the worker pool through
// the Sandbox (validation, floors against evidence, records) within the
// daemon's own bound, answer the flat result object of SPEC §4 — the same
// bytes `plimsoll run --json` prints — and hand the run's facts to the audit
// line.
#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "auth/scope.h"
#include "daemon/http/errors_to_http.h"
#include "daemon/server/audit.h"
#include "daemon/server/handlers.h"
#include "daemon/server/provider_errors.h"
#include "daemon/server/run_on_pool_bounded.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon {
namespace {

using std::chrono::milliseconds;

// `dispatch` on a worker thread; never throws. Dispatched runs (a result,
// or an error without the not-dispatched mark) are timed in the histogram.
Expected<Result> RunGuarded(const Dispatch& dispatch, Metrics& metrics,
                            const Request& request) noexcept {
  metrics.RunStarted();
  auto started = std::chrono::steady_clock::now();
  Expected<Result> result = Failure(ErrorCode::kInternal, "The run did not complete.");
  try {
    result = dispatch(request);
  } catch (const std::exception& exception) {
    result = Failure(ErrorCode::kInternal, std::string("The run threw: ") + exception.what());
  } catch (...) {
    result = Failure(ErrorCode::kInternal, "The run threw a non-standard exception.");
  }
  if (result.ok() || !result.error().not_dispatched()) {
    metrics.ObserveRunDuration(std::chrono::steady_clock::now() - started);
  }
  metrics.RunFinished();
  return result;
}

void CountRun(ApiServices& services, const ServedImage& image, const Expected<Result>& result) {
  if (result.ok()) {
    services.metrics.CountRun(result->provider, result->isolation,
                              result->timed_out ? "timed_out" : "exited");
  } else if (!result.error().not_dispatched()) {
    services.metrics.CountRun(image.sandbox.provider().name(), Tier::kUnknown, "failed");
  }
}

http::Answer WithAudit(http::Answer answer, nlohmann::ordered_json run) {
  answer.audit_details = nlohmann::ordered_json::object();
  answer.audit_details["run"] = std::move(run);
  return answer;
}

// The daemon's own bound passed before the provider returned: code may have
// run, so the answer carries no mark.
http::Answer CeilingExceeded(ApiServices& services, const ServedImage& image,
                             const http::RequestContext& context, milliseconds bound) {
  services.metrics.CountCeilingHit();
  services.metrics.CountRun(image.sandbox.provider().name(), Tier::kUnknown, "ceiling_exceeded");
  services.log.Warning(
      "A run (request ID " +
      (context.request_id.empty() ? std::string("none") : context.request_id) +
      ") did not return within its bound of " + std::to_string(bound.count()) +
      " ms (timeout, at most the run ceiling, plus grace); answered deadline_exceeded. Its "
      "worker and admission slot stay taken until the provider returns.");
  return http::ErrorAnswer(
      Failure(ErrorCode::kDeadlineExceeded,
              "The run did not finish within " + std::to_string(bound.count()) +
                  " ms (its timeout, at most the daemon's run ceiling, plus a grace). Its code "
                  "may have run; do not retry it automatically."),
      context.request_id, services.log);
}

}  // namespace

http::Answer PoolFullAnswer(ApiServices& services, const http::RequestContext& context) {
  http::Answer answer = http::ErrorAnswer(
      Refusal(NotDispatched::kCapacity,
              "Every run worker is busy and the run queue is full; try again shortly."),
      context.request_id, services.log);
  answer.headers.emplace_back("Retry-After", "1");
  return answer;
}

Expected<const ServedImage*> SelectImage(const ApiServices& services, std::string_view name) {
  if (name.empty()) return &services.images.front();
  std::string served;
  for (const ServedImage& image : services.images) {
    if (image.name == name) return &image;
    served += (served.empty() ? "\"" : ", \"") + image.name + "\"";
  }
  return Refusal(NotDispatched::kRequest, "This daemon serves no image named \"" +
                                              std::string(name) + "\"; it serves " + served +
                                              " (GET /v1/describe lists them).");
}

// Time spent waiting for a worker is taken from the grant's budget.
Expected<std::shared_ptr<broker::RunGrant>> OpenRunGrant(const ApiServices& services,
                                                         const Caller& caller,
                                                         const Request& request, bool in_session) {
  if (request.grant_profile.empty() || !broker::IsValidProfileName(request.grant_profile)) {
    return std::shared_ptr<broker::RunGrant>();  // none asked for, or the Sandbox refuses the name
  }
  // A caller needs both the scope (grants:PROFILE, grants:* or admin) and a
  // place in the profile's allowed_callers; every way of lacking one of them,
  // and a profile that does not exist, gets the same answer.
  const Error denied = Refusal(NotDispatched::kPermission, ErrorCode::kPermissionDenied,
                               std::string(broker::Broker::kPermissionDeniedMessage));
  if (services.broker == nullptr ||
      !auth::HasScope(caller, auth::GrantScope(request.grant_profile))) {
    return denied;
  }
  // The grant lives as long as the run may (ResolvedTimeoutMs, the one place).
  auto grant = services.broker->Open(request.grant_profile, caller.name,
                                     milliseconds(ResolvedTimeoutMs(request, services.run_bound.limits)),
                                     in_session);
  if (!grant.ok()) return grant.error();
  return std::shared_ptr<broker::RunGrant>(std::move(*grant));
}

boost::asio::awaitable<http::Answer> HandleRun(ApiServices& services,
                                               http::RequestContext& context) {
  Expected<Request> request = ParseRequestJson(context.body);
  if (!request.ok()) co_return http::ErrorAnswer(request.error(), context.request_id, services.log);
  Expected<const ServedImage*> image = SelectImage(services, request->image);
  if (!image.ok()) co_return http::ErrorAnswer(image.error(), context.request_id, services.log);
  const Caller no_caller;
  auto grant = OpenRunGrant(services, context.caller ? *context.caller : no_caller, *request,
                            /*in_session=*/false);
  if (!grant.ok()) co_return http::ErrorAnswer(grant.error(), context.request_id, services.log);
  Dispatch dispatch = [&sandbox = (*image)->sandbox, grant = *grant](const Request& admitted) {
    return sandbox.Run(admitted, grant.get());
  };
  co_return co_await AdmitAndRun(services, context, std::move(*request), **image,
                                 std::move(dispatch), nlohmann::ordered_json::object(), *grant);
}

boost::asio::awaitable<http::Answer> AdmitAndRun(ApiServices& services,
                                                 http::RequestContext& context, Request request_in,
                                                 const ServedImage& image, Dispatch dispatch,
                                                 nlohmann::ordered_json extra_audit,
                                                 std::shared_ptr<const broker::RunGrant> grant) {
  // (A local named as before, so the body below reads as it did.)
  std::optional<Request> request(std::move(request_in));
  nlohmann::ordered_json run_audit = RunAuditFields(*request, image.sandbox.provider().name());
  // Which image ran, where there is a choice.
  if (services.images.size() > 1) run_audit["image"] = image.name;
  for (auto& [key, value] : extra_audit.items()) run_audit[key] = value;

  // Admission (per-caller concurrency, global concurrency, caller rate;
  // src/daemon/admission/) before the pool; the pool's own bound is the last
  // line. The permit goes with the work and is released when the provider
  // returns, even after the daemon's bound has answered the client.
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
    co_return WithAudit(std::move(answer), std::move(run_audit));
  }
  // The timeout Sandbox::Run gives the provider (ResolvedTimeoutMs, the one
  // place it is decided; the bound's limits carry the ceiling), plus a grace.
  const milliseconds bound =
      milliseconds(ResolvedTimeoutMs(*request, services.run_bound.limits)) + services.run_bound.grace;
  const std::string required_environment = request->environment;
  // A named local, not a temporary: g++ 12 destroys non-trivial temporaries
  // of a co_await expression twice (seen under ASan).
  auto work = [dispatch = std::move(dispatch), &metrics = services.metrics,
               request = std::move(*request), permit = std::move(*permit)]() noexcept {
    return RunGuarded(dispatch, metrics, request);
  };
  auto outcome = co_await RunOnPoolBounded(services.pool, std::move(work), bound);
  if (outcome.kind == BoundedOutcomeKind::kFull) {
    co_return WithAudit(PoolFullAnswer(services, context), std::move(run_audit));
  }
  if (outcome.kind == BoundedOutcomeKind::kOverran) {
    co_return WithAudit(CeilingExceeded(services, image, context, bound), std::move(run_audit));
  }
  const Expected<Result>& result = *outcome.value;
  CountRun(services, image, result);
  if (grant != nullptr) {
    // Every call counts, also those of a run that ended in an error.
    BrokerSummary calls = result.ok() && result->broker ? *result->broker : grant->Summary();
    services.metrics.CountBrokerCalls(calls.profile, calls.calls - calls.denied, calls.denied);
    run_audit["broker_calls"] = calls.calls;
    run_audit["broker_denied"] = calls.denied;
    for (const broker::AdvisorFinding& finding : grant->OperatorFindings()) {
      services.log.Info("advisor (grant profile " + calls.profile + "): " + finding.advice.message);
    }
  }
  if (!result.ok()) {
    // Provider, runtime and console text stays in the log (provider_errors.h).
    const std::string daemon_environment = image.sandbox.Describe().environment;
    http::Answer answer =
        AnswerForRunError(result.error(), {required_environment, daemon_environment},
                          context.request_id, services.log);
    co_return WithAudit(std::move(answer), std::move(run_audit));
  }
  AddRunResult(run_audit, *result);
  co_return WithAudit(http::JsonAnswer(http::HttpStatus::ok, ResultToJson(*result)),
                      std::move(run_audit));
}

}  // namespace plimsoll::daemon
