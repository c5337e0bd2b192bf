#include "daemon_fixture.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/auth/store_authenticator.h"
#include "daemon/server/run_limit_settings.h"

namespace plimsoll::daemon::testing {

Expected<Result> CountingProvider::Run(const Request& request, Deadline deadline) {
  return Counted(request, [&] { return inner_->Run(request, deadline); });
}

Expected<Result> CountingProvider::RunGranted(const Request& request, Deadline deadline,
                                              GrantedCalls& calls) {
  return Counted(request, [&] { return inner_->RunGranted(request, deadline, calls); });
}

Expected<Result> CountingProvider::Counted(const Request& request,
                                           const std::function<Expected<Result>()>& run) {
  ++runs_;
  {
    std::unique_lock lock(mutex_);
    last_request_ = request;
    released_.wait(lock, [this] { return !held_; });
  }
  if (!failure_detail_.empty()) return Failure(ErrorCode::kInternal, failure_detail_);
  {
    std::lock_guard lock(mutex_);
    if (run_error_) return *run_error_;
  }
  return run();
}

void CountingProvider::FailRunsWithError(Error error) {
  std::lock_guard lock(mutex_);
  run_error_ = std::move(error);
}

void CountingProvider::FailSessionOpensWithError(Error error) {
  std::lock_guard lock(mutex_);
  session_open_error_ = std::move(error);
}

Expected<std::unique_ptr<ProviderSession>> CountingProvider::OpenSession(const SessionSpec& spec,
                                                                         Deadline deadline) {
  {
    std::lock_guard lock(mutex_);
    if (session_open_error_) return *session_open_error_;
  }
  return inner_->OpenSession(spec, deadline);
}

Status CountingProvider::Preflight() {
  ++preflights_;
  int64_t delay = preflight_delay_ms_.load();
  if (delay > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay));
  return inner_->Preflight();
}

std::optional<Request> CountingProvider::last_request() {
  std::lock_guard lock(mutex_);
  return last_request_;
}

Expected<Evidence> CountingProvider::SmokeTest(Deadline deadline) {
  std::optional<Tier> tier;
  std::optional<std::string> failure;
  {
    std::lock_guard lock(mutex_);
    tier = smoke_tier_;
    failure = smoke_failure_;
  }
  if (failure) return Failure(ErrorCode::kInternal, *failure);
  auto evidence = inner_->SmokeTest(deadline);
  if (evidence.ok() && tier) evidence->tier = *tier;
  return evidence;
}

void CountingProvider::LowerSmokeTestTo(Tier tier) {
  std::lock_guard lock(mutex_);
  smoke_tier_ = tier;
  smoke_failure_.reset();
}

void CountingProvider::FailSmokeTestWith(std::string detail) {
  std::lock_guard lock(mutex_);
  smoke_failure_ = std::move(detail);
  smoke_tier_.reset();
}

void CountingProvider::RestoreSmokeTest() {
  std::lock_guard lock(mutex_);
  smoke_tier_.reset();
  smoke_failure_.reset();
}

void CountingProvider::Hold() {
  std::lock_guard lock(mutex_);
  held_ = true;
}

void CountingProvider::Release() {
  {
    std::lock_guard lock(mutex_);
    held_ = false;
  }
  released_.notify_all();
}

DaemonUnderTest::DaemonUnderTest(DaemonOptions options) {
  settings_.provider = options.provider;
  settings_.dev = options.dev;
  settings_.listen = "127.0.0.1:0";
  settings_.metrics_listen = "127.0.0.1:0";
  settings_.unix_socket = options.unix_socket;
  if (options.tune) options.tune(settings_);

  Limits limits = ApplyRunLimits(settings_.run_limits, Limits{});  // as DaemonMain builds them
  limits.run_ceiling_ms = settings_.run_ceiling.count();
  auto inner = MakeProvider(settings_.provider, limits);
  if (!inner.ok()) throw std::runtime_error(inner.error().ToString());
  auto counting = std::make_unique<CountingProvider>(std::move(*inner));
  provider_ = counting.get();
  sandbox_ = std::make_unique<Sandbox>(std::move(counting));
  auto evidence = sandbox_->CollectEvidence();
  if (!evidence.ok()) throw std::runtime_error(evidence.error().ToString());
  if (!settings_.dev && !options.callers.empty()) {
    settings_.callers_path = options.callers;
    auto store = auth::OpenStoreAuthenticator(options.callers);
    if (!store.ok()) throw std::runtime_error(store.error().ToString());
    authenticator_ = std::move(*store);
  } else {
    authenticator_ = settings_.dev ? MakeDevAuthenticator() : MakeNoCallersAuthenticator();
  }
  server_ = std::make_unique<Server>(settings_, *sandbox_, *authenticator_, log_,
                                     /*audit=*/nullptr, options.broker);
  Status bound = server_->Bind();
  if (!bound.ok()) throw std::runtime_error(bound.error().ToString());
  Status started = server_->Start();
  if (!started.ok()) throw std::runtime_error(started.error().ToString());
}

DaemonUnderTest::~DaemonUnderTest() {
  provider_->Release();
  server_->Drain(std::chrono::seconds(10));
  server_.reset();
}

uint16_t DaemonUnderTest::port() const {
  return server_->api_endpoint().port();
}

uint16_t DaemonUnderTest::metrics_port() const {
  return server_->metrics_endpoint()->port();
}

std::string DaemonUnderTest::log_text() {
  // The Log flushes whole lines under its own lock; a copy is enough here.
  return log_stream_.str();
}

std::string RunBody(const std::string& code, const std::string& extra_fields) {
  std::string body =
      R"({"protocol": 1, "javascript": {"code": )" + nlohmann::json(code).dump() + "}";
  if (!extra_fields.empty()) body += ", " + extra_fields;
  return body + "}";
}

}  // namespace plimsoll::daemon::testing
