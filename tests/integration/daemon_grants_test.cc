// Grants end to end over real HTTP (SPEC §8): a daemon with a broker, the
// embedded provider, and a real upstream server on loopback that records
// what it received. Guest JavaScript calls host.get/host.post; the test
// checks what the upstream got (the credential, only allowed calls), what
// the guest got (never the credential), the trace on the result (covered by
// its record), describe, metrics and the audit line, and that every way of
// naming a profile one may not use gets the same refusal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "broker/broker.h"
#include "broker/grants.h"
#include "broker/testing/fake_upstream.h"
#include "daemon_fixture.h"
#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon::testing {
namespace {

using broker::testing::FakeUpstream;
using broker::testing::ReceivedRequest;
using broker::testing::UpstreamReply;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "sk-live-4f7e1c9a2b8d6e3f0a5c7b9d1e3f5a7c";

std::string GrantsYaml(const std::string& origin) {
  return R"(version: 1
profiles:
  inventory:
    base_url: )" +
         origin + R"(
    allow: ["GET /items", "GET /items/*", "POST /items/*/reservations"]
    allowed_callers: [dev]
    token: {source: static, env: INVENTORY_TOKEN}
    max_calls: 20
    batch_of: {"GET /items/*": "GET /items"}
  catalog:
    base_url: )" +
         origin + R"(
    allow: ["GET /items/*"]
    allowed_callers: [dev]
    token: {source: static, env: INVENTORY_TOKEN}
    allow_in_sessions: true
  billing:
    base_url: )" +
         origin + R"(
    allow: ["GET /invoices/*"]
    allowed_callers: [someone-else]
    token: {source: static, env: INVENTORY_TOKEN}
)";
}

broker::Broker MakeBroker(const std::string& origin) {
  auto grants = broker::ParseGrants(GrantsYaml(origin), "grants.yaml");
  if (!grants.ok()) throw std::runtime_error(grants.error().ToString());
  auto made = broker::Broker::Create(std::move(*grants), [](std::string_view name) {
    return name == "INVENTORY_TOKEN" ? std::optional<std::string>(kToken) : std::nullopt;
  });
  if (!made.ok()) throw std::runtime_error(made.error().ToString());
  return std::move(*made);
}

UpstreamReply Inventory(const ReceivedRequest& request) {
  if (request.target == "/items/echo") {
    // A debug route that echoes what it was sent, header and all.
    return {.status = 500,
            .headers = {{"Content-Type",
                         "text/plain; seen=\"" + request.Header("Authorization") + "\""}},
            .body = "Internal error. Request was:\n" + request.Everything()};
  }
  if (request.target == "/items") {
    return {.status = 200,
            .headers = {{"Content-Type", "application/json"}},
            .body = R"([{"id":1},{"id":2},{"id":3}])"};
  }
  if (request.target.starts_with("/items/") && request.method == "GET") {
    return {.status = 200,
            .headers = {{"Content-Type", "application/json"}},
            .body = R"({"id":")" + request.target.substr(7) + R"("})"};
  }
  return {.status = 201, .headers = {{"Content-Type", "application/json"}}, .body = R"({"ok":1})"};
}

class DaemonGrants : public ::testing::Test {
 protected:
  DaemonGrants()
      : upstream_(&Inventory),
        broker_(MakeBroker(upstream_.origin().ToString())),
        daemon_(WithBroker(broker_)) {}

  static DaemonOptions WithBroker(const broker::Broker& broker) {
    DaemonOptions options;
    options.broker = &broker;
    return options;
  }

  // Posts a run of `code` naming `profile` ("" none); the answer's JSON.
  HttpReply Run(const std::string& code, const std::string& profile) {
    std::string extra = profile.empty() ? "" : R"("grant_profile": ")" + profile + "\"";
    return SendOnce(daemon_.port(),
                    {.method = "POST", .target = "/v1/runs", .body = RunBody(code, extra)});
  }

  FakeUpstream upstream_;
  broker::Broker broker_;
  DaemonUnderTest daemon_;
};

TEST_F(DaemonGrants, AGuestCallReachesTheUpstreamWithTheCredentialTheGuestNeverSees) {
  HttpReply reply = Run(R"(
    const one = host.get('/items/7');
    const made = host.post('/items/7/reservations', {qty: 2});
    console.log(one.status, JSON.parse(one.body).id, made.status, one.content_type);
    console.log(JSON.stringify(Object.keys(globalThis)), JSON.stringify(host));
  )",
                        "inventory");
  ASSERT_EQ(reply.status, 200u) << reply.body;
  json answer = json::parse(reply.body);
  EXPECT_EQ(answer["exit_code"], 0) << answer.dump();
  EXPECT_THAT(answer["stdout"].get<std::string>(), HasSubstr("200 7 201 application/json"));
  EXPECT_THAT(reply.body, Not(HasSubstr(kToken)));

  std::vector<ReceivedRequest> received = upstream_.requests();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[0].request_line, "GET /items/7 HTTP/1.1");
  EXPECT_EQ(received[0].Header("Authorization"), std::string("Bearer ") + kToken);
  EXPECT_EQ(received[1].method, "POST");
  EXPECT_EQ(received[1].body, R"({"qty":2})");
  EXPECT_EQ(received[1].Header("Content-Type"), "application/json");

  // The trace is on the result, and the record covers it.
  ASSERT_TRUE(answer.contains("broker")) << answer.dump();
  EXPECT_EQ(answer["broker"]["profile"], "inventory");
  EXPECT_EQ(answer["broker"]["calls"], 2);
  EXPECT_EQ(answer["broker"]["denied"], 0);
  EXPECT_EQ(answer["broker"]["routes"].size(), 2u) << answer["broker"].dump();
  auto request = ParseRequestJson(RunBody("x", R"("grant_profile": "inventory")"));
  auto result = ParseResultJson(reply.body);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  ASSERT_TRUE(result->broker.has_value());
  EXPECT_EQ(result->record.result_sha256, ResultDigest(*result));
  Result altered = *result;
  altered.broker->routes[0].count += 1;
  EXPECT_NE(ResultDigest(altered), result->record.result_sha256);
  (void)request;
}

TEST_F(DaemonGrants, EveryBypassIsRefusedCountedAndNeverReachesTheUpstream) {
  HttpReply reply = Run(R"(
    const tries = ['/items/%2e%2e/admin', '/items/..', '/items/a%2fb', '/items/1?all=1',
                   '/items/1#x', '/admin', '/items/1\r\nX-Evil: 1', '/items//1', '/items\\1',
                   '/items/%c0%ae', '/items/1;x', '/items/..%20', '/items/..%C2%A0',
                   '/items/.. .'];
    let refused = 0;
    for (const path of tries) {
      try { host.get(path); } catch (e) { if (e.code === 'refused') refused++; }
    }
    try { host.call({method: 'DELETE', path: '/items/1'}); } catch (e) { refused++; }
    // Over the broker's 1 MiB: the engine's own host_call cap (1 MiB for the
    // whole request) stops it in the guest, before the broker.
    let tooLarge = '';
    try { host.post('/items/1/reservations', 'x'.repeat(1100000)); } catch (e) {
      tooLarge = e.name;
    }
    console.log(refused, tooLarge);
  )",
                        "inventory");
  ASSERT_EQ(reply.status, 200u) << reply.body;
  json answer = json::parse(reply.body);
  EXPECT_EQ(answer["stdout"], "15 RangeError\n") << answer.dump();
  EXPECT_EQ(answer["broker"]["calls"], 15);
  EXPECT_EQ(answer["broker"]["denied"], 15);
  EXPECT_TRUE(upstream_.requests().empty());
}

// Issue 39: what the upstream echoes passes through the broker scrubbed, so
// the credential does not enter the sandbox that way either.
TEST_F(DaemonGrants, AnUpstreamThatEchoesTheCredentialDoesNotHandItToTheGuest) {
  HttpReply reply = Run(R"(
    const echoed = host.get('/items/echo');
    console.log(echoed.status, echoed.content_type);
    console.log(echoed.body);
  )",
                        "inventory");
  ASSERT_EQ(reply.status, 200u) << reply.body;
  json answer = json::parse(reply.body);
  EXPECT_EQ(answer["exit_code"], 0) << answer.dump();
  ASSERT_EQ(upstream_.requests().size(), 1u);
  EXPECT_EQ(upstream_.requests()[0].Header("Authorization"), std::string("Bearer ") + kToken);
  const std::string out = answer["stdout"];
  EXPECT_THAT(out, HasSubstr("500 text/plain; seen=\"Bearer [credential removed]\""));
  EXPECT_THAT(out, HasSubstr("Authorization: Bearer [credential removed]"));
  EXPECT_THAT(reply.body, Not(HasSubstr(kToken)));
}

// Issue 39: the script's request is JSON the daemon parses; it is held to
// the same depth limit as every other JSON the daemon reads.
TEST_F(DaemonGrants, ADeeplyNestedHostCallBodyIsRefusedCleanly) {
  HttpReply reply = Run(R"(
    let deep = 1;
    for (let i = 0; i < 200; i++) deep = [deep];
    let message = '';
    try { host.post('/items/1/reservations', deep); } catch (e) { message = e.message; }
    const shallow = host.post('/items/1/reservations', [[[1]]]);
    console.log(message);
    console.log(shallow.status);
  )",
                        "inventory");
  ASSERT_EQ(reply.status, 200u) << reply.body;
  json answer = json::parse(reply.body);
  EXPECT_EQ(answer["exit_code"], 0) << answer.dump();
  EXPECT_THAT(answer["stdout"].get<std::string>(), HasSubstr("deeper than 64"));
  EXPECT_THAT(answer["stdout"].get<std::string>(), HasSubstr("\n201\n"));
  ASSERT_EQ(upstream_.requests().size(), 1u);  // only the shallow one
  EXPECT_EQ(upstream_.requests()[0].body, "[[[1]]]");
}

TEST_F(DaemonGrants, MaxCallsHoldsAgainstAThousandCalls) {
  HttpReply reply = Run(R"(
    let ok = 0, refused = 0;
    for (let i = 0; i < 1000; i++) {
      try { host.get('/items/' + i); ok++; } catch (e) { refused++; }
    }
    console.log(ok, refused);
  )",
                        "inventory");
  ASSERT_EQ(reply.status, 200u) << reply.body;
  json answer = json::parse(reply.body);
  EXPECT_EQ(answer["stdout"], "20 980\n") << answer.dump();
  EXPECT_EQ(answer["broker"]["calls"], 1000);
  EXPECT_EQ(answer["broker"]["denied"], 980);
  EXPECT_EQ(upstream_.requests().size(), 20u);
  // 20 single-item reads with the collection granted: a fan_out finding.
  ASSERT_TRUE(answer.contains("advice")) << answer.dump();
  EXPECT_EQ(answer["advice"][0]["pattern"], "fan_out");
}

TEST_F(DaemonGrants, AnUnknownAForbiddenAndAnUnscopedProfileGetTheSameRefusal) {
  HttpReply unknown = Run("1", "no-such-profile");
  HttpReply forbidden = Run("1", "billing");
  ASSERT_EQ(unknown.status, 403u) << unknown.body;
  ASSERT_EQ(forbidden.status, 403u) << forbidden.body;
  json a = json::parse(unknown.body)["error"];
  json b = json::parse(forbidden.body)["error"];
  EXPECT_EQ(a["code"], b["code"]);
  EXPECT_EQ(a["message"], b["message"]);
  EXPECT_EQ(a["not_dispatched"], "permission");
  EXPECT_EQ(b["not_dispatched"], "permission");
  EXPECT_EQ(daemon_.provider().runs(), 0);
  EXPECT_TRUE(upstream_.requests().empty());
}

TEST_F(DaemonGrants, DescribeListsOnlyTheProfilesThisCallerMayUse) {
  HttpReply reply = SendOnce(daemon_.port(), {.method = "GET", .target = "/v1/describe"});
  ASSERT_EQ(reply.status, 200u);
  json described = json::parse(reply.body);
  EXPECT_EQ(described["grant_profiles"], json::array({"catalog", "inventory"}));
  EXPECT_EQ(described["capabilities"]["grants"], true);
  EXPECT_THAT(reply.body, Not(HasSubstr("billing")));
  EXPECT_THAT(reply.body, Not(HasSubstr(upstream_.origin().ToString())));
}

TEST_F(DaemonGrants, ARunWithoutAGrantHasNoPathToTheBroker) {
  HttpReply reply = Run(R"(
    try { host.get('/items/1'); console.log('reached'); } catch (e) { console.log(e.code); }
  )",
                        "");
  ASSERT_EQ(reply.status, 200u) << reply.body;
  json answer = json::parse(reply.body);
  EXPECT_EQ(answer["stdout"], "no_grant\n");
  EXPECT_FALSE(answer.contains("broker"));
  EXPECT_TRUE(upstream_.requests().empty());
}

TEST_F(DaemonGrants, MetricsAndTheAuditLineCountTheCalls) {
  ASSERT_EQ(
      Run("host.get('/items/1'); try { host.get('/admin') } catch (e) {}", "inventory").status,
      200u);
  HttpReply metrics = SendOnce(daemon_.metrics_port(), {.method = "GET", .target = "/metrics"});
  EXPECT_THAT(
      metrics.body,
      HasSubstr("plimsoll_broker_calls_total{profile=\"inventory\",outcome=\"allowed\"} 1"));
  EXPECT_THAT(metrics.body,
              HasSubstr("plimsoll_broker_calls_total{profile=\"inventory\",outcome=\"denied\"} 1"));
  std::string log = daemon_.log_text();
  EXPECT_THAT(log, HasSubstr("\"broker_calls\":2"));
  EXPECT_THAT(log, HasSubstr("\"broker_denied\":1"));
  EXPECT_THAT(log, Not(HasSubstr(kToken)));
}

// A session call (SPEC §9) may use only a profile whose allow_in_sessions
// is on; that one is served for the call, with the trace on its result.
TEST_F(DaemonGrants, ASessionCallUsesOnlyAProfileAllowedInSessions) {
  HttpReply opened = SendOnce(
      daemon_.port(), {.method = "POST", .target = "/v1/sessions", .body = R"({"protocol": 1})"});
  ASSERT_EQ(opened.status, 201u) << opened.body;
  std::string id = json::parse(opened.body)["session_id"];
  auto call = [&](const std::string& profile, const std::string& code) {
    json body = {{"protocol", 1}, {"cell", {{"language", "javascript"}, {"code", code}}}};
    if (!profile.empty()) body["grant_profile"] = profile;
    return SendOnce(daemon_.port(), {.method = "POST",
                                     .target = "/v1/sessions/" + id + "/runs",
                                     .body = body.dump()});
  };
  HttpReply refused = call("inventory", "host.get('/items/1')");
  EXPECT_EQ(refused.status, 403u) << refused.body;
  EXPECT_EQ(json::parse(refused.body)["error"]["not_dispatched"], "permission");
  EXPECT_THAT(refused.body, HasSubstr("allow_in_sessions"));
  EXPECT_TRUE(upstream_.requests().empty());

  HttpReply served = call("catalog", "var kept = host; kept.get('/items/4').status");
  ASSERT_EQ(served.status, 200u) << served.body;
  json answer = json::parse(served.body);
  EXPECT_EQ(answer["value"], "200") << answer.dump();
  EXPECT_EQ(answer["broker"]["profile"], "catalog");
  EXPECT_EQ(answer["broker"]["calls"], 1);
  EXPECT_THAT(served.body, Not(HasSubstr(kToken)));
  ASSERT_EQ(upstream_.requests().size(), 1u);
  EXPECT_EQ(upstream_.requests()[0].Header("Authorization"), std::string("Bearer ") + kToken);

  // The next call names no profile: the kept reference reaches nothing.
  HttpReply after = call("", "try { kept.get('/items/5'); 'reached' } catch (e) { e.code }");
  ASSERT_EQ(after.status, 200u) << after.body;
  EXPECT_EQ(json::parse(after.body)["value"], "'no_grant'") << after.body;
  EXPECT_EQ(upstream_.requests().size(), 1u);
  EXPECT_THAT(daemon_.log_text(), HasSubstr("\"broker_calls\":1"));
}

}  // namespace
}  // namespace plimsoll::daemon::testing
