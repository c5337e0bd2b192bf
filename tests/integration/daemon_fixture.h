// An in-process plimsolld for integration tests: a real Server on 127.0.0.1
// port 0 (API and metrics), event loop on its own threads, around a provider
// that counts its runs so a test can prove that nothing ran.
//
// Usage:
//   DaemonUnderTest daemon;                        // embedded, --dev
//   HttpReply reply = SendOnce(daemon.port(), {...});
//   EXPECT_EQ(daemon.provider().runs(), 0);
#ifndef PLIMSOLL_TESTS_INTEGRATION_DAEMON_FIXTURE_H_
#define PLIMSOLL_TESTS_INTEGRATION_DAEMON_FIXTURE_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>

#include "daemon/authenticator.h"
#include "daemon/log.h"
#include "daemon/server/server.h"
#include "daemon/server/settings.h"
#include "daemon_test_client.h"
#include "plimsoll/sandbox.h"

namespace plimsoll::daemon::testing {

// Wraps a real provider; counts Run calls; can hold runs or fail them, and
// can make its smoke test fail or report a lower tier (the evidence monitor's
// tests).
class CountingProvider final : public Provider {
 public:
  explicit CountingProvider(std::unique_ptr<Provider> inner) : inner_(std::move(inner)) {}

  std::string_view name() const override { return inner_->name(); }
  Description Describe() const override { return inner_->Describe(); }
  Status Reconcile() override { return inner_->Reconcile(); }
  Status Preflight() override;
  Expected<Evidence> SmokeTest(Deadline deadline) override;
  Expected<Result> Run(const Request& request, Deadline deadline) override;
  // Counted and held as Run; passes the grant on.
  Expected<Result> RunGranted(const Request& request, Deadline deadline,
                              GrantedCalls& calls) override;
  Expected<std::unique_ptr<ProviderSession>> OpenSession(const SessionSpec& spec,
                                                         Deadline deadline) override;

  int runs() const { return runs_.load(); }
  // The request the provider's Run() saw last (nullopt before any run).
  std::optional<Request> last_request();
  // While held, Run() blocks (after counting) until Release().
  void Hold();
  void Release();
  // Every Run() fails with an internal error carrying `detail`.
  void FailRunsWith(std::string detail) { failure_detail_ = std::move(detail); }
  // Every Run() returns `error` as it is (a provider's refusal or failure).
  void FailRunsWithError(Error error);
  // Every OpenSession() returns `error` as it is.
  void FailSessionOpensWithError(Error error);
  // From now on Preflight() sleeps `delay` before answering (a slow runtime
  // binary or image read), and counts its calls.
  void SlowPreflight(std::chrono::milliseconds delay) { preflight_delay_ms_ = delay.count(); }
  int preflights() const { return preflights_.load(); }
  // From now on SmokeTest() reports `tier` (its checks still pass), or fails
  // with `detail`; RestoreSmokeTest() undoes either.
  void LowerSmokeTestTo(Tier tier);
  void FailSmokeTestWith(std::string detail);
  void RestoreSmokeTest();

 private:
  // Counts the run, waits while held, and fails it as told, else `run`.
  Expected<Result> Counted(const Request& request, const std::function<Expected<Result>()>& run);

  std::unique_ptr<Provider> inner_;
  std::atomic<int> runs_{0};
  std::mutex mutex_;
  std::condition_variable released_;
  bool held_ = false;
  std::string failure_detail_;
  std::optional<Error> run_error_;           // guarded by mutex_
  std::optional<Error> session_open_error_;  // guarded by mutex_
  std::atomic<int64_t> preflight_delay_ms_{0};
  std::atomic<int> preflights_{0};
  std::optional<Request> last_request_;       // guarded by mutex_
  std::optional<Tier> smoke_tier_;            // guarded by mutex_
  std::optional<std::string> smoke_failure_;  // guarded by mutex_
};

struct DaemonOptions {
  std::string provider = "embedded";
  bool dev = true;
  // When set: also serve on this Unix socket.
  std::string unix_socket{};
  // When set (and not dev): authenticate against this caller store.
  std::string callers{};
  // Adjusts the settings before the server is built (timeouts, pool size).
  std::function<void(Settings&)> tune;
  // When set: the grant profiles' broker (the daemon's --grants), which
  // must outlive the daemon.
  const broker::Broker* broker = nullptr;
};

class DaemonUnderTest {
 public:
  explicit DaemonUnderTest(DaemonOptions options = {});
  ~DaemonUnderTest();

  uint16_t port() const;
  uint16_t metrics_port() const;
  CountingProvider& provider() { return *provider_; }
  Server& server() { return *server_; }
  const Settings& settings() const { return settings_; }
  std::string log_text();

 private:
  Settings settings_;
  std::ostringstream log_stream_;
  Log log_{log_stream_};
  CountingProvider* provider_ = nullptr;  // owned by sandbox_
  std::unique_ptr<Sandbox> sandbox_;
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<Server> server_;
};

// A run request body for JavaScript `code`, with extra top-level fields.
std::string RunBody(const std::string& code, const std::string& extra_fields = "");

}  // namespace plimsoll::daemon::testing

#endif  // PLIMSOLL_TESTS_INTEGRATION_DAEMON_FIXTURE_H_
