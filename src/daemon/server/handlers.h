// The handlers of the API and metrics listeners (SPEC §4), and the tables
// that bind them to routes.
//
// API listener (authenticated unless noted; scope in brackets):
//   GET    /v1/describe                 provider, tier, evidence, limits, images ...
//   POST   /v1/runs                     [runs] one run through the Sandbox
//   POST   /v1/sessions                 [sessions] open a session (SPEC §9)
//   POST   /v1/sessions/{id}/runs       [sessions] one call in it (admitted as a run)
//   GET    /v1/sessions/{id}            [sessions] its state
//   DELETE /v1/sessions/{id}            [sessions] close it
//   (an unknown, ended or another caller's session ID: the same not_found)
//   GET    /healthz                     no authentication: liveness
//   GET    /readyz                      no authentication: Preflight via the
//                                        ReadinessProbe (never on an I/O thread)
// Metrics listener (no authentication; loopback by default):
//   GET    /metrics                     Prometheus text format
//
// A run or session names one of the served images (`image`; none = the
// default, the first): SelectImage, before admission.
// A run is admitted first (global and per-caller concurrency and rate:
// a shed run is a `capacity` refusal, with Retry-After when the rate gives
// one), then goes to the WorkerPool (never run on an I/O thread); a full pool is a
// `capacity` refusal with Retry-After. A dispatched run is bounded by the
// daemon too (RunBound): when the provider has not returned by the run's
// deadline plus a grace, the answer is `deadline_exceeded` without the
// not-dispatched mark; the worker and the admission permit stay taken until
// the provider returns. Everything a handler receives from a request is
// handled as data: malformed input is a refusal, never a crash.
#ifndef PLIMSOLL_DAEMON_SERVER_HANDLERS_H_
#define PLIMSOLL_DAEMON_SERVER_HANDLERS_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>

#include "broker/broker.h"
#include "daemon/admission/admission_controller.h"
#include "daemon/http/router.h"
#include "daemon/log.h"
#include "daemon/server/evidence_monitor.h"
#include "daemon/server/metrics.h"
#include "daemon/server/readiness_probe.h"
#include "daemon/server/session_registry.h"
#include "daemon/server/worker_pool.h"
#include "plimsoll/image_info.h"
#include "plimsoll/sandbox.h"

namespace plimsoll::daemon {

// How long the run handler waits for a dispatched run: its timeout
// (ResolvedTimeoutMs of `limits`: the request's, else the provider's default
// for its kind, never more than the ceiling), plus the grace; counted from
// when a worker starts it. A grant lives for the timeout.
struct RunBound {
  // The provider's, read once when the server is built, with its
  // run_ceiling_ms at most `ceiling`.
  Limits limits;
  std::chrono::milliseconds ceiling{300'000};
  std::chrono::milliseconds grace{5'000};
};

// One image the daemon serves (SPEC §7; plimsolld --image NAME=PATH): its
// own Sandbox (so its own provider, warm pool and evidence) and monitor.
struct ServedImage {
  std::string name;  // what a request's `image` names
  Sandbox& sandbox;
  const EvidenceMonitor& evidence_monitor;
  const ImageContents& contents;  // read once at startup
};

// What the API handlers use. Everything must outlive the routers.
struct ApiServices {
  // The images served, the default first; never empty. Every image has the
  // same provider and limits (one --provider, one set of run limits).
  std::vector<ServedImage> images;
  WorkerPool& pool;
  Metrics& metrics;
  Log& log;
  const std::atomic<bool>& draining;          // /readyz answers 503 while true
  admission::AdmissionController& admission;  // checked by HandleRun before the pool
  const RunBound run_bound;                   // HandleRun's own deadline
  ReadinessProbe& readiness;                  // /readyz's preflight, off the event loop
  SessionRegistry& sessions;                  // the session routes' sessions
  // The grant profiles' broker (SPEC §8); null when the daemon has no grants
  // file, and then a run naming a profile is refused `permission`.
  const broker::Broker* broker = nullptr;
};

// The image a request names ("" = the default). An unknown name is
// Refusal(kRequest) listing the names served (nothing ran).
Expected<const ServedImage*> SelectImage(const ApiServices& services, std::string_view name);

// What a run route hands the worker: Sandbox::Run, or a session's Run.
using Dispatch = std::function<Expected<Result>(const Request&)>;

// The broker's grant for a run or session call naming a profile (null when
// it names none). The caller needs the scope (grants:PROFILE, grants:* or
// admin) and a place in the profile's allowed_callers; every way of lacking
// one, and an unknown profile, get the same `permission` refusal. A session
// call (`in_session`) also needs the profile's allow_in_sessions. The grant's
// budget is the run's timeout, counted from now.
Expected<std::shared_ptr<broker::RunGrant>> OpenRunGrant(const ApiServices& services,
                                                         const Caller& caller,
                                                         const Request& request, bool in_session);

// The `capacity` refusal (with Retry-After) for work the full pool refused.
http::Answer PoolFullAnswer(ApiServices& services, const http::RequestContext& context);

// The run path of POST /v1/runs and of session calls: admission, the worker
// pool within the daemon's bound (RunBound), metrics, the answer and its
// audit fields (`extra_audit` adds to them, e.g. the session's digest).
// `image` is the one the run goes to (its provider name and environment
// explain a failure). `grant` (null: none) is the run's broker grant, whose
// call counts go to the metrics and the audit line, the run's result or not,
// and whose operator findings (advisor.h) go to the operator's log.
boost::asio::awaitable<http::Answer> AdmitAndRun(ApiServices& services,
                                                 http::RequestContext& context, Request request,
                                                 const ServedImage& image, Dispatch dispatch,
                                                 nlohmann::ordered_json extra_audit,
                                                 std::shared_ptr<const broker::RunGrant> grant = {});

void AddApiRoutes(http::Router& router, ApiServices& services);
void AddMetricsRoutes(http::Router& router, Metrics& metrics);

boost::asio::awaitable<http::Answer> HandleDescribe(ApiServices& services,
                                                    http::RequestContext& context);
boost::asio::awaitable<http::Answer> HandleRun(ApiServices& services,
                                               http::RequestContext& context);
boost::asio::awaitable<http::Answer> HandleSessionOpen(ApiServices& services,
                                                       http::RequestContext& context);
boost::asio::awaitable<http::Answer> HandleSessionRun(ApiServices& services,
                                                      http::RequestContext& context);
boost::asio::awaitable<http::Answer> HandleSessionState(ApiServices& services,
                                                        http::RequestContext& context);
boost::asio::awaitable<http::Answer> HandleSessionClose(ApiServices& services,
                                                        http::RequestContext& context);
boost::asio::awaitable<http::Answer> HandleHealthz(http::RequestContext& context);
boost::asio::awaitable<http::Answer> HandleReadyz(ApiServices& services,
                                                  http::RequestContext& context);

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_HANDLERS_H_
