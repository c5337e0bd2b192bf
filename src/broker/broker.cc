#include "broker/broker.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "broker/credential_scrub.h"
#include "broker/jwt.h"
#include "broker/upstream.h"

namespace plimsoll::broker {
namespace {

using Clock = std::chrono::steady_clock;

// Longest guest content type passed on; real media types are far shorter.
constexpr std::size_t kMaxContentTypeBytes = 256;

// A string that is overwritten before its memory is released.
class SecretString {
 public:
  SecretString() = default;
  explicit SecretString(std::string value) : value_(std::move(value)) {}
  SecretString(const SecretString&) = delete;
  SecretString& operator=(const SecretString&) = delete;
  ~SecretString() { OPENSSL_cleanse(value_.data(), value_.size()); }
  const std::string& get() const { return value_; }

 private:
  std::string value_;
};

bool IsVisibleAscii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte > 0x20 && byte < 0x7f;
  });
}

// type/subtype with optional parameters: visible ASCII and spaces only, so
// no CR, LF or other control byte can reach a header.
bool IsAcceptableContentType(std::string_view content_type) {
  if (content_type.size() > kMaxContentTypeBytes) return false;
  if (content_type.find('/') == std::string_view::npos) return false;
  if (content_type.front() == ' ' || content_type.back() == ' ') return false;
  return std::all_of(content_type.begin(), content_type.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x20 && byte < 0x7f;
  });
}

int GuestStatusFor(CallRefusal refusal) {
  switch (refusal) {
    case CallRefusal::kNone:
      return 200;
    case CallRefusal::kNotAllowed:
    case CallRefusal::kBadPath:
      return 403;
    case CallRefusal::kMaxCalls:
    case CallRefusal::kRouteMaxCalls:
    case CallRefusal::kCircuitOpen:
      return 429;
    case CallRefusal::kBodyTooLarge:
      return 413;
    case CallRefusal::kUpstreamTimeout:
      return 504;
    case CallRefusal::kUpstreamError:
      return 502;
  }
  return 502;
}

GuestAnswer Refused(CallRefusal refusal, std::string message) {
  GuestAnswer answer;
  answer.status = GuestStatusFor(refusal);
  answer.content_type = "application/json";
  answer.refused = std::string(CallRefusalCode(refusal));
  answer.message = std::move(message);
  const nlohmann::json body = {{"error", answer.refused}, {"message", answer.message}};
  answer.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return answer;
}

// `message` with the upstream's origin and host taken out: the guest learns
// what went wrong, not where the operator's API lives.
std::string WithoutOrigin(std::string message, const Origin& origin) {
  for (const std::string& text : {" " + origin.ToString(), " " + origin.host, origin.host}) {
    if (origin.host.empty()) break;
    for (size_t at = message.find(text); at != std::string::npos; at = message.find(text, at)) {
      message.erase(at, text.size());
    }
  }
  return message;
}

// Whether a probe that got no answer (an error of CallUpstream) tells the
// breaker the upstream failed: a timeout only when the probe had the
// daemon's own allowance (kProbeDeadline), not when the guest's or its run's
// earlier deadline cut it short; a request refused before it was sent never.
bool SaysTheUpstreamFailed(UpstreamErrorKind kind, Clock::time_point sent,
                           Clock::time_point deadline) {
  switch (kind) {
    case UpstreamErrorKind::kTimeout:
      return deadline - sent >= kProbeDeadline;
    case UpstreamErrorKind::kBodyTooLarge:
      return false;
    case UpstreamErrorKind::kConnection:
    case UpstreamErrorKind::kProtocol:
      return true;
  }
  return true;
}

std::string Seconds(Clock::duration duration) {
  auto seconds = std::chrono::ceil<std::chrono::seconds>(duration).count();
  return std::to_string(std::max<int64_t>(seconds, 1)) + (seconds > 1 ? " seconds" : " second");
}

}  // namespace

struct Broker::State {
  struct ProfileState {
    ProfileState(const Profile& granted, const BreakerClock& clock,
                 std::unique_ptr<SecretString> material)
        : profile(&granted),
          matcher(granted.allow),
          breaker(std::make_unique<CircuitBreaker>(clock)),
          credential(std::move(material)) {}

    const Profile* profile;  // in State::grants
    RouteMatcher matcher;
    std::unique_ptr<CircuitBreaker> breaker;
    // The static token or the JWT secret.
    std::unique_ptr<SecretString> credential;
  };

  Grants grants;
  std::map<std::string, ProfileState, std::less<>> profiles;
};

struct RunGrant::Parts {
  std::shared_ptr<const Broker::State> broker;  // keeps `profile` and `state` alive
  const Profile* profile = nullptr;
  const Broker::State::ProfileState* state = nullptr;
  // "Bearer <token>": attached to every upstream call, shown nowhere.
  SecretString authorization;
  // Takes the token (and a jwt profile's secret) out of every answer.
  CredentialScrubber scrubber;
  CallBudget budget;
  std::unique_ptr<CallTrace> trace;
  Clock::time_point run_deadline;

  Parts(std::shared_ptr<const Broker::State> broker_state, const Profile& granted,
        const Broker::State::ProfileState& profile_state, std::string bearer,
        std::unique_ptr<CallTrace> call_trace, Clock::time_point deadline)
      : broker(std::move(broker_state)),
        profile(&granted),
        state(&profile_state),
        authorization(std::move(bearer)),
        scrubber(Secrets(granted, profile_state, authorization.get())),
        budget(granted),
        trace(std::move(call_trace)),
        run_deadline(deadline) {}

  // What an echoing upstream must not hand the guest: the token (static or
  // minted), a JWT's signature on its own, and the JWT secret.
  static std::vector<std::string_view> Secrets(const Profile& granted,
                                               const Broker::State::ProfileState& profile_state,
                                               std::string_view bearer) {
    std::string_view token = bearer.substr(std::string_view("Bearer ").size());
    std::vector<std::string_view> secrets = {token};
    if (std::holds_alternative<JwtTokenSource>(granted.token)) {
      if (auto dot = token.rfind('.'); dot != std::string_view::npos) {
        secrets.push_back(token.substr(dot + 1));
      }
      secrets.push_back(profile_state.credential->get());
    }
    return secrets;
  }

  // The answer as the guest may see it: no credential in its content type
  // or body, and the body still within kMaxResponseBody (the marker may be
  // longer than what it replaced).
  void Scrub(GuestAnswer& answer) const {
    scrubber.Scrub(answer.content_type);
    if (answer.truncated) {
      scrubber.ScrubCut(answer.body);
    } else {
      scrubber.Scrub(answer.body);
    }
    if (answer.body.size() > kMaxResponseBody) {
      answer.body.resize(kMaxResponseBody);
      answer.truncated = true;
    }
  }

  UpstreamRequest Request(HttpMethod method, std::string path) const {
    UpstreamRequest request;
    request.origin = profile->base_url;
    request.method = method;
    request.path = std::move(path);
    request.headers = {{"Authorization", authorization.get()}};
    return request;
  }

  // The health check before the probe call; whether the circuit closed. It
  // is the daemon's own request, judged by the daemon's own allowance: when
  // the guest's earlier deadline cuts it short, the probe is abandoned (the
  // next call probes again) rather than failed for every run of the profile.
  bool HealthCheckCloses(Clock::time_point deadline) const {
    const RouteTemplate& route = *profile->health_check;
    const Clock::time_point sent = Clock::now();
    auto answer = CallUpstream(Request(route.method(), route.path()),
                               std::min(deadline, sent + kProbeDeadline));
    CircuitBreaker& breaker = *state->breaker;
    if (answer.ok()) {
      breaker.RecordHealthCheck(answer->status, answer->retry_after);
    } else if (SaysTheUpstreamFailed(UpstreamErrorKindOf(answer.error()), sent, deadline)) {
      breaker.RecordHealthCheck(0, std::nullopt);
    } else {
      breaker.AbandonProbe();
    }
    return breaker.state() == CircuitBreaker::State::kClosed;
  }
};

Broker::Broker(std::shared_ptr<State> state) : state_(std::move(state)) {}

Broker::~Broker() = default;

Expected<Broker> Broker::Create(Grants grants, const EnvironmentReader& environment,
                                const BreakerClock& clock) {
  auto state = std::make_shared<State>();
  state->grants = std::move(grants);
  std::vector<std::string> problems;
  for (const auto& [name, profile] : state->grants.profiles()) {
    const bool is_static = std::holds_alternative<StaticTokenSource>(profile.token);
    const std::string& variable = is_static ? std::get<StaticTokenSource>(profile.token).env
                                            : std::get<JwtTokenSource>(profile.token).secret_env;
    // Wrapped at once, so the value is wiped whatever happens next.
    auto credential = std::make_unique<SecretString>(environment(variable).value_or(""));
    const std::string& value = credential->get();
    std::string what = "Profile \"" + name + "\": the environment variable ";
    what += variable;
    what += is_static ? " (its token)" : " (its JWT secret)";
    if (value.empty()) {
      problems.push_back(what + " is not set or is empty.");
    } else if (is_static && !IsVisibleAscii(value)) {
      problems.push_back(what +
                         " holds a character a bearer token cannot carry (only visible ASCII).");
    } else if (!is_static && value.size() < kMinJwtSecretBytes) {
      problems.push_back(what + " holds " + std::to_string(value.size()) +
                         " bytes; an HS256 secret needs at least " +
                         std::to_string(kMinJwtSecretBytes) + ".");
    } else {
      state->profiles.try_emplace(name, profile, clock, std::move(credential));
    }
  }
  if (!problems.empty()) {
    std::string message = "The broker cannot start: " + std::to_string(problems.size()) +
                          (problems.size() == 1 ? " problem:" : " problems:");
    for (const auto& problem : problems) message += "\n" + problem;
    return Failure(ErrorCode::kFailedPrecondition, std::move(message));
  }
  return Broker(std::move(state));
}

std::vector<std::string> Broker::ProfilesFor(std::string_view caller) const {
  return state_->grants.ProfilesFor(caller);
}

std::optional<CircuitBreaker::State> Broker::CircuitState(std::string_view profile) const {
  auto found = state_->profiles.find(profile);
  if (found == state_->profiles.end()) return std::nullopt;
  return found->second.breaker->state();
}

Expected<std::unique_ptr<RunGrant>> Broker::Open(std::string_view profile_name,
                                                 std::string_view caller,
                                                 std::chrono::milliseconds run_budget,
                                                 bool in_session) const {
  const Profile* profile = state_->grants.ForCaller(profile_name, caller);
  if (profile == nullptr) {
    return Refusal(NotDispatched::kPermission, std::string(kPermissionDeniedMessage));
  }
  if (in_session && !profile->allow_in_sessions) {
    return Refusal(NotDispatched::kPermission,
                   "The grant profile \"" + profile->name +
                       "\" cannot be used in a session: its allow_in_sessions is off.");
  }
  if (run_budget <= std::chrono::milliseconds::zero()) {
    return Refusal(NotDispatched::kRequest, "The run's time budget for a grant must be positive.");
  }
  const auto& profile_state = state_->profiles.at(profile->name);
  const Clock::time_point run_deadline = Clock::now() + run_budget;

  std::string bearer = "Bearer ";
  if (const auto* jwt = std::get_if<JwtTokenSource>(&profile->token)) {
    auto claims =
        NewRunClaims(caller, jwt->audience, profile->scopes, std::chrono::seconds(jwt->ttl_seconds),
                     run_budget, std::chrono::system_clock::now());
    if (!claims.ok()) return claims.error();
    auto token = MintHs256Jwt(*claims, profile_state.credential->get());
    if (!token.ok()) return token.error();
    bearer += *token;
    OPENSSL_cleanse(token->data(), token->size());
  } else {
    bearer += profile_state.credential->get();
  }

  auto trace = CallTrace::Create();
  if (!trace.ok()) {
    OPENSSL_cleanse(bearer.data(), bearer.size());
    return trace.error();
  }
  auto parts = std::make_unique<RunGrant::Parts>(state_, *profile, profile_state, std::move(bearer),
                                                 std::move(*trace), run_deadline);
  return std::unique_ptr<RunGrant>(new RunGrant(std::move(parts)));
}

RunGrant::RunGrant(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

RunGrant::~RunGrant() = default;

const std::string& RunGrant::profile() const {
  return parts_->profile->name;
}

GuestAnswer RunGrant::Call(std::string_view method_text, std::string_view raw_path,
                           std::string_view body, std::string_view content_type,
                           Clock::time_point deadline) {
  Parts& parts = *parts_;
  const Profile& profile = *parts.profile;
  const Clock::time_point started = Clock::now();
  deadline = std::min(deadline, parts.run_deadline);

  TraceEntry entry;
  entry.method = TraceMethodName(method_text);
  entry.request_bytes = static_cast<int64_t>(body.size());
  // Records the call and gives the guest its answer, allowed or not.
  auto finish = [&](GuestAnswer answer) {
    entry.latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    parts.trace->Record(std::move(entry));
    return answer;
  };
  auto refuse = [&](CallRefusal refusal, std::string message) {
    entry.refusal = refusal;
    return finish(Refused(refusal, std::move(message)));
  };

  const std::optional<HttpMethod> method = ParseHttpMethod(method_text);
  auto path = CanonicalizePath(raw_path);
  if (!path.ok()) return refuse(CallRefusal::kBadPath, path.error().message());
  entry.fingerprint = parts.trace->Fingerprint(entry.method, *path, body);
  if (!method) {
    return refuse(CallRefusal::kNotAllowed,
                  "The method is not one the broker sends (GET, HEAD, POST, PUT, PATCH or "
                  "DELETE, in upper case).");
  }
  const RouteTemplate* route = parts.state->matcher.Find(*method, *path);
  if (route == nullptr) {
    return refuse(CallRefusal::kNotAllowed,
                  "No allow entry of the grant profile \"" + profile.name + "\" matches " +
                      std::string(HttpMethodName(*method)) + " on this path.");
  }
  entry.route = route->path();
  if (!content_type.empty() && !IsAcceptableContentType(content_type)) {
    return refuse(CallRefusal::kNotAllowed,
                  "The content type is not a media type the broker passes on (type/subtype and "
                  "parameters in printable ASCII, at most 256 bytes).");
  }
  if (body.size() > kMaxRequestBody) {
    return refuse(CallRefusal::kBodyTooLarge, "The request body is " + std::to_string(body.size()) +
                                                  " bytes; the broker sends at most " +
                                                  std::to_string(kMaxRequestBody) +
                                                  " bytes (1 MiB).");
  }
  if (CallRefusal spent = parts.budget.Take(route->text()); spent != CallRefusal::kNone) {
    if (spent == CallRefusal::kMaxCalls) {
      return refuse(spent, "This run has made all " + std::to_string(profile.max_calls) +
                               " calls the grant profile \"" + profile.name +
                               "\" allows (max_calls).");
    }
    return refuse(spent, "This run has made all the calls the grant profile \"" + profile.name +
                             "\" allows to " + route->text() + " (route_max_calls).");
  }

  CircuitBreaker& breaker = *parts.state->breaker;
  const auto circuit_open = [&] {
    return refuse(CallRefusal::kCircuitOpen,
                  "The upstream asked the broker to back off (429 or 503); calls are refused "
                  "for about " +
                      Seconds(breaker.RetryIn()) + " more.");
  };
  // Whether this call is the breaker's probe (no health_check decided it).
  bool probe = false;
  switch (breaker.Admit()) {
    case CircuitBreaker::Admission::kRefuse:
      return circuit_open();
    case CircuitBreaker::Admission::kProbe:
      if (!profile.health_check) {
        probe = true;
      } else if (!parts.HealthCheckCloses(deadline)) {
        return circuit_open();
      }
      break;
    case CircuitBreaker::Admission::kCall:
      break;
  }

  entry.allowed = true;
  UpstreamRequest request = parts.Request(*method, path->encoded());
  request.body = std::string(body);
  request.content_type = std::string(content_type);
  const Clock::time_point sent = Clock::now();
  auto upstream = CallUpstream(request, deadline);
  if (!upstream.ok()) {
    const UpstreamErrorKind kind = UpstreamErrorKindOf(upstream.error());
    // No answer never opens a closed circuit; a probe's decides only when the
    // daemon's allowance, not the guest's deadline, ran out.
    if (probe && SaysTheUpstreamFailed(kind, sent, deadline)) {
      breaker.RecordProbeAnswer(0, std::nullopt);
    } else if (probe) {
      breaker.AbandonProbe();
    }
    return refuse(CallRefusalFor(kind),
                  WithoutOrigin(upstream.error().message(), profile.base_url));
  }
  if (probe) {
    breaker.RecordProbeAnswer(upstream->status, upstream->retry_after);
  } else {
    breaker.RecordAnswer(upstream->status, upstream->retry_after);
  }
  entry.status = upstream->status;
  entry.response_bytes = static_cast<int64_t>(upstream->body.size());
  GuestAnswer answer;
  answer.status = upstream->status;
  answer.content_type = std::move(upstream->content_type);
  answer.body = std::move(upstream->body);
  answer.truncated = upstream->truncated;
  parts.Scrub(answer);
  return finish(std::move(answer));
}

BrokerSummary RunGrant::Summary() const {
  TraceSummary trace = parts_->trace->Summarize();
  BrokerSummary summary;
  summary.profile = parts_->profile->name;
  summary.calls = trace.calls;
  summary.denied = trace.denied;
  summary.routes_dropped = trace.rows_dropped;
  summary.routes.reserve(trace.rows.size());
  for (TraceSummaryRow& row : trace.rows) {
    summary.routes.push_back({.method = std::move(row.method),
                              .route = std::move(row.route),
                              .status = row.status,
                              .allowed = row.allowed,
                              .reason = std::move(row.reason),
                              .count = row.count});
  }
  return summary;
}

std::vector<::plimsoll::Advice> RunGrant::Advice() const {
  return AgentAdvice(Advise(parts_->trace->Entries(), *parts_->profile));
}

std::vector<AdvisorFinding> RunGrant::OperatorFindings() const {
  std::vector<AdvisorFinding> findings = Advise(parts_->trace->Entries(), *parts_->profile);
  std::erase_if(findings, [](const AdvisorFinding& finding) { return finding.agent_fixable; });
  return findings;
}

}  // namespace plimsoll::broker
