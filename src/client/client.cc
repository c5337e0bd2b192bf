// plimsoll::Client (include/plimsoll/client.h): options, request headers,
// and the order of the checks; transport in http_connection.*, the checks
// themselves in answer_check.*.
#include "plimsoll/client.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "client/answer_check.h"
#include "client/cleartext_policy.h"
#include "client/daemon_url.h"
#include "client/http_connection.h"
#include "client/request_id.h"
#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll {
namespace {

constexpr std::string_view kUserAgent = "plimsoll-cpp-client/0.1.0";

Error BadOption(std::string message) {
  return Refusal(NotDispatched::kRequest, ErrorCode::kInvalidArgument, std::move(message));
}

// RFC 6750 b64token characters, and nothing that could end a header line.
bool IsBearerToken(std::string_view token) {
  return std::all_of(token.begin(), token.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' ||
           c == '/' || c == '=';
  });
}

Status CheckOptions(const ClientOptions& options) {
  if (!IsBearerToken(options.bearer_token)) {
    return BadOption(
        "The bearer token holds characters a token cannot have (only letters, digits and "
        "-._~+/= are allowed); check the token file for stray text.");
  }
  if (options.max_response_bytes <= 0) {
    return BadOption("max_response_bytes must be positive.");
  }
  using std::chrono::milliseconds;
  for (auto [name, value] :
       {std::pair{"connect_timeout", options.connect_timeout},
        std::pair{"call_timeout", options.call_timeout},
        std::pair{"unspecified_run_timeout", options.unspecified_run_timeout}}) {
    if (value <= milliseconds::zero()) return BadOption(std::string(name) + " must be positive.");
  }
  if (options.run_timeout_margin < milliseconds::zero()) {
    return BadOption("run_timeout_margin must not be negative.");
  }
  return Status::Ok();
}

}  // namespace

class Client::Impl {
 public:
  Impl(client::DaemonUrl url, ClientOptions options,
       std::unique_ptr<client::HttpConnection> connection)
      : url_(std::move(url)), options_(std::move(options)), connection_(std::move(connection)) {}

  Expected<Result> Run(const Request& request) {
    client::HttpCall call = Call("POST", "/v1/runs", RunBudget(request), "the code may have run");
    call.body = RequestToJson(request);
    call.headers.emplace_back("Content-Type", "application/json");
    std::lock_guard lock(mutex_);
    auto sent = Send(std::move(call));
    if (!sent.ok()) return sent.error();
    return client::CheckRunAnswer(request, sent->first, sent->second);
  }

  Expected<SessionInfo> OpenSession(const SessionOpenRequest& request) {
    client::HttpCall call =
        Call("POST", "/v1/sessions", options_.call_timeout, "the session may have been opened");
    call.body = SessionOpenToJson(request);
    call.headers.emplace_back("Content-Type", "application/json");
    std::lock_guard lock(mutex_);
    auto sent = Send(std::move(call));
    if (!sent.ok()) return sent.error();
    Expected<SessionInfo> info = client::CheckSessionOpenAnswer(request, sent->first, sent->second);
    if (info.ok() && !request.options.minimum_isolation.empty()) {
      session_floors_[info->id] = request.options.minimum_isolation;
    }
    return info;
  }

  Expected<Result> RunInSession(std::string_view session_id, const Request& request,
                                ChainState& chain) {
    if (!IsSessionId(session_id)) {
      return BadOption("A session ID is 32 lowercase hex digits, as POST /v1/sessions gave it.");
    }
    if (chain.session_sha256.empty()) chain.session_sha256 = SessionIdDigest(session_id);
    client::HttpCall call = Call("POST", "/v1/sessions/" + std::string(session_id) + "/runs",
                                 RunBudget(request), "the code may have run");
    call.body = RequestToJson(request);
    call.headers.emplace_back("Content-Type", "application/json");
    std::lock_guard lock(mutex_);
    auto sent = Send(std::move(call));
    if (!sent.ok()) return sent.error();
    return client::CheckSessionRunAnswer(request, sent->first, sent->second, chain,
                                         SessionFloor(session_id));
  }

  Expected<SessionClose> CloseSession(std::string_view session_id, const ChainState& chain) {
    if (!IsSessionId(session_id)) {
      return BadOption("A session ID is 32 lowercase hex digits, as POST /v1/sessions gave it.");
    }
    // Closing waits for a running call: give it a run's bound.
    client::HttpCall call = Call("DELETE", "/v1/sessions/" + std::string(session_id),
                                 RunBudget(Request{}), "the session may have been closed");
    std::lock_guard lock(mutex_);
    auto sent = Send(std::move(call));
    if (!sent.ok()) return sent.error();
    Expected<SessionClose> closed =
        client::CheckSessionCloseAnswer(sent->first, sent->second, chain);
    if (closed.ok()) session_floors_.erase(std::string(session_id));
    return closed;
  }

  Status SetSessionFloor(std::string_view session_id, std::string_view floor) {
    if (!IsSessionId(session_id)) {
      return BadOption("A session ID is 32 lowercase hex digits, as POST /v1/sessions gave it.");
    }
    // The tiers a request may ask as a floor: none and unknown are met by
    // nothing, so they could only make every answer data_loss.
    std::optional<Tier> tier = ParseTier(floor);
    if (!tier || !IsRunnableTier(*tier)) {
      return BadOption("A session's floor is process, container, kernel or vm.");
    }
    std::lock_guard lock(mutex_);
    session_floors_[std::string(session_id)] = std::string(floor);
    return Status::Ok();
  }

  Expected<DaemonDescription> Describe() {
    std::lock_guard lock(mutex_);
    auto sent =
        Send(Call("GET", "/v1/describe", options_.call_timeout, "the daemon may have answered"));
    if (!sent.ok()) return sent.error();
    return client::CheckDescribeAnswer(sent->first, sent->second);
  }

  Status Healthz() {
    std::lock_guard lock(mutex_);
    auto sent =
        Send(Call("GET", "/healthz", options_.call_timeout, "the daemon may have answered"));
    if (!sent.ok()) return sent.error();
    return client::CheckHealthAnswer(sent->first, sent->second);
  }

  // How long a call that runs `request` may take: its timeout (or the
  // unspecified one) plus the margin.
  std::chrono::milliseconds RunBudget(const Request& request) const {
    std::chrono::milliseconds run_bound = request.timeout_ms > 0
                                              ? std::chrono::milliseconds(request.timeout_ms)
                                              : options_.unspecified_run_timeout;
    // Saturate instead of overflowing on an absurd timeout_ms (the daemon
    // refuses it anyway).
    constexpr std::chrono::milliseconds kLongest{int64_t{1} << 40};
    return std::min(run_bound, kLongest) + std::min(options_.run_timeout_margin, kLongest);
  }

  static bool IsSessionId(std::string_view id) {
    return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  }

  // Without the mutex: a diagnostic must not wait for a long run.
  int64_t connections_opened() const { return connection_->connections_opened(); }

 private:
  client::HttpCall Call(std::string method, std::string_view api_path,
                        std::chrono::milliseconds budget, std::string consequence) const {
    client::HttpCall call;
    call.method = std::move(method);
    call.target = url_.Target(api_path);
    call.budget = budget;
    call.consequence = std::move(consequence);
    call.headers.emplace_back("Accept", "application/json");
    call.headers.emplace_back("User-Agent", std::string(kUserAgent));
    if (!options_.bearer_token.empty()) {
      call.headers.emplace_back("Authorization", "Bearer " + options_.bearer_token);
    }
    return call;
  }

  // The floor the session was opened with through this client ("" for none
  // or a session opened elsewhere). Precondition: mutex_ held.
  std::string SessionFloor(std::string_view session_id) const {
    auto found = session_floors_.find(std::string(session_id));
    return found == session_floors_.end() ? std::string() : found->second;
  }

  // Sends `call` with a fresh request ID; returns the ID and the answer.
  // Precondition: mutex_ held.
  Expected<std::pair<std::string, client::HttpAnswer>> Send(client::HttpCall call) {
    Expected<std::string> id = client::NewRequestId();
    if (!id.ok()) return id.error();
    call.headers.emplace_back(std::string(client::kRequestIdHeader), *id);
    Expected<client::HttpAnswer> answer = connection_->Exchange(call);
    if (!answer.ok()) return answer.error();
    return std::pair{std::move(*id), std::move(*answer)};
  }

  client::DaemonUrl url_;
  ClientOptions options_;
  std::mutex mutex_;
  std::unique_ptr<client::HttpConnection> connection_;
  // Session ID -> the floor it was opened with, for every session this
  // client opened with a floor, or was told the floor of (SetSessionFloor),
  // and has not closed. Guarded by mutex_.
  std::map<std::string, std::string, std::less<>> session_floors_;
};

Expected<Client> Client::Open(std::string_view url, ClientOptions options) {
  Expected<client::DaemonUrl> parsed = client::ParseDaemonUrl(url);
  if (!parsed.ok()) return parsed.error();
  PLIMSOLL_RETURN_IF_ERROR(CheckOptions(options));
  PLIMSOLL_RETURN_IF_ERROR(client::CheckCleartextLiteral(*parsed, options.allow_cleartext));
  client::ConnectionSettings settings{.allow_cleartext = options.allow_cleartext,
                                      .ca_file = options.ca_file,
                                      .max_response_bytes = options.max_response_bytes,
                                      .connect_timeout = options.connect_timeout};
  auto connection = client::HttpConnection::Create(*parsed, std::move(settings));
  if (!connection.ok()) return connection.error();
  return Client(
      std::make_unique<Impl>(std::move(*parsed), std::move(options), std::move(*connection)));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

Expected<Result> Client::Run(const Request& request) {
  return impl_->Run(request);
}

Expected<SessionInfo> Client::OpenSession(const SessionOpenRequest& request) {
  return impl_->OpenSession(request);
}

Expected<Result> Client::RunInSession(std::string_view session_id, const Request& request,
                                      ChainState& chain) {
  return impl_->RunInSession(session_id, request, chain);
}

Expected<SessionClose> Client::CloseSession(std::string_view session_id, const ChainState& chain) {
  return impl_->CloseSession(session_id, chain);
}

Status Client::SetSessionFloor(std::string_view session_id, std::string_view floor) {
  return impl_->SetSessionFloor(session_id, floor);
}

Expected<DaemonDescription> Client::Describe() {
  return impl_->Describe();
}

Status Client::Healthz() {
  return impl_->Healthz();
}

int64_t Client::connections_opened() const {
  return impl_->connections_opened();
}

}  // namespace plimsoll
