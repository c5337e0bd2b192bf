#include "daemon/server/server.h"

#include <unistd.h>

#include "daemon/http/errors_to_http.h"

namespace plimsoll::daemon {

namespace asio = boost::asio;

Server::Server(const Settings& settings, Sandbox& sandbox, Authenticator& authenticator, Log& log)
    : settings_(settings),
      log_(log),
      pool_({.workers = settings.run_workers, .queue_capacity = settings.run_queue}),
      admission_({.max_concurrent = static_cast<int64_t>(settings.max_concurrent_runs > 0
                                                             ? settings.max_concurrent_runs
                                                             : settings.run_workers)}),
      services_{sandbox, pool_, metrics_, log, draining_, admission_},
      api_router_(&authenticator, log),
      metrics_router_(nullptr, log),
      api_environment_{api_router_, log, settings.http, registry_,
                       [this](const http::Answer& answer) { HandleAnswer(answer); }},
      metrics_environment_{metrics_router_, log, settings.http, registry_, {}},
      api_tcp_(io_context_, api_environment_) {
  AddApiRoutes(api_router_, services_);
  AddMetricsRoutes(metrics_router_, metrics_);
  if (!settings_.unix_socket.empty()) api_unix_.emplace(io_context_, api_environment_);
  if (settings_.metrics_listen != "off") metrics_tcp_.emplace(io_context_, metrics_environment_);
}

Server::~Server() {
  if (!drained_) Drain(std::chrono::milliseconds(0));
  StopThreads();
}

void Server::StopThreads() {
  pool_.Shutdown();  // waits for runs still inside the provider
  work_.reset();
  io_context_.stop();
  for (std::thread& thread : io_threads_) thread.join();
  io_threads_.clear();
}

void Server::HandleAnswer(const http::Answer& answer) {
  metrics_.CountAnswer(static_cast<unsigned>(answer.status), answer.not_dispatched);
}

Status Server::Bind() {
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

std::optional<asio::ip::tcp::endpoint> Server::metrics_endpoint() const {
  if (!metrics_tcp_) return std::nullopt;
  return metrics_tcp_->local_endpoint();
}

Status Server::Start() {
  PLIMSOLL_RETURN_IF_ERROR(pool_.Start());
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
  bool finished = !started_ || registry_.WaitEmpty(std::chrono::steady_clock::now() + bound);
  if (!finished) {
    log_.Warning(std::to_string(registry_.size()) +
                 " connection(s) still open at the end of the drain bound.");
    return false;
  }
  StopThreads();
  if (api_unix_) ::unlink(settings_.unix_socket.c_str());
  return true;
}

}  // namespace plimsoll::daemon
