#include "daemon/server/server.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "daemon/http/errors_to_http.h"
#include "daemon/http/tls.h"

namespace plimsoll::daemon {

namespace asio = boost::asio;

namespace {

std::vector<ImageToServe> OneImage(Sandbox& sandbox) {
  std::string name = sandbox.image_name();
  return {ImageToServe{name.empty() ? "default" : name, &sandbox, {}}};
}

// The provider's limits with the daemon's run ceiling, which plimsolld gives
// its providers anyway (daemon_main.cc): the run handler's bound and grants
// resolve timeouts from these (RunBound).
Limits BoundLimits(Limits limits, std::chrono::milliseconds ceiling) {
  limits.run_ceiling_ms = std::min(limits.run_ceiling_ms, int64_t{ceiling.count()});
  return limits;
}

}  // namespace

Server::Server(const Settings& settings, Sandbox& sandbox, Authenticator& authenticator, Log& log,
               AuditLog* audit, const broker::Broker* broker)
    : Server(settings, OneImage(sandbox), authenticator, log, audit, broker) {}

Server::Server(const Settings& settings, std::vector<ImageToServe> images,
               Authenticator& authenticator, Log& log, AuditLog* audit,
               const broker::Broker* broker)
    : settings_(settings),
      log_(log),
      images_(std::move(images)),
      api_limiter_({.max_connections = settings.max_connections,
                    .max_per_peer = settings.max_connections_per_peer}),
      metrics_limiter_({.max_connections = settings.max_connections,
                        .max_per_peer = settings.max_connections_per_peer}),
      readiness_(
          [this]() -> Status {
            for (const ImageToServe& image : images_) {
              PLIMSOLL_RETURN_IF_ERROR(image.sandbox->provider().Preflight());
            }
            return Status::Ok();
          },
          {},
          [this](const Status& result) {
            metrics_.CountReadinessCheck(result.ok() ? "passed" : "failed");
          }),
      pool_({.workers = settings.run_workers, .queue_capacity = settings.run_queue}),
      admission_({.max_concurrent = static_cast<int64_t>(settings.max_concurrent_runs > 0
                                                             ? settings.max_concurrent_runs
                                                             : settings.run_workers)}),
      evidence_statuses_(images_.size()),
      evidence_monitors_(MakeEvidenceMonitors()),
      operator_log_audit_(audit == nullptr ? AuditLog::ToOperatorLog(log) : nullptr),
      audit_(audit != nullptr ? *audit : *operator_log_audit_),
      sessions_(SessionCaps{.per_caller = settings.max_sessions_per_caller,
                            .per_owner = settings.max_sessions_per_owner,
                            .total = settings.max_sessions},
                [this](const SessionEnded& ended) { AuditSessionEnd(ended); }),
      services_{ServedImages(),
                pool_,
                metrics_,
                log,
                draining_,
                admission_,
                RunBound{BoundLimits(images_.front().sandbox->Describe().limits,
                                     settings.run_ceiling),
                         settings.run_ceiling, settings.run_grace},
                readiness_,
                sessions_,
                broker},
      api_router_(&authenticator, log),
      metrics_router_(nullptr, log),
      api_environment_{api_router_,
                       log,
                       settings.http,
                       registry_,
                       [this](const http::Answer& answer, const http::AnswerContext& facts) {
                         HandleAnswer(answer, facts);
                       },
                       &api_limiter_,
                       [this](http::ConnectionLimiter::Rejection rejection) {
                         metrics_.CountConnectionRejected(http::RejectionName(rejection));
                       },
                       settings.dev},
      metrics_environment_{metrics_router_,
                           log,
                           settings.http,
                           registry_,
                           {},
                           &metrics_limiter_,
                           [this](http::ConnectionLimiter::Rejection rejection) {
                             metrics_.CountConnectionRejected(http::RejectionName(rejection));
                           },
                           settings.dev},
      api_tcp_(io_context_, api_environment_) {
  AddApiRoutes(api_router_, services_);
  // The pools of every image together (each image's sandbox has its own).
  metrics_.SetPoolSource([this]() -> std::optional<PoolState> {
    std::optional<PoolState> total;
    for (const ImageToServe& image : images_) {
      std::optional<PoolState> pool = image.sandbox->Describe().pool;
      if (!pool) continue;
      if (!total) {
        total = pool;
        continue;
      }
      total->size += pool->size;
      total->ready += pool->ready;
      total->enabled = total->enabled && pool->enabled;
      total->handed_out += pool->handed_out;
      total->found_empty += pool->found_empty;
      total->unhealthy += pool->unhealthy;
      total->start_failures += pool->start_failures;
    }
    return total;
  });
  metrics_.SetOpenConnectionsSource([this] {
    return std::map<std::string, uint64_t>{{"api", api_limiter_.open()},
                                           {"metrics", metrics_limiter_.open()}};
  });
  AddMetricsRoutes(metrics_router_, metrics_);
  if (!settings_.unix_socket.empty()) {
    api_unix_.emplace(io_context_, api_environment_);
    api_unix_->UseMode(settings_.unix_socket_mode);
  }
  if (settings_.metrics_listen != "off") metrics_tcp_.emplace(io_context_, metrics_environment_);
}

std::vector<std::unique_ptr<EvidenceMonitor>> Server::MakeEvidenceMonitors() {
  std::vector<std::unique_ptr<EvidenceMonitor>> monitors;
  for (size_t index = 0; index < images_.size(); ++index) {
    monitors.push_back(std::make_unique<EvidenceMonitor>(
        *images_[index].sandbox, log_,
        EvidenceMonitor::Options{.interval = settings_.evidence_interval,
                                 .budget = settings_.evidence_budget},
        [this, index](const EvidenceStatus& status, std::optional<EvidenceCheckResult> result) {
          EvidenceChanged(index, status);
          if (result) metrics_.CountEvidenceCheck(EvidenceCheckResultName(*result));
        }));
  }
  return monitors;
}

void Server::EvidenceChanged(size_t index, const EvidenceStatus& status) {
  std::lock_guard lock(evidence_mutex_);
  evidence_statuses_[index] = status;
  EvidenceStatus weakest = evidence_statuses_.front();
  for (const EvidenceStatus& other : evidence_statuses_) {
    if (CompareTiers(other.current_tier, weakest.current_tier) < 0) {
      weakest.current_tier = other.current_tier;
    }
    weakest.confirmed = weakest.confirmed && other.confirmed;
    if (!other.last_confirmed ||
        (weakest.last_confirmed && *other.last_confirmed < *weakest.last_confirmed)) {
      weakest.last_confirmed = other.last_confirmed;
    }
  }
  metrics_.SetEvidence(weakest.current_tier, weakest.confirmed, weakest.last_confirmed);
}

std::vector<ServedImage> Server::ServedImages() {
  std::vector<ServedImage> served;
  for (size_t index = 0; index < images_.size(); ++index) {
    served.push_back(ServedImage{images_[index].name, *images_[index].sandbox,
                                 *evidence_monitors_[index], images_[index].contents});
  }
  return served;
}

Server::~Server() {
  if (!drained_) Drain(std::chrono::milliseconds(0));
  StopThreads();
}

void Server::AuditSessionEnd(const SessionEnded& ended) {
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
  details["session_ended"] = {{"session", ended.session_sha256},
                              {"reason", SessionEndReasonName(ended.close.ended)},
                              {"calls", ended.close.calls},
                              {"last_record_sha256", ended.close.last_record_sha256}};
  AuditEntry entry;
  entry.time = std::chrono::system_clock::now();
  entry.route = "/v1/sessions/{id}";
  entry.caller = ended.caller;
  entry.details = &details;
  Status written = audit_.Write(entry);
  if (!written.ok()) log_.Error("The audit log could not be written: " + written.error().message());
}

void Server::StopThreads() {
  sessions_.Shutdown();  // ends every session `shutdown` (a running call first)
  readiness_.Stop();     // wakes /readyz waiters; a preflight in progress finishes
  // Wakes each; a check in progress is bounded by its budget.
  for (auto& monitor : evidence_monitors_) monitor->Stop();
  pool_.Shutdown();  // waits for runs still inside the provider
  work_.reset();
  io_context_.stop();
  for (std::thread& thread : io_threads_) thread.join();
  io_threads_.clear();
}

void Server::HandleAnswer(const http::Answer& answer, const http::AnswerContext& facts) {
  metrics_.CountAnswer(static_cast<unsigned>(answer.status), answer.not_dispatched);
  Status written = audit_.Write(AuditEntryFor(answer, facts, std::chrono::system_clock::now()));
  if (!written.ok()) {
    metrics_.CountAuditFailure();
    // Logged when it starts failing, not for every line (a full disk).
    if (!audit_failing_.exchange(true)) log_.Error(written.error().message());
  } else if (audit_failing_.exchange(false)) {
    log_.Info("Audit lines are written to " + audit_.destination() + " again.");
  }
}

Status Server::Bind() {
  PLIMSOLL_RETURN_IF_ERROR(LoadTls());
  auto api = http::ParseListenAddress(settings_.listen);
  if (!api.ok()) return api.error();
  PLIMSOLL_RETURN_IF_ERROR(api_tcp_.Bind(*api));
  if (api_unix_) {
    PLIMSOLL_RETURN_IF_ERROR(
        api_unix_->Bind(asio::local::stream_protocol::endpoint(settings_.unix_socket)));
  }
  if (metrics_tcp_) {
    auto metrics = http::ParseListenAddress(settings_.metrics_listen);
    if (!metrics.ok()) return metrics.error();
    PLIMSOLL_RETURN_IF_ERROR(metrics_tcp_->Bind(*metrics));
  }
  return Status::Ok();
}

// TLS (http/tls.h) on the API listener, and on the metrics listener unless it
// is on loopback. Runs before any address is taken.
Status Server::LoadTls() {
  if (settings_.tls_cert.empty()) return Status::Ok();
  auto tls = http::LoadTlsServerContext({settings_.tls_cert, settings_.tls_key});
  if (!tls.ok()) return tls.error();
  for (const std::string& warning : tls->warnings) log_.Warning(warning);
  api_tcp_.UseTls(tls->context);
  bool metrics_tls = false;
  if (metrics_tcp_) {
    auto metrics = http::ParseListenAddress(settings_.metrics_listen);
    metrics_tls = !metrics.ok() || !metrics->address().is_loopback();
    if (metrics_tls) metrics_tcp_->UseTls(tls->context);
  }
  log_.Info(std::string("TLS on the API listener") +
            (metrics_tls ? " and the metrics listener" : "") + ": " + tls->summary + ".");
  return Status::Ok();
}

std::optional<asio::ip::tcp::endpoint> Server::metrics_endpoint() const {
  if (!metrics_tcp_) return std::nullopt;
  return metrics_tcp_->local_endpoint();
}

Status Server::Start() {
  PLIMSOLL_RETURN_IF_ERROR(pool_.Start());
  for (auto& monitor : evidence_monitors_) PLIMSOLL_RETURN_IF_ERROR(monitor->Start());
  sessions_.Start();
  work_.emplace(io_context_.get_executor());
  api_tcp_.Start();
  if (api_unix_) api_unix_->Start();
  if (metrics_tcp_) metrics_tcp_->Start();
  for (size_t i = 0; i < settings_.io_threads; ++i) {
    io_threads_.emplace_back([this] {
      try {
        io_context_.run();
      } catch (const std::exception& exception) {
        log_.Error(std::string("An event-loop thread stopped: ") + exception.what());
      }
    });
  }
  started_ = true;
  return Status::Ok();
}

bool Server::Drain(std::chrono::milliseconds bound) {
  if (drained_) return true;
  drained_ = true;
  draining_.store(true);
  api_tcp_.Close();
  if (api_unix_) api_unix_->Close();
  if (metrics_tcp_) metrics_tcp_->Close();
  registry_.CloseIdle();
  // Runs answered `deadline_exceeded` may still be inside the provider after
  // their connection closed: wait for them too.
  auto deadline = std::chrono::steady_clock::now() + bound;
  bool finished = !started_ || (registry_.WaitEmpty(deadline) && pool_.WaitIdle(deadline));
  if (!finished) {
    log_.Warning(std::to_string(registry_.size()) + " connection(s) still open and " +
                 std::to_string(pool_.running()) +
                 " run(s) still inside the provider at the end of the drain bound.");
    return false;
  }
  StopThreads();
  if (api_unix_) ::unlink(settings_.unix_socket.c_str());
  return true;
}

}  // namespace plimsoll::daemon
