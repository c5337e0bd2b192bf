#include "broker/broker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "broker/credential_scrub.h"
#include "broker/jwt.h"
#include "broker/testing/fake_upstream.h"
#include "broker/upstream.h"
#include "daemon/http/test_certificate.h"

namespace plimsoll::broker {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using testing::FakeUpstream;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::ReceivedRequest;
using testing::UpstreamReply;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kStaticToken = "static-7c1e0f5b9a2d4e6f8a0b1c2d3e4f5a6b";
constexpr std::string_view kJwtSecret = "jwt-secret-0123456789abcdef0123456789abcdef";

// A grants file with two profiles on `origin`: `inventory` (static token)
// and `minted` (jwt), plus `private` that only bob may use.
std::string GrantsYaml(const std::string& origin, int64_t max_calls = 256,
                       const std::string& extra = "") {
  return R"(version: 1
profiles:
  inventory:
    base_url: )" +
         origin + R"(
    allow: ["GET /items", "GET /items/*", "POST /items/*/reservations", "GET /moved"]
    allowed_callers: [alice]
    token: {source: static, env: INVENTORY_TOKEN}
    max_calls: )" +
         std::to_string(max_calls) + R"(
    batch_of: {"GET /items/*": "GET /items"}
)" + extra +
         R"(  minted:
    base_url: )" +
         origin + R"(
    allow: ["GET /items/*"]
    scopes: [inventory.read, inventory.reserve]
    allowed_callers: [alice]
    allow_in_sessions: true
    token: {source: jwt, secret_env: MINTED_SECRET, audience: inventory-api, ttl_seconds: 120}
  private:
    base_url: )" +
         origin + R"(
    allow: ["GET /items/*"]
    allowed_callers: [bob]
    token: {source: static, env: INVENTORY_TOKEN}
)";
}

EnvironmentReader Environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
    auto found = variables.find(std::string(name));
    if (found == variables.end()) return std::nullopt;
    return found->second;
  };
}

EnvironmentReader GoodEnvironment() {
  return Environment(
      {{"INVENTORY_TOKEN", std::string(kStaticToken)}, {"MINTED_SECRET", std::string(kJwtSecret)}});
}

Broker MakeBroker(const std::string& yaml, BreakerClock clock = BreakerClock::System()) {
  auto grants = ParseGrants(yaml, "test-grants.yaml");
  EXPECT_TRUE(grants.ok()) << grants.error().ToString();
  auto broker = Broker::Create(std::move(*grants), GoodEnvironment(), std::move(clock));
  EXPECT_TRUE(broker.ok()) << broker.error().ToString();
  return std::move(*broker);
}

std::unique_ptr<RunGrant> OpenGrant(const Broker& broker, std::string_view profile = "inventory",
                                    std::chrono::milliseconds budget = 60s) {
  auto grant = broker.Open(profile, "alice", budget, /*in_session=*/false);
  EXPECT_TRUE(grant.ok()) << grant.error().ToString();
  return std::move(*grant);
}

Clock::time_point In(Clock::duration duration) {
  return Clock::now() + duration;
}

// Nothing the guest sees may carry the credential material.
void ExpectNoCredential(const GuestAnswer& answer) {
  for (const std::string* text : {&answer.body, &answer.message, &answer.content_type}) {
    EXPECT_THAT(*text, Not(HasSubstr(kStaticToken)));
    EXPECT_THAT(*text, Not(HasSubstr(kJwtSecret)));
    EXPECT_THAT(*text, Not(HasSubstr("Bearer")));
  }
}

void ExpectRefused(const GuestAnswer& answer, int status, std::string_view code) {
  EXPECT_EQ(answer.status, status) << answer.message;
  EXPECT_EQ(answer.refused, code) << answer.message;
  EXPECT_EQ(answer.content_type, "application/json");
  auto body = nlohmann::json::parse(answer.body);
  EXPECT_EQ(body.size(), 2u);
  EXPECT_EQ(body.at("error"), std::string(code));
  EXPECT_EQ(body.at("message"), answer.message);
  ASSERT_FALSE(answer.message.empty());
  EXPECT_EQ(answer.message.back(), '.');
  ExpectNoCredential(answer);
}

UpstreamReply Json(std::string body) {
  return UpstreamReply{
      .status = 200, .headers = {{"Content-Type", "application/json"}}, .body = std::move(body)};
}

int64_t CountRows(const BrokerSummary& summary, std::string_view route, std::string_view reason) {
  int64_t count = 0;
  for (const auto& row : summary.routes) {
    if (row.route == route && row.reason == reason) count += row.count;
  }
  return count;
}

// RFC 4648 §5, no padding; a test's own decoder (not jwt.cc's encoder).
std::string Base64UrlDecode(std::string_view text) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    auto index = kAlphabet.find(c);
    if (index == std::string::npos) throw std::runtime_error("not base64url");
    bits = (bits << 6) | static_cast<uint32_t>(index);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

TEST(BrokerCreateTest, ListsEveryMissingOrWeakCredentialAtOnce) {
  auto grants = ParseGrants(GrantsYaml("http://127.0.0.1:9"), "test-grants.yaml");
  ASSERT_TRUE(grants.ok()) << grants.error().ToString();
  auto broker = Broker::Create(std::move(*grants), Environment({{"MINTED_SECRET", "too-short"}}));
  ASSERT_FALSE(broker.ok());
  const std::string message = broker.error().message();
  EXPECT_EQ(broker.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(message, HasSubstr("The broker cannot start: 3 problems:"));
  EXPECT_THAT(message, HasSubstr("Profile \"inventory\": the environment variable "
                                 "INVENTORY_TOKEN (its token) is not set or is empty."));
  EXPECT_THAT(message, HasSubstr("Profile \"private\": the environment variable "
                                 "INVENTORY_TOKEN (its token) is not set or is empty."));
  EXPECT_THAT(message, HasSubstr("Profile \"minted\": the environment variable MINTED_SECRET (its "
                                 "JWT secret) holds 9 bytes; an HS256 secret needs at least 32."));
  EXPECT_THAT(message, Not(HasSubstr("too-short")));
}

TEST(BrokerCreateTest, RefusesAnEmptyTokenAndOneThatCouldSplitAHeader) {
  for (std::string token :
       {std::string(""), std::string("abc\r\nX-Evil: 1"), std::string("has space")}) {
    auto grants = ParseGrants(GrantsYaml("http://127.0.0.1:9"), "test-grants.yaml");
    ASSERT_TRUE(grants.ok());
    auto broker = Broker::Create(
        std::move(*grants),
        Environment({{"INVENTORY_TOKEN", token}, {"MINTED_SECRET", std::string(kJwtSecret)}}));
    ASSERT_FALSE(broker.ok()) << token;
    EXPECT_THAT(broker.error().message(), HasSubstr("2 problems"));
    if (!token.empty()) {
      EXPECT_THAT(broker.error().message(), Not(HasSubstr(token)));
    }
  }
}

TEST(BrokerTest, DescribesOnlyTheProfilesACallerMayUse) {
  Broker broker = MakeBroker(GrantsYaml("http://127.0.0.1:9"));
  EXPECT_THAT(broker.ProfilesFor("alice"), ElementsAre("inventory", "minted"));
  EXPECT_THAT(broker.ProfilesFor("bob"), ElementsAre("private"));
  EXPECT_THAT(broker.ProfilesFor("mallory"), IsEmpty());
}

TEST(BrokerTest, UnknownAndForbiddenProfilesGetTheSameRefusal) {
  Broker broker = MakeBroker(GrantsYaml("http://127.0.0.1:9"));
  auto unknown = broker.Open("no-such-profile", "alice", 10s, false);
  auto forbidden = broker.Open("private", "alice", 10s, false);
  auto unknown_caller = broker.Open("inventory", "mallory", 10s, false);
  ASSERT_FALSE(unknown.ok());
  ASSERT_FALSE(forbidden.ok());
  ASSERT_FALSE(unknown_caller.ok());
  EXPECT_EQ(unknown.error().not_dispatched(), NotDispatched::kPermission);
  EXPECT_EQ(unknown.error(), forbidden.error());
  EXPECT_EQ(unknown.error(), unknown_caller.error());
  EXPECT_EQ(unknown.error().ToString(), forbidden.error().ToString());
  EXPECT_EQ(unknown.error().message(), Broker::kPermissionDeniedMessage);
}

TEST(BrokerTest, ASessionNeedsAllowInSessions) {
  Broker broker = MakeBroker(GrantsYaml("http://127.0.0.1:9"));
  auto refused = broker.Open("inventory", "alice", 10s, /*in_session=*/true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().not_dispatched(), NotDispatched::kPermission);
  EXPECT_THAT(refused.error().message(), HasSubstr("allow_in_sessions"));
  EXPECT_TRUE(broker.Open("minted", "alice", 10s, /*in_session=*/true).ok());
  EXPECT_TRUE(broker.Open("inventory", "alice", 10s, /*in_session=*/false).ok());
}

TEST(BrokerTest, AttachesTheStaticTokenAndNeverShowsIt) {
  FakeUpstream upstream([](const ReceivedRequest&) { return Json(R"({"id":42})"); });
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  auto grant = OpenGrant(broker);
  GuestAnswer answer = grant->Call("GET", "/items/42", "", "", In(10s));
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.content_type, "application/json");
  EXPECT_EQ(answer.body, R"({"id":42})");
  EXPECT_EQ(answer.refused, "");
  EXPECT_EQ(answer.message, "");
  ExpectNoCredential(answer);
  answer = grant->Call("POST", "/items/42/reservations", R"({"n":1})", "application/json", In(10s));
  EXPECT_EQ(answer.status, 200);
  ExpectNoCredential(answer);

  auto requests = upstream.requests();
  ASSERT_EQ(requests.size(), 2u);
  for (const auto& request : requests) {
    EXPECT_EQ(request.Headers("Authorization"),
              std::vector<std::string>{"Bearer " + std::string(kStaticToken)});
    EXPECT_THAT(request.Headers("Cookie"), IsEmpty());
  }
  EXPECT_EQ(requests[0].request_line, "GET /items/42 HTTP/1.1");
  EXPECT_EQ(requests[1].request_line, "POST /items/42/reservations HTTP/1.1");
  EXPECT_EQ(requests[1].body, R"({"n":1})");
  EXPECT_EQ(requests[1].Header("Content-Type"), "application/json");
}

// The forms of `secret` an echoing upstream may send back (issue 39).
std::vector<std::string> EchoedForms(const std::string& secret) {
  std::string percent;
  for (char c : secret) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
    percent += hex;
  }
  std::string base64 = Base64UrlEncode(secret);
  std::string standard = base64;
  std::replace(standard.begin(), standard.end(), '-', '+');
  std::replace(standard.begin(), standard.end(), '_', '/');
  return {secret, percent, base64, standard};
}

// An upstream whose debug route echoes what it was sent, the way error
// pages and debug endpoints do: raw, as JSON, percent-encoded, in base64,
// and in a header the guest receives (its Content-Type).
UpstreamReply Echo(const ReceivedRequest& request) {
  const std::string authorization = request.Header("Authorization");
  const std::string token = authorization.substr(std::string_view("Bearer ").size());
  std::string body = "<h1>400 Bad Request</h1><pre>" + request.Everything() + "</pre>\n";
  body += nlohmann::json{{"headers", {{"authorization", authorization}}}}.dump() + "\n";
  for (const std::string& form : EchoedForms(token)) body += "token: " + form + "\n";
  std::string everything = request.Everything();
  body += "dump: " + Base64UrlEncode("x" + everything) + "\n";
  return UpstreamReply{.status = 400,
                       .headers = {{"Content-Type", "text/html; echo=\"" + token + "\""}},
                       .body = body};
}

TEST(BrokerTest, AnUpstreamThatEchoesTheCredentialNeverHandsItToTheGuest) {
  FakeUpstream upstream(&Echo);
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  for (std::string_view profile : {"inventory", "minted"}) {
    SCOPED_TRACE(profile);
    auto grant = OpenGrant(broker, profile);
    GuestAnswer answer = grant->Call("GET", "/items/echo", "", "", In(10s));
    EXPECT_EQ(answer.status, 400);
    EXPECT_EQ(answer.refused, "");
    const std::string sent = upstream.requests().back().Header("Authorization");
    ASSERT_THAT(sent, HasSubstr("Bearer "));
    std::vector<std::string> secrets = {sent.substr(7), std::string(kJwtSecret)};
    if (profile == "minted") secrets.push_back(Split(secrets[0], '.').back());  // the signature
    for (const std::string& secret : secrets) {
      for (const std::string& form : EchoedForms(secret)) {
        EXPECT_THAT(answer.body, Not(HasSubstr(form)));
        EXPECT_THAT(answer.content_type, Not(HasSubstr(form)));
      }
    }
    EXPECT_THAT(answer.body, HasSubstr("Authorization: Bearer [credential removed]"));
    EXPECT_THAT(answer.body,
                HasSubstr(R"({"headers":{"authorization":"Bearer [credential removed]"}})"));
    EXPECT_EQ(answer.content_type, "text/html; echo=\"[credential removed]\"");
    EXPECT_THAT(answer.body, HasSubstr("<h1>400 Bad Request</h1>"));  // the rest is kept
  }
}

TEST(BrokerTest, AScrubbedBodyKeepsTheCapAndACutTokenIsRemovedToo) {
  // A token shorter than the marker: scrubbing makes the body longer.
  auto grants = ParseGrants(GrantsYaml("http://127.0.0.1:9"), "test-grants.yaml");
  ASSERT_TRUE(grants.ok());
  const std::string short_token = "tok-3f9a";
  std::string repeated;
  while (repeated.size() < kMaxResponseBody) repeated += short_token + " ";
  repeated.resize(kMaxResponseBody);
  std::string cut_token = std::string(kMaxResponseBody - 4, 'z') + short_token + "zzzz";
  FakeUpstream upstream([&](const ReceivedRequest& request) {
    return Json(request.target == "/items/many" ? repeated : cut_token);
  });
  grants = ParseGrants(GrantsYaml(upstream.origin().ToString()), "test-grants.yaml");
  ASSERT_TRUE(grants.ok());
  auto broker = Broker::Create(
      std::move(*grants),
      Environment({{"INVENTORY_TOKEN", short_token}, {"MINTED_SECRET", std::string(kJwtSecret)}}));
  ASSERT_TRUE(broker.ok()) << broker.error().ToString();
  auto grant = OpenGrant(*broker);

  GuestAnswer answer = grant->Call("GET", "/items/many", "", "", In(30s));
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body.size(), kMaxResponseBody);
  EXPECT_TRUE(answer.truncated);
  // (find, not HasSubstr: a failure must not print 4 MiB)
  EXPECT_EQ(answer.body.find(short_token), std::string::npos);
  EXPECT_TRUE(answer.body.starts_with("[credential removed] [credential removed] "));

  // The upstream's body is over the cap and the cut falls inside the token:
  // its first four bytes would be the body's last.
  answer = grant->Call("GET", "/items/cut", "", "", In(30s));
  EXPECT_TRUE(answer.truncated);
  EXPECT_EQ(answer.body.size(), kMaxResponseBody);
  // The marker took the token's start and was cut back to the cap.
  EXPECT_EQ(answer.body.substr(kMaxResponseBody - 8),
            "zzzz" + std::string(kCredentialMarker.substr(0, 4)));
}

TEST(BrokerTest, MintsOneJwtPerRunWithTheRightClaims) {
  FakeUpstream upstream([](const ReceivedRequest&) { return Json("{}"); });
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  const int64_t before = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  // Budget 2.5 s: exp = iat + min(120, ceil(2.5) + 5) = iat + 8.
  auto short_run = OpenGrant(broker, "minted", 2500ms);
  auto long_run = OpenGrant(broker, "minted", 1h);  // exp = iat + 120 (the ttl)
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(short_run->Call("GET", "/items/" + std::to_string(i), "", "", In(10s)).status, 200);
  }
  EXPECT_EQ(long_run->Call("GET", "/items/9", "", "", In(10s)).status, 200);
  const int64_t after = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();

  auto requests = upstream.requests();
  ASSERT_EQ(requests.size(), 3u);
  // Minted once per run: both calls of the first run carry the same token.
  EXPECT_EQ(requests[0].Header("Authorization"), requests[1].Header("Authorization"));
  EXPECT_NE(requests[0].Header("Authorization"), requests[2].Header("Authorization"));

  std::vector<std::string> jtis;
  for (std::size_t index : {std::size_t{0}, std::size_t{2}}) {
    const std::string authorization = requests[index].Header("Authorization");
    ASSERT_EQ(authorization.rfind("Bearer ", 0), 0u) << authorization;
    const std::string token = authorization.substr(7);
    auto parts = Split(token, '.');
    ASSERT_EQ(parts.size(), 3u);

    // The signature, checked with OpenSSL's HMAC directly.
    const std::string signing_input = parts[0] + "." + parts[1];
    std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
    unsigned int mac_size = 0;
    ASSERT_NE(HMAC(EVP_sha256(), kJwtSecret.data(), static_cast<int>(kJwtSecret.size()),
                   reinterpret_cast<const unsigned char*>(signing_input.data()),
                   signing_input.size(), mac.data(), &mac_size),
              nullptr);
    EXPECT_EQ(Base64UrlDecode(parts[2]),
              std::string(reinterpret_cast<const char*>(mac.data()), mac_size));

    auto header = nlohmann::json::parse(Base64UrlDecode(parts[0]));
    EXPECT_EQ(header.at("alg"), "HS256");
    auto claims = nlohmann::json::parse(Base64UrlDecode(parts[1]));
    EXPECT_EQ(claims.at("sub"), "alice");
    EXPECT_EQ(claims.at("aud"), "inventory-api");
    EXPECT_EQ(claims.at("scope"), "inventory.read inventory.reserve");
    const std::string jti = claims.at("jti");
    EXPECT_EQ(jti.size(), 32u);
    EXPECT_EQ(jti.find_first_not_of("0123456789abcdef"), std::string::npos) << jti;
    jtis.push_back(jti);
    const int64_t iat = claims.at("iat");
    const int64_t exp = claims.at("exp");
    EXPECT_GE(iat, before);
    EXPECT_LE(iat, after);
    EXPECT_LE(exp - iat, 120);  // within the ttl
    if (index == 0) {
      EXPECT_EQ(exp - iat, 8);  // within the budget + 5 s
    } else {
      EXPECT_EQ(exp - iat, 120);
    }
    EXPECT_THAT(token, Not(HasSubstr(kJwtSecret)));
  }
  EXPECT_NE(jtis[0], jtis[1]);
}

TEST(BrokerTest, ARedirectComesBackAsItIs) {
  FakeUpstream upstream([](const ReceivedRequest&) {
    return UpstreamReply{
        .status = 302,
        .headers = {{"Location", "http://127.0.0.1:1/stolen"}, {"Content-Type", "text/plain"}},
        .body = "see elsewhere"};
  });
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  auto grant = OpenGrant(broker);
  GuestAnswer answer = grant->Call("GET", "/moved", "", "", In(10s));
  EXPECT_EQ(answer.status, 302);
  EXPECT_EQ(answer.refused, "");
  EXPECT_EQ(answer.body, "see elsewhere");
  EXPECT_THAT(answer.body + answer.content_type + answer.message, Not(HasSubstr("stolen")));
  EXPECT_EQ(upstream.requests().size(), 1u);
  EXPECT_EQ(upstream.connections_accepted(), 1);
}

TEST(BrokerTest, AnOversizeBodyIsRefusedBeforeAnyConnection) {
  FakeUpstream upstream([](const ReceivedRequest&) { return Json("{}"); });
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  auto grant = OpenGrant(broker);
  GuestAnswer answer = grant->Call("POST", "/items/1/reservations",
                                   std::string(kMaxRequestBody + 1, 'x'), "text/plain", In(10s));
  ExpectRefused(answer, 413, "body_too_large");
  EXPECT_EQ(upstream.connections_accepted(), 0);
  BrokerSummary summary = grant->Summary();
  EXPECT_EQ(summary.calls, 1);
  EXPECT_EQ(summary.denied, 1);
  EXPECT_EQ(CountRows(summary, "/items/*/reservations", "body_too_large"), 1);
}

TEST(BrokerTest, ALongAnswerIsCutAtFourMebibytesAndFlagged) {
  const std::string five_mib(5u << 20, 'z');
  FakeUpstream upstream([&](const ReceivedRequest&) { return Json(five_mib); });
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  auto grant = OpenGrant(broker);
  GuestAnswer answer = grant->Call("GET", "/items", "", "", In(30s));
  EXPECT_EQ(answer.status, 200);
  EXPECT_TRUE(answer.truncated);
  EXPECT_EQ(answer.body.size(), kMaxResponseBody);
  EXPECT_EQ(answer.refused, "");
  EXPECT_EQ(grant->Summary().calls, 1);
}

TEST(BrokerTest, ASilentUpstreamIsBoundedByTheCallsAndTheRunsDeadline) {
  FakeUpstream upstream([](const ReceivedRequest&) { return UpstreamReply{.never_answer = true}; });
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  auto grant = OpenGrant(broker);
  auto started = Clock::now();
  GuestAnswer answer = grant->Call("GET", "/items/1", "", "", started + 300ms);
  EXPECT_LT(Clock::now() - started, 5s);
  ExpectRefused(answer, 504, "upstream_timeout");
  EXPECT_THAT(answer.message, Not(HasSubstr(upstream.origin().ToString())));
  EXPECT_THAT(answer.message, Not(HasSubstr("127.0.0.1")));

  // The run's budget bounds a call whose own deadline is far away.
  auto short_run = OpenGrant(broker, "inventory", 300ms);
  started = Clock::now();
  answer = short_run->Call("GET", "/items/1", "", "", started + 1h);
  EXPECT_LT(Clock::now() - started, 5s);
  ExpectRefused(answer, 504, "upstream_timeout");
  EXPECT_EQ(CountRows(short_run->Summary(), "/items/*", "upstream_timeout"), 1);
}

TEST(BrokerTest, TooManyRequestsOpensTheCircuitAndAHealthCheckClosesIt) {
  std::atomic<bool> healthy{false};
  FakeUpstream upstream([&](const ReceivedRequest& request) {
    if (request.target == "/health") {
      return UpstreamReply{.status = healthy ? 200 : 503, .body = ""};
    }
    if (request.target == "/items/1") {
      return UpstreamReply{.status = 429, .headers = {{"Retry-After", "10"}}, .body = "slow"};
    }
    return Json("{}");
  });
  Clock::time_point now = Clock::now();
  std::chrono::system_clock::time_point wall = std::chrono::system_clock::now();
  BreakerClock clock{[&] { return now; }, [&] { return wall; }};
  Broker broker = MakeBroker(
      GrantsYaml(upstream.origin().ToString(), 256, "    health_check: GET /health\n"), clock);
  auto grant = OpenGrant(broker);

  GuestAnswer answer = grant->Call("GET", "/items/1", "", "", In(10s));
  EXPECT_EQ(answer.status, 429);  // the upstream's own answer
  EXPECT_EQ(answer.refused, "");
  EXPECT_EQ(broker.CircuitState("inventory"), CircuitBreaker::State::kOpen);

  answer = grant->Call("GET", "/items/2", "", "", In(10s));
  ExpectRefused(answer, 429, "circuit_open");
  EXPECT_THAT(answer.message, HasSubstr("10 seconds"));
  EXPECT_EQ(upstream.requests().size(), 1u);  // never reached the upstream

  // Another run of the daemon shares the circuit.
  auto other_run = OpenGrant(broker);
  ExpectRefused(other_run->Call("GET", "/items/3", "", "", In(10s)), 429, "circuit_open");
  EXPECT_EQ(upstream.requests().size(), 1u);

  // After the wait the health check is the probe: failing, it reopens.
  now += 11s;
  wall += 11s;
  ExpectRefused(grant->Call("GET", "/items/2", "", "", In(10s)), 429, "circuit_open");
  ASSERT_EQ(upstream.requests().size(), 2u);
  EXPECT_EQ(upstream.requests()[1].request_line, "GET /health HTTP/1.1");
  EXPECT_EQ(upstream.requests()[1].Header("Authorization"), "Bearer " + std::string(kStaticToken));

  // Passing, it closes the circuit and the call goes on.
  now += 6s;
  wall += 6s;
  healthy = true;
  answer = grant->Call("GET", "/items/2", "", "", In(10s));
  EXPECT_EQ(answer.status, 200);
  auto requests = upstream.requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[2].target, "/health");
  EXPECT_EQ(requests[3].target, "/items/2");
  EXPECT_EQ(broker.CircuitState("inventory"), CircuitBreaker::State::kClosed);
  EXPECT_EQ(CountRows(grant->Summary(), "/items/*", "circuit_open"), 2);
}

// Issue 39: the circuit is shared by every run of a profile, so a hostile
// run must not be able to hold it open for the others: neither by being the
// probe with 1 ms left (its own timeout is no upstream failure) nor by
// probing with a route that answers 500. An honest run's calls go through
// in every retry window.
TEST(BrokerTest, AHostileRunCannotHoldTheCircuitOpenWithoutAHealthCheck) {
  FakeUpstream upstream([](const ReceivedRequest& request) {
    if (request.target == "/items/busy") {
      return UpstreamReply{.status = 429, .headers = {{"Retry-After", "2"}}, .body = "slow down"};
    }
    if (request.target == "/items/broken") return UpstreamReply{.status = 500, .body = "oops"};
    if (request.target == "/items/slow") return UpstreamReply{.never_answer = true};
    return Json("{}");
  });
  Clock::time_point now = Clock::now();
  std::chrono::system_clock::time_point wall = std::chrono::system_clock::now();
  BreakerClock clock{[&] { return now; }, [&] { return wall; }};
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()), clock);
  auto honest = OpenGrant(broker);
  auto hostile = OpenGrant(broker);

  for (int window = 0; window < 3; ++window) {
    SCOPED_TRACE("retry window " + std::to_string(window));
    // The upstream really asks to back off, once.
    EXPECT_EQ(honest->Call("GET", "/items/busy", "", "", In(10s)).status, 429);
    ASSERT_EQ(broker.CircuitState("inventory"), CircuitBreaker::State::kOpen);
    now += 3s;
    wall += 3s;
    // The hostile run takes the probe with 1 ms left...
    ExpectRefused(hostile->Call("GET", "/items/slow", "", "", In(1ms)), 504, "upstream_timeout");
    EXPECT_NE(broker.CircuitState("inventory"), CircuitBreaker::State::kProbing);
    // ...and the honest run's next call probes at once, and passes.
    GuestAnswer answer = honest->Call("GET", "/items/7", "", "", In(10s));
    EXPECT_EQ(answer.status, 200) << answer.message;
    EXPECT_EQ(broker.CircuitState("inventory"), CircuitBreaker::State::kClosed);

    EXPECT_EQ(honest->Call("GET", "/items/busy", "", "", In(10s)).status, 429);
    now += 3s;
    wall += 3s;
    // The hostile run probes with a route that answers 500: an answer.
    EXPECT_EQ(hostile->Call("GET", "/items/broken", "", "", In(10s)).status, 500);
    EXPECT_EQ(broker.CircuitState("inventory"), CircuitBreaker::State::kClosed);
    answer = honest->Call("GET", "/items/8", "", "", In(10s));
    EXPECT_EQ(answer.status, 200) << answer.message;
  }
  EXPECT_EQ(CountRows(honest->Summary(), "/items/*", "circuit_open"), 0);
}

TEST(BrokerTest, AHostileRunCannotFailTheHealthCheckForOthers) {
  FakeUpstream upstream([](const ReceivedRequest& request) {
    if (request.target == "/health") {
      std::this_thread::sleep_for(50ms);  // healthy, not instant
      return UpstreamReply{.status = 200, .body = ""};
    }
    if (request.target == "/items/busy") {
      return UpstreamReply{.status = 503, .headers = {{"Retry-After", "2"}}, .body = "later"};
    }
    if (request.target == "/items/broken") return UpstreamReply{.status = 500, .body = "oops"};
    return Json("{}");
  });
  Clock::time_point now = Clock::now();
  std::chrono::system_clock::time_point wall = std::chrono::system_clock::now();
  BreakerClock clock{[&] { return now; }, [&] { return wall; }};
  Broker broker = MakeBroker(
      GrantsYaml(upstream.origin().ToString(), 256, "    health_check: GET /health\n"), clock);
  auto honest = OpenGrant(broker);
  auto hostile = OpenGrant(broker);

  for (int window = 0; window < 3; ++window) {
    SCOPED_TRACE("retry window " + std::to_string(window));
    EXPECT_EQ(honest->Call("GET", "/items/busy", "", "", In(10s)).status, 503);
    ASSERT_EQ(broker.CircuitState("inventory"), CircuitBreaker::State::kOpen);
    now += 3s;
    wall += 3s;
    // With 1 ms left, the hostile run's call triggers the health check,
    // which its deadline cuts short: abandoned, not failed.
    ExpectRefused(hostile->Call("GET", "/items/broken", "", "", In(1ms)), 429, "circuit_open");
    EXPECT_EQ(broker.CircuitState("inventory"), CircuitBreaker::State::kOpen);
    // The honest run's call sends the health check at once, which passes.
    GuestAnswer answer = honest->Call("GET", "/items/7", "", "", In(10s));
    EXPECT_EQ(answer.status, 200) << answer.message;
    EXPECT_EQ(broker.CircuitState("inventory"), CircuitBreaker::State::kClosed);
    // A 500 on a route after the health check passed changes nothing.
    EXPECT_EQ(hostile->Call("GET", "/items/broken", "", "", In(10s)).status, 500);
    EXPECT_EQ(broker.CircuitState("inventory"), CircuitBreaker::State::kClosed);
  }
  EXPECT_EQ(CountRows(honest->Summary(), "/items/*", "circuit_open"), 0);
}

// An upstream that is really gone still keeps the circuit open: no answer
// to a probe that had the daemon's allowance is a failure.
TEST(BrokerTest, AProbeThatCannotConnectReopensTheCircuit) {
  std::optional<FakeUpstream> upstream(std::in_place, [](const ReceivedRequest&) {
    return UpstreamReply{.status = 503, .headers = {{"Retry-After", "1"}}, .body = ""};
  });
  Clock::time_point now = Clock::now();
  std::chrono::system_clock::time_point wall = std::chrono::system_clock::now();
  BreakerClock clock{[&] { return now; }, [&] { return wall; }};
  Broker broker = MakeBroker(GrantsYaml(upstream->origin().ToString()), clock);
  auto grant = OpenGrant(broker);
  EXPECT_EQ(grant->Call("GET", "/items/1", "", "", In(10s)).status, 503);
  upstream.reset();  // nothing listens on the port any more
  now += 2s;
  wall += 2s;
  ExpectRefused(grant->Call("GET", "/items/1", "", "", In(10s)), 502, "upstream_error");
  EXPECT_EQ(broker.CircuitState("inventory"), CircuitBreaker::State::kOpen);
  ExpectRefused(grant->Call("GET", "/items/1", "", "", In(10s)), 429, "circuit_open");
}

TEST(BrokerTest, AThousandCallsAgainstMaxCallsFromFourThreads) {
  FakeUpstream upstream([](const ReceivedRequest&) { return Json("{}"); });
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  auto grant = OpenGrant(broker);
  std::atomic<int> ok{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 250; ++i) {
        GuestAnswer answer =
            grant->Call("GET", "/items/" + std::to_string(t * 250 + i), "", "", In(60s));
        if (answer.status == 200) {
          ++ok;
        } else if (answer.refused == "max_calls" && answer.status == 429) {
          ++refused;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 256);
  EXPECT_EQ(refused.load(), 744);
  EXPECT_EQ(upstream.requests().size(), 256u);
  BrokerSummary summary = grant->Summary();
  EXPECT_EQ(summary.calls, 1000);
  EXPECT_EQ(summary.denied, 744);
  EXPECT_EQ(CountRows(summary, "/items/*", ""), 256);
  EXPECT_EQ(CountRows(summary, "/items/*", "max_calls"), 744);
}

TEST(BrokerTest, ARouteCapRefusesOnlyItsRoute) {
  FakeUpstream upstream([](const ReceivedRequest&) { return Json("{}"); });
  Broker broker =
      MakeBroker(GrantsYaml(upstream.origin().ToString(), 256,
                            "    route_max_calls: {\"POST /items/*/reservations\": 2}\n"));
  auto grant = OpenGrant(broker);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(
        grant->Call("POST", "/items/1/reservations", "{}", "application/json", In(10s)).status,
        200);
  }
  ExpectRefused(grant->Call("POST", "/items/1/reservations", "{}", "application/json", In(10s)),
                429, "route_max_calls");
  EXPECT_EQ(grant->Call("GET", "/items/1", "", "", In(10s)).status, 200);
  EXPECT_EQ(upstream.requests().size(), 3u);
  EXPECT_EQ(CountRows(grant->Summary(), "/items/*/reservations", "route_max_calls"), 1);
}

TEST(BrokerTest, TrickPathsAreRefusedCountedAndNeverSent) {
  FakeUpstream upstream([](const ReceivedRequest&) { return Json("{}"); });
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  auto grant = OpenGrant(broker);
  const std::vector<std::string> tricks = {
      "/items/%2e%2e/admin", "/items/%2E%2E",    "/items/..",         "/items%2fadmin",
      "/items/1%2F..",       "/items/1\r\nX: y", "/items/1%0d%0aX:y", "/items/1\n",
      "/items/1?x=1",        "/items/1#frag",    "/items/1;a",        "/items//1",
      "/items/%252e%252e",   "/items/%C0%AF",    "items/1",           "/items\\1",
  };
  for (const auto& path : tricks) {
    GuestAnswer answer = grant->Call("GET", path, "", "", In(10s));
    ExpectRefused(answer, 403, "bad_path");
  }
  EXPECT_EQ(upstream.connections_accepted(), 0);
  BrokerSummary summary = grant->Summary();
  EXPECT_EQ(summary.calls, static_cast<int64_t>(tricks.size()));
  EXPECT_EQ(summary.denied, static_cast<int64_t>(tricks.size()));
  EXPECT_EQ(CountRows(summary, "", "bad_path"), static_cast<int64_t>(tricks.size()));
}

TEST(BrokerTest, OtherRoutesMethodsAndContentTypesAreRefused) {
  FakeUpstream upstream([](const ReceivedRequest&) { return Json("{}"); });
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  auto grant = OpenGrant(broker);
  ExpectRefused(grant->Call("GET", "/admin", "", "", In(10s)), 403, "not_allowed");
  ExpectRefused(grant->Call("DELETE", "/items/1", "", "", In(10s)), 403, "not_allowed");
  ExpectRefused(grant->Call("GET", "/items/1/secret", "", "", In(10s)), 403, "not_allowed");
  ExpectRefused(grant->Call("get", "/items/1", "", "", In(10s)), 403, "not_allowed");
  ExpectRefused(grant->Call("BREW", "/items/1", "", "", In(10s)), 403, "not_allowed");
  ExpectRefused(
      grant->Call("POST", "/items/1/reservations", "{}", "application/json\r\nX-Evil: 1", In(10s)),
      403, "not_allowed");
  EXPECT_EQ(upstream.connections_accepted(), 0);
  BrokerSummary summary = grant->Summary();
  EXPECT_EQ(summary.calls, 6);
  EXPECT_EQ(summary.denied, 6);
  bool saw_other = false;
  for (const auto& row : summary.routes) saw_other = saw_other || row.method == "OTHER";
  EXPECT_TRUE(saw_other);  // "get" and "BREW" are recorded as OTHER, never as sent
}

TEST(BrokerTest, TheSummaryAndAdviceCarryTemplatesNeverPaths) {
  FakeUpstream upstream([](const ReceivedRequest&) { return Json(R"({"sku":"x"})"); });
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  auto grant = OpenGrant(broker);
  for (std::string id : {"sku-314159", "sku-271828", "sku-161803", "sku-314159"}) {
    EXPECT_EQ(grant->Call("GET", "/items/" + id, "", "", In(10s)).status, 200);
  }
  BrokerSummary summary = grant->Summary();
  ASSERT_EQ(summary.routes.size(), 1u);
  EXPECT_EQ(summary.routes[0].method, "GET");
  EXPECT_EQ(summary.routes[0].route, "/items/*");
  EXPECT_EQ(summary.routes[0].status, 200);
  EXPECT_EQ(summary.routes[0].count, 4);

  std::vector<Advice> advice = grant->Advice();
  ASSERT_FALSE(advice.empty());
  std::vector<std::string> patterns;
  for (const auto& item : advice) {
    patterns.push_back(item.pattern);
    EXPECT_THAT(item.route, HasSubstr("/items/*"));
    EXPECT_THAT(item.message, Not(HasSubstr("sku-")));
  }
  EXPECT_THAT(patterns, ::testing::Contains("fan_out"));
  EXPECT_THAT(patterns, ::testing::Contains("repeated_read"));
  EXPECT_THAT(grant->OperatorFindings(), IsEmpty());
}

TEST(BrokerTest, AnUntrustedCertificateIsRefused) {
  daemon::http::testing::TestCertificate certificate;
  FakeUpstream upstream(
      [](const ReceivedRequest&) { return Json("{}"); },
      testing::FakeUpstreamTls{certificate.certificate_path(), certificate.key_path()});
  Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
  auto grant = OpenGrant(broker);
  GuestAnswer answer = grant->Call("GET", "/items/1", "", "", In(10s));
  ExpectRefused(answer, 502, "upstream_error");
  EXPECT_THAT(answer.message, HasSubstr("did not verify"));
  // What went wrong, not where: the guest never learns the upstream's address.
  EXPECT_THAT(answer.message, Not(HasSubstr("127.0.0.1")));
  EXPECT_THAT(upstream.requests(), IsEmpty());
  EXPECT_EQ(CountRows(grant->Summary(), "/items/*", "upstream_error"), 1);
}

TEST(BrokerTest, AGrantOutlivesItsBroker) {
  FakeUpstream upstream([](const ReceivedRequest&) { return Json("{}"); });
  std::unique_ptr<RunGrant> grant;
  {
    Broker broker = MakeBroker(GrantsYaml(upstream.origin().ToString()));
    grant = OpenGrant(broker);
  }
  EXPECT_EQ(grant->Call("GET", "/items/1", "", "", In(10s)).status, 200);
  EXPECT_EQ(grant->profile(), "inventory");
}

}  // namespace
}  // namespace plimsoll::broker
