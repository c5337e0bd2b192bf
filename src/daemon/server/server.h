// plimsolld's server: the event loop (one io_context run by a few threads),
// the API listener (TCP, plus an optional Unix socket), the metrics listener,
// the run worker pool, and the drain.
//
// Lifecycle: construct -> Bind() (listeners bound, ports known, nothing
// served yet: connections wait in the backlog) -> Start() (run workers, the
// evidence monitor, event loop threads, accept loops) -> Drain(bound) (stop
// accepting, close idle connections, let in-flight requests finish and
// abandoned runs return up to `bound`, stop threads).
//
// Every answer of the API listener is counted in the metrics and written to
// the audit log (audit.h) from HandleAnswer. Each listener caps its open
// connections (settings.max_connections[_per_peer]; the TCP and Unix API
// listeners share one cap, the metrics listener has its own), counted in
// plimsoll_connections_rejected_total. With --dev, TCP requests must name a
// loopback Host.
// The destructor drains with a zero bound if Drain was not called.
//
// If Drain returns false (requests still in flight at the bound), the event
// loop keeps running; the destructor then stops it and waits for runs still
// inside the provider (each bounded by its own deadline). plimsolld exits
// with std::_Exit instead, abandoning them.
//
// Thread-safety: Bind, Start and Drain from one controlling thread.
//
// Usage:
//   Server server(settings, {{"base", &base, base_contents}, {"data", &data, data_contents}},
//                 authenticator, log);           // or (settings, sandbox, ...) for one image
//   PLIMSOLL_RETURN_IF_ERROR(server.Bind());
//   PLIMSOLL_RETURN_IF_ERROR(server.Start());
//   std::cout << http::FormatEndpoint(server.api_endpoint());
//   ... wait for SIGTERM ...
//   server.Drain(settings.drain_timeout);
#ifndef PLIMSOLL_DAEMON_SERVER_SERVER_H_
#define PLIMSOLL_DAEMON_SERVER_SERVER_H_

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/authenticator.h"
#include "daemon/http/connection_registry.h"
#include "daemon/http/listener.h"
#include "daemon/http/router.h"
#include "daemon/log.h"
#include "daemon/server/audit.h"
#include "daemon/server/evidence_monitor.h"
#include "daemon/server/handlers.h"
#include "daemon/server/metrics.h"
#include "daemon/server/readiness_probe.h"
#include "daemon/server/settings.h"
#include "daemon/server/worker_pool.h"
#include "plimsoll/image_info.h"
#include "plimsoll/sandbox.h"

namespace plimsoll::daemon {

// One image for the Server to serve (SPEC §7): its name (IsWellFormedImageName;
// the Sandbox should be named the same, Sandbox::NameImage), its sandbox, and
// what describe lists of it.
struct ImageToServe {
  std::string name;
  Sandbox* sandbox = nullptr;  // outlives the Server
  ImageContents contents;
};

class Server {
 public:
  // Every reference must outlive the Server. `audit` (may be null: audit
  // lines then go to `log`; DaemonMain opens settings.audit_log) must too.
  // Startup evidence must be collected before Start(): each image's evidence
  // monitor takes it as the tier proven at startup. `images` is not empty,
  // the default first, names distinct; all share one provider and its limits.
  // `broker` (may be null: no grants; DaemonMain opens settings.grants_path)
  // serves the grant profiles runs name, and must outlive the Server too.
  Server(const Settings& settings, std::vector<ImageToServe> images, Authenticator& authenticator,
         Log& log, AuditLog* audit = nullptr, const broker::Broker* broker = nullptr);
  // One image: `sandbox` under its own name (image_name(), else "default").
  Server(const Settings& settings, Sandbox& sandbox, Authenticator& authenticator, Log& log,
         AuditLog* audit = nullptr, const broker::Broker* broker = nullptr);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Loads TLS (settings.tls_cert/tls_key) and binds every listener. Fails
  // with kInvalidArgument when the TLS files cannot be used (bad settings)
  // and kFailedPrecondition when an address cannot be taken.
  Status Bind();
  Status Start();
  // True when every connection closed within `bound`.
  bool Drain(std::chrono::milliseconds bound);

  // Valid after Bind().
  boost::asio::ip::tcp::endpoint api_endpoint() const { return api_tcp_.local_endpoint(); }
  std::optional<boost::asio::ip::tcp::endpoint> metrics_endpoint() const;

  Metrics& metrics() { return metrics_; }
  admission::AdmissionController& admission() { return admission_; }
  // The default image's monitor, and image `index`'s (in the order given).
  EvidenceMonitor& evidence_monitor() { return *evidence_monitors_.front(); }
  EvidenceMonitor& evidence_monitor(size_t index) { return *evidence_monitors_.at(index); }
  SessionRegistry& sessions() { return sessions_; }
  size_t open_connections() const { return registry_.size(); }
  const http::ConnectionLimiter& api_limiter() const { return api_limiter_; }
  const ReadinessProbe& readiness() const { return readiness_; }

 private:
  void HandleAnswer(const http::Answer& answer, const http::AnswerContext& facts);
  void StopThreads();
  Status LoadTls();
  void AuditSessionEnd(const SessionEnded& ended);
  // One monitor per image; each reports to metrics through EvidenceChanged.
  std::vector<std::unique_ptr<EvidenceMonitor>> MakeEvidenceMonitors();
  // The metrics' evidence gauges: the weakest image's state (the lowest
  // tier, confirmed only while every image is, the oldest confirmation).
  void EvidenceChanged(size_t index, const EvidenceStatus& status);
  std::vector<ServedImage> ServedImages();

  Settings settings_;
  Log& log_;
  const std::vector<ImageToServe> images_;
  // Before io_context_: connections destroyed with the io_context release
  // their places here.
  http::ConnectionLimiter api_limiter_;
  http::ConnectionLimiter metrics_limiter_;
  boost::asio::io_context io_context_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  Metrics metrics_;
  ReadinessProbe readiness_;  // /readyz's preflight thread; uses metrics_
  std::atomic<bool> draining_{false};
  bool drained_ = false;
  bool started_ = false;
  http::ConnectionRegistry registry_;
  WorkerPool pool_;
  admission::AdmissionController admission_;
  std::mutex evidence_mutex_;                      // guards evidence_statuses_
  std::vector<EvidenceStatus> evidence_statuses_;  // the last of each image's monitor
  std::vector<std::unique_ptr<EvidenceMonitor>> evidence_monitors_;  // one per image
  std::unique_ptr<AuditLog> operator_log_audit_;  // set when no AuditLog was given
  AuditLog& audit_;
  std::atomic<bool> audit_failing_{false};
  SessionRegistry sessions_;  // ended (shutdown) by StopThreads
  ApiServices services_;
  http::Router api_router_;
  http::Router metrics_router_;
  http::ConnectionEnvironment api_environment_;
  http::ConnectionEnvironment metrics_environment_;
  http::TcpListener api_tcp_;
  std::optional<http::UnixListener> api_unix_;
  std::optional<http::TcpListener> metrics_tcp_;
  std::vector<std::thread> io_threads_;
};

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_SERVER_H_
