// The session routes (SPEC §9): open, call, state, close. A session belongs
// to the caller that opened it; an unknown, ended or another caller's ID is
// answered with one not_found whose bytes differ only in the request ID, so
// a caller learns nothing about IDs that are not its own (why a session of
// its own ended is in the audit log).
#include <chrono>
#include <memory>
#include <string>

#include "daemon/http/errors_to_http.h"
#include "daemon/server/handlers.h"
#include "daemon/server/provider_errors.h"
#include "daemon/server/run_on_pool_bounded.h"
#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon {
namespace {

const std::string& CallerName(const http::RequestContext& context) {
  static const std::string kNone;
  return context.caller ? context.caller->name : kNone;
}

http::Answer NotFound(ApiServices& services, const http::RequestContext& context) {
  return http::ErrorAnswer(Refusal(NotDispatched::kRequest, ErrorCode::kNotFound,
                                   "No open session of this caller has this ID."),
                           context.request_id, services.log);
}

std::string_view SessionId(const http::RequestContext& context) {
  return context.path_params.empty() ? std::string_view() : context.path_params.front();
}

}  // namespace

boost::asio::awaitable<http::Answer> HandleSessionOpen(ApiServices& services,
                                                       http::RequestContext& context) {
  Expected<SessionOpenRequest> request = ParseSessionOpenJson(context.body);
  if (!request.ok()) co_return http::ErrorAnswer(request.error(), context.request_id, services.log);
  Expected<const ServedImage*> image = SelectImage(services, request->options.image);
  if (!image.ok()) co_return http::ErrorAnswer(image.error(), context.request_id, services.log);
  // The sandbox takes the session under its own name, so a call naming the
  // default image's name is accepted like one naming none.
  Sandbox& sandbox = (*image)->sandbox;
  // Making the sandbox is slow work: a worker does it, within the evidence
  // budget the Sandbox gives the provider plus a grace.
  const std::chrono::milliseconds bound =
      Sandbox::kDefaultEvidenceBudget + services.run_bound.grace;
  auto work = [&registry = services.sessions, &sandbox, caller = CallerName(context),
               owner = request->owner,
               options = request->options]() noexcept -> Expected<std::shared_ptr<Session>> {
    try {
      return registry.Open(caller, owner, options, sandbox);
    } catch (const std::exception& exception) {
      return Failure(ErrorCode::kInternal,
                     std::string("Opening the session threw: ") + exception.what());
    }
  };
  auto outcome = co_await RunOnPoolBounded(services.pool, std::move(work), bound);
  if (outcome.kind == BoundedOutcomeKind::kFull) {
    co_return PoolFullAnswer(services, context);
  }
  if (outcome.kind == BoundedOutcomeKind::kOverran) {
    co_return http::ErrorAnswer(
        Failure(ErrorCode::kDeadlineExceeded,
                "The session's sandbox was not ready within " + std::to_string(bound.count()) +
                    " ms; if it opens later it is closed when its idle timeout passes."),
        context.request_id, services.log);
  }
  const Expected<std::shared_ptr<Session>>& session = *outcome.value;
  if (!session.ok()) {
    // Opening makes a sandbox: a provider's text is summarised as a run's is.
    const std::string daemon_environment = sandbox.Describe().environment;
    co_return AnswerForRunError(session.error(), {request->options.environment, daemon_environment},
                                context.request_id, services.log);
  }
  http::Answer answer =
      http::JsonAnswer(http::HttpStatus::created,
                       SessionOpenedToJson((*session)->Info(), sandbox.Describe().limits));
  answer.audit_details = nlohmann::ordered_json::object();
  answer.audit_details["session"] = SessionIdDigest((*session)->id());
  co_return answer;
}

boost::asio::awaitable<http::Answer> HandleSessionRun(ApiServices& services,
                                                      http::RequestContext& context) {
  std::shared_ptr<Session> session =
      services.sessions.Find(CallerName(context), SessionId(context));
  if (!session) co_return NotFound(services, context);
  // The session refuses a third concurrent call itself; refusing it here
  // too keeps it from taking a worker just to be told so.
  if (SessionInfo info = session->Info(); info.busy && info.queued) {
    co_return http::ErrorAnswer(
        Refusal(NotDispatched::kCapacity,
                "The session is running a call and another one is waiting; a session takes one "
                "call at a time and queues one more."),
        context.request_id, services.log);
  }
  Expected<Request> request = ParseRequestJson(context.body);
  if (!request.ok()) co_return http::ErrorAnswer(request.error(), context.request_id, services.log);
  nlohmann::ordered_json audit = nlohmann::ordered_json::object();
  audit["session"] = SessionIdDigest(session->id());
  // The session runs on the image it was opened on (a call naming another
  // is refused by Session::Run): that image's facts explain a failure.
  Expected<const ServedImage*> image = SelectImage(services, session->Info().image);
  if (!image.ok()) co_return http::ErrorAnswer(image.error(), context.request_id, services.log);
  const Caller no_caller;
  auto grant = OpenRunGrant(services, context.caller ? *context.caller : no_caller, *request,
                            /*in_session=*/true);
  if (!grant.ok()) co_return http::ErrorAnswer(grant.error(), context.request_id, services.log);
  Dispatch dispatch = [session, grant = *grant](const Request& admitted) {
    return session->Run(admitted, grant.get());
  };
  co_return co_await AdmitAndRun(services, context, std::move(*request), **image,
                                 std::move(dispatch), std::move(audit), *grant);
}

boost::asio::awaitable<http::Answer> HandleSessionState(ApiServices& services,
                                                        http::RequestContext& context) {
  std::shared_ptr<Session> session =
      services.sessions.Find(CallerName(context), SessionId(context));
  if (!session) co_return NotFound(services, context);
  co_return http::JsonAnswer(http::HttpStatus::ok, SessionStateToJson(session->Info()));
}

boost::asio::awaitable<http::Answer> HandleSessionClose(ApiServices& services,
                                                        http::RequestContext& context) {
  // Closing waits for a running call (bounded by its deadline) and destroys
  // the sandbox: a worker does it.
  auto work = [&registry = services.sessions, caller = CallerName(context),
               id = std::string(SessionId(context))]() noexcept {
    return registry.Close(caller, id);
  };
  const std::chrono::milliseconds bound = services.run_bound.ceiling + services.run_bound.grace;
  auto outcome = co_await RunOnPoolBounded(services.pool, std::move(work), bound);
  if (outcome.kind == BoundedOutcomeKind::kFull) {
    co_return PoolFullAnswer(services, context);
  }
  if (outcome.kind == BoundedOutcomeKind::kOverran) {
    co_return http::ErrorAnswer(
        Failure(ErrorCode::kDeadlineExceeded,
                "The session is closing but its last call has not returned yet."),
        context.request_id, services.log);
  }
  const std::optional<SessionClose>& closed = *outcome.value;
  if (!closed) co_return NotFound(services, context);
  co_return http::JsonAnswer(http::HttpStatus::ok, SessionCloseToJson(*closed));
}

}  // namespace plimsoll::daemon
