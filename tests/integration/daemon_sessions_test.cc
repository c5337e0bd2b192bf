// The session routes of a real daemon (SPEC §9) on the embedded provider:
// kept interpreters across calls, chained records, the one-running-one-
// queued rule, not_found answers that say nothing about other callers' IDs,
// the owner cap, scopes and the audit line of every end.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "auth/caller_store.h"
#include "daemon_fixture.h"
#include "daemon_test_client.h"
#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string kOwner = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

class DaemonSessions : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "plimsoll-sessions-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
    auth::StoreOptions options;
    options.create_if_missing = true;
    auto store = auth::CallerStore::Open(directory_ / "callers.db", options);
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    for (auto& [name, scopes, token] :
         {std::tuple<std::string, std::vector<std::string>, std::string*>{
              "alice", {"runs", "sessions"}, &alice_},
          {"bob", {"sessions"}, &bob_},
          {"runner", {"runs"}, &runner_}}) {
      auto issued = (*store)->Create({.name = name, .scopes = scopes});
      ASSERT_TRUE(issued.ok()) << issued.error().ToString();
      *token = issued->token;
    }
    DaemonOptions daemon_options;
    daemon_options.dev = false;
    daemon_options.callers = (directory_ / "callers.db").string();
    // A queued session call waits on a worker: leave room for three.
    daemon_options.tune = [](Settings& settings) { settings.run_workers = 4; };
    daemon_.emplace(daemon_options);
  }
  void TearDown() override {
    daemon_.reset();
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }

  HttpReply Call(const std::string& token, HttpCall call) {
    call.headers.emplace_back("Authorization", "Bearer " + token);
    return SendOnce(daemon_->port(), call);
  }
  // Opens a session as `token`; returns the open answer.
  json Open(const std::string& token, const std::string& extra = "") {
    HttpReply reply = Call(token, {.method = "POST",
                                   .target = "/v1/sessions",
                                   .body = R"({"protocol": 1)" + extra + "}"});
    EXPECT_EQ(reply.status, 201u) << reply.body;
    return reply.status == 201u ? json::parse(reply.body) : json::object();
  }
  HttpReply Cell(const std::string& token, const std::string& id, const std::string& code) {
    Request request;
    request.cell = CellPayload{"javascript", code};
    return Call(token, {.method = "POST",
                        .target = "/v1/sessions/" + id + "/runs",
                        .body = RequestToJson(request)});
  }

  fs::path directory_;
  std::string alice_, bob_, runner_;
  std::optional<DaemonUnderTest> daemon_;
};

TEST_F(DaemonSessions, CellsKeepTheirStateAndTheRecordsChain) {
  json opened = Open(alice_);
  const std::string id = opened["session_id"];
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(opened["provider"], "embedded");
  EXPECT_EQ(opened["isolation"], "process");
  EXPECT_GT(opened["expires_unix_ms"].get<int64_t>(), opened["created_unix_ms"].get<int64_t>());
  EXPECT_EQ(opened["idle_timeout_ms"], kDefaultSessionIdleTimeoutMs);
  EXPECT_TRUE(opened["limits"].is_object());

  ChainState chain{SessionIdDigest(id), 0, ""};
  std::string last_record;
  const char* cells[] = {"let x = 41", "x + 1"};
  for (const char* code : cells) {
    Request sent;
    sent.cell = CellPayload{"javascript", code};
    HttpReply reply = Cell(alice_, id, code);
    ASSERT_EQ(reply.status, 200u) << reply.body;
    auto result = ParseResultJson(reply.body);
    ASSERT_TRUE(result.ok()) << result.error().ToString();
    // The client's check: digests recomputed, the chain continuous.
    Status checked = CheckExchange(sent, *result, &chain);
    EXPECT_TRUE(checked.ok()) << checked.error().ToString();
    last_record = result->record.record_sha256;
    if (std::string(code) == "x + 1") {
      ASSERT_TRUE(result->cell.has_value());
      EXPECT_EQ(result->cell->value, "42");
      EXPECT_FALSE(result->cell->interpreter_started);
      EXPECT_TRUE(result->cell->state_kept);
    }
  }
  HttpReply state = Call(alice_, {.method = "GET", .target = "/v1/sessions/" + id});
  ASSERT_EQ(state.status, 200u) << state.body;
  json info = json::parse(state.body);
  EXPECT_EQ(info["calls"], 2);
  EXPECT_EQ(info["interpreters"], json::array({"javascript"}));
  EXPECT_EQ(info["last_record_sha256"], last_record);

  HttpReply closed = Call(alice_, {.method = "DELETE", .target = "/v1/sessions/" + id});
  ASSERT_EQ(closed.status, 200u) << closed.body;
  json close = json::parse(closed.body);
  EXPECT_EQ(close["ended"], "closed");
  EXPECT_EQ(close["calls"], 2);
  EXPECT_EQ(close["last_record_sha256"], last_record);
  // The end is in the audit log, by the session's digest, never its ID.
  std::string log = daemon_->log_text();
  EXPECT_NE(log.find("\"session_ended\""), std::string::npos) << log;
  EXPECT_NE(log.find(SessionIdDigest(id)), std::string::npos);
  EXPECT_EQ(log.find(id), std::string::npos) << "the session ID itself is a secret";
}

TEST_F(DaemonSessions, UnknownClosedAndForeignSessionsGetTheSameNotFound) {
  const std::string alices = Open(alice_)["session_id"];
  const std::string closed = Open(bob_)["session_id"];
  ASSERT_EQ(Call(bob_, {.method = "DELETE", .target = "/v1/sessions/" + closed}).status, 200u);
  const std::string unknown(32, 'a');
  auto strip = [](const std::string& body) {
    json error = json::parse(body);
    error["error"].erase("request_id");
    return error.dump();
  };
  std::optional<std::string> first;
  for (const std::string& id : {alices, closed, unknown}) {
    for (const HttpReply& reply :
         {Cell(bob_, id, "1"), Call(bob_, {.method = "GET", .target = "/v1/sessions/" + id}),
          Call(bob_, {.method = "DELETE", .target = "/v1/sessions/" + id})}) {
      EXPECT_EQ(reply.status, 404u) << id << ": " << reply.body;
      EXPECT_EQ(reply.Header("plimsoll-not-dispatched"), "request");
      if (!first) first = strip(reply.body);
      EXPECT_EQ(strip(reply.body), *first) << "an answer that tells IDs apart";
    }
  }
  // Alice's session was not touched by Bob's attempts.
  HttpReply still = Cell(alice_, alices, "'still here'");
  ASSERT_EQ(still.status, 200u) << still.body;
  EXPECT_EQ(json::parse(still.body)["value"], "'still here'");
}

TEST_F(DaemonSessions, AThirdConcurrentCallIsRefusedCapacity) {
  const std::string id = Open(alice_)["session_id"];
  std::thread first([&] {
    EXPECT_EQ(Cell(alice_, id, "await new Promise(r => setTimeout(r, 1500)); 1").status, 200u);
  });
  std::this_thread::sleep_for(300ms);
  std::thread second([&] { EXPECT_EQ(Cell(alice_, id, "2").status, 200u); });
  // Wait until the session says a call is queued.
  bool queued = false;
  for (int i = 0; i < 100 && !queued; ++i) {
    HttpReply state = Call(alice_, {.method = "GET", .target = "/v1/sessions/" + id});
    queued = state.status == 200u && json::parse(state.body)["queued"] == true;
    if (!queued) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(queued);
  HttpReply third = Cell(alice_, id, "3");
  EXPECT_EQ(third.status, 429u) << third.body;
  EXPECT_EQ(third.Header("plimsoll-not-dispatched"), "capacity");
  first.join();
  second.join();
  HttpReply state = Call(alice_, {.method = "GET", .target = "/v1/sessions/" + id});
  EXPECT_EQ(json::parse(state.body)["calls"], 2);
}

TEST_F(DaemonSessions, AtTheOwnerCapTheLeastRecentlyUsedIdleSessionIsReplaced) {
  const std::string owner = R"(, "owner": ")" + kOwner + "\"";
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Open(alice_, owner)["session_id"]);
  // Use the first again, so the second is the least recently used.
  ASSERT_EQ(Cell(alice_, ids[0], "1").status, 200u);
  std::this_thread::sleep_for(5ms);
  const std::string fifth = Open(alice_, owner)["session_id"];
  EXPECT_EQ(Call(alice_, {.method = "GET", .target = "/v1/sessions/" + ids[1]}).status, 404u);
  for (const std::string& id : {ids[0], ids[2], ids[3], fifth}) {
    EXPECT_EQ(Call(alice_, {.method = "GET", .target = "/v1/sessions/" + id}).status, 200u) << id;
  }
  EXPECT_NE(daemon_->log_text().find("\"replaced\""), std::string::npos);
  // Another owner (or none) is not counted against this one.
  Open(alice_);
}

// The caps are the daemon's settings: per caller (refused `capacity`, 429)
// and per owner (replaced), as plimsolld's flags give them.
TEST_F(DaemonSessions, TheSessionCapsFollowTheDaemonsSettings) {
  daemon_.reset();
  DaemonOptions daemon_options;
  daemon_options.dev = false;
  daemon_options.callers = (directory_ / "callers.db").string();
  daemon_options.tune = [](Settings& settings) {
    settings.max_sessions_per_caller = 2;
    settings.max_sessions_per_owner = 1;
  };
  daemon_.emplace(daemon_options);
  const std::string owner = R"(, "owner": ")" + kOwner + "\"";
  const std::string first = Open(alice_, owner)["session_id"];
  const std::string second = Open(alice_, owner)["session_id"];  // replaces the first
  EXPECT_EQ(Call(alice_, {.method = "GET", .target = "/v1/sessions/" + first}).status, 404u);
  EXPECT_EQ(Call(alice_, {.method = "GET", .target = "/v1/sessions/" + second}).status, 200u);
  Open(alice_);  // no owner: the caller's second
  HttpReply refused =
      Call(alice_, {.method = "POST", .target = "/v1/sessions", .body = R"({"protocol": 1})"});
  EXPECT_EQ(refused.status, 429u) << refused.body;
  EXPECT_EQ(refused.Header("plimsoll-not-dispatched"), "capacity");
  // Another caller has caps of its own.
  Open(bob_);
}

TEST_F(DaemonSessions, TheSessionsScopeIsNeededAndBodiesAreChecked) {
  HttpReply no_scope =
      Call(runner_, {.method = "POST", .target = "/v1/sessions", .body = R"({"protocol": 1})"});
  EXPECT_EQ(no_scope.status, 403u);
  EXPECT_EQ(no_scope.Header("plimsoll-not-dispatched"), "permission");
  HttpReply protocol =
      Call(alice_, {.method = "POST", .target = "/v1/sessions", .body = R"({"protocol": 2})"});
  EXPECT_EQ(protocol.Header("plimsoll-not-dispatched"), "protocol");
  HttpReply raw_owner = Call(alice_, {.method = "POST",
                                      .target = "/v1/sessions",
                                      .body = R"({"protocol": 1, "owner": "alice@example.com"})"});
  EXPECT_EQ(raw_owner.status, 400u);
  HttpReply floor = Call(alice_, {.method = "POST",
                                  .target = "/v1/sessions",
                                  .body = R"({"protocol": 1, "minimum_isolation": "vm"})"});
  EXPECT_EQ(floor.status, 409u);
  EXPECT_EQ(floor.Header("plimsoll-not-dispatched"), "isolation");
  // A cell outside a session is refused on the run route.
  Request cell;
  cell.cell = CellPayload{"javascript", "1"};
  HttpReply outside =
      Call(alice_, {.method = "POST", .target = "/v1/runs", .body = RequestToJson(cell)});
  EXPECT_EQ(outside.status, 400u);
  EXPECT_EQ(outside.Header("plimsoll-not-dispatched"), "request");
}

}  // namespace
}  // namespace plimsoll::daemon::testing
