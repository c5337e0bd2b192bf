// The adversarial proxy suite (tests/clients/README.md) for the C++ client:
// every scenario of testdata/clients/scenarios.json aimed at the proxy in
// front of a linux daemon (target `adversary_linux:MODE`: the tier lowered
// with every digest recomputed, on a run and on each call of a session) runs
// here with plimsoll::Client, against the real plimsolld binary on the linux
// provider and tests/clients/adversary.py. The Python, TypeScript and Go
// clients run the same scenarios through harness.py; the C++ client's other
// attacks (echo, swap, caps) are in src/client/client_test.cc against a
// scripted fake daemon.
//
// Needs root and the guest image (PLIMSOLL_IMAGE, set by CTest): skipped
// without them, and failed instead when PLIMSOLL_REQUIRE_PROVIDERS lists
// linux (tests/common/host_preconditions.h).
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/host_preconditions.h"
#include "linux_behind_adversary.h"
#include "plimsoll/client.h"
#include "plimsoll/error.h"
#include "plimsoll/record.h"
#include "plimsoll/tier.h"

namespace plimsoll::daemon::testing {
namespace {

using nlohmann::json;

constexpr std::string_view kTargetPrefix = "adversary_linux:";

json LoadScenarios() {
  std::ifstream in(std::string(PLIMSOLL_SOURCE_DIR) + "/testdata/clients/scenarios.json");
  return json::parse(in);
}

// The keys of `object` outside `known`, for a runner that must not skip
// what it does not understand.
std::vector<std::string> UnknownKeys(const json& object, const std::set<std::string>& known) {
  std::vector<std::string> unknown;
  for (const auto& [key, value] : object.items()) {
    if (!known.contains(key)) unknown.push_back(key);
  }
  return unknown;
}

std::string Str(const json& args, const char* key) {
  return args.contains(key) ? args.at(key).get<std::string>() : std::string();
}

int64_t Int(const json& args, const char* key) {
  return args.contains(key) ? args.at(key).get<int64_t>() : 0;
}

// The op of `scenario` that the C++ client has no call for (so it cannot
// run it at all), or nullopt. Only these are left out; any other op this
// runner does not know fails the test.
std::optional<std::string> LackingCall(const json& scenario) {
  static const std::set<std::string> kNoCall = {"session_info"};  // GET /v1/sessions/{id}
  for (const json& step : scenario.at("steps")) {
    std::string op = step.at("op").get<std::string>();
    if (kNoCall.contains(op)) return op;
  }
  return std::nullopt;
}

// What one step produced: a result, an opened session, a close, or an error.
struct Outcome {
  std::optional<Result> result;
  std::optional<SessionInfo> session;
  std::optional<SessionClose> closed;
  std::optional<Error> error;
};

// One scenario's client and session, driven step by step.
class Driver {
 public:
  explicit Driver(std::string url) : url_(std::move(url)) {}

  ~Driver() {
    if (client_ && !session_id_.empty()) (void)client_->CloseSession(session_id_, chain_);
  }

  // Runs one step; "" or why the step itself is malformed.
  std::string Call(const std::string& op, const json& args, Outcome& out) {
    static const std::map<std::string, std::set<std::string>> kArgs = {
        {"run_javascript", {"code", "minimum_isolation", "timeout_ms"}},
        {"run_python", {"code", "minimum_isolation", "timeout_ms"}},
        {"open_session", {"minimum_isolation", "lifetime_ms", "idle_timeout_ms"}},
        {"run_cell", {"language", "code", "timeout_ms"}},
        {"session_run_javascript", {"code", "timeout_ms"}},
        {"session_upload", {"files"}},
        {"close_session", {}},
    };
    auto known = kArgs.find(op);
    if (known == kArgs.end()) return "op " + op + " is not one this runner knows";
    if (auto unknown = UnknownKeys(args, known->second); !unknown.empty()) {
      return "op " + op + ": unknown arg " + unknown.front();
    }
    if (!client_) {
      auto opened = Client::Open(url_);
      if (!opened.ok()) {
        out.error = opened.error();
        return "";
      }
      client_.emplace(std::move(*opened));
    }
    Request request;
    request.minimum_isolation = Str(args, "minimum_isolation");
    request.timeout_ms = Int(args, "timeout_ms");
    if (op == "open_session") {
      SessionOpenRequest open;
      open.options.minimum_isolation = Str(args, "minimum_isolation");
      open.options.lifetime_ms = Int(args, "lifetime_ms");
      open.options.idle_timeout_ms = Int(args, "idle_timeout_ms");
      auto info = client_->OpenSession(open);
      if (!info.ok()) {
        out.error = info.error();
        return "";
      }
      session_id_ = info->id;
      chain_ = ChainState{SessionIdDigest(session_id_), 0, ""};
      out.session = *info;
      return "";
    }
    if (op == "run_javascript" || op == "run_python") {
      if (op == "run_javascript") request.javascript = JavascriptPayload{Str(args, "code")};
      if (op == "run_python") request.python = PythonPayload{Str(args, "code")};
      Take(client_->Run(request), out);
      return "";
    }
    if (session_id_.empty()) return "op " + op + " needs an open_session step first";
    if (op == "close_session") {
      auto closed = client_->CloseSession(session_id_, chain_);
      session_id_.clear();
      if (closed.ok()) {
        out.closed = *closed;
      } else {
        out.error = closed.error();
      }
      return "";
    }
    if (op == "run_cell") request.cell = CellPayload{Str(args, "language"), Str(args, "code")};
    if (op == "session_run_javascript") request.javascript = JavascriptPayload{Str(args, "code")};
    if (op == "session_upload") {
      ProjectPayload project;
      for (const json& file : args.at("files")) {
        project.files.push_back(
            {file.at("path").get<std::string>(), file.at("content").get<std::string>()});
      }
      project.steps = {{"true"}};
      request.project = std::move(project);
    }
    Take(client_->RunInSession(session_id_, request, chain_), out);
    return "";
  }

 private:
  static void Take(Expected<Result> result, Outcome& out) {
    if (result.ok()) {
      out.result = std::move(*result);
    } else {
      out.error = result.error();
    }
  }

  std::string url_;
  std::optional<Client> client_;
  std::string session_id_;
  ChainState chain_;
};

// The problems of `outcome` against the step's `expect`, one line each.
std::vector<std::string> Check(const json& expect, const Outcome& outcome) {
  std::vector<std::string> problems;
  if (expect.size() != 1) return {"an expect holds exactly one key: " + expect.dump()};
  const std::string kind = expect.begin().key();
  const json& want = expect.begin().value();
  auto compare = [&](const std::string& field, const json& got) {
    if (want.contains(field) && want.at(field) != got) {
      problems.push_back(kind + "." + field + ": got " + got.dump() + ", want " +
                         want.at(field).dump());
    }
  };
  if (kind == "error") {
    for (const auto& key :
         UnknownKeys(want, {"class", "code", "not_dispatched", "retryable", "ran"})) {
      problems.push_back("unknown error field " + key);
    }
    if (!outcome.error) return {"expected an error " + want.dump() + ", got a success"};
    const Error& error = *outcome.error;
    std::optional<NotDispatched> mark = NotDispatchedReason(error);
    std::string klass =
        mark ? "refused" : (error.code() == ErrorCode::kDataLoss ? "data_loss" : "error");
    compare("class", klass);
    compare("code", std::string(ErrorCodeName(error.code())));
    compare("not_dispatched", mark ? json(std::string(NotDispatchedName(*mark))) : json(nullptr));
    compare("retryable", mark.has_value() && IsRetryableElsewhere(*mark));
    compare("ran", mark ? json(false) : json("unknown"));
    if (!problems.empty()) problems.push_back("  the error: " + error.ToString());
    return problems;
  }
  if (outcome.error) {
    return {"expected " + kind + " " + want.dump() +
            ", got an error: " + outcome.error->ToString()};
  }
  if (kind == "result" && outcome.result) {
    for (const auto& key : UnknownKeys(want, {"exit_code", "isolation", "provider", "stdout"})) {
      problems.push_back("unknown result field " + key);
    }
    compare("exit_code", outcome.result->exit_code);
    compare("isolation", std::string(TierName(outcome.result->isolation)));
    compare("provider", outcome.result->provider);
    compare("stdout", outcome.result->stdout_bytes);
    return problems;
  }
  if (kind == "session" && outcome.session) {
    for (const auto& key : UnknownKeys(want, {"isolation", "provider"})) {
      problems.push_back("unknown session field " + key);
    }
    compare("isolation", std::string(TierName(outcome.session->isolation)));
    compare("provider", outcome.session->provider);
    return problems;
  }
  if (kind == "closed" && outcome.closed) {
    compare("ended", std::string(SessionEndReasonName(outcome.closed->ended)));
    compare("calls", outcome.closed->calls);
    return problems;
  }
  return {"expected " + kind + " " + want.dump() + ", which this step cannot give"};
}

TEST(ClientsCppAdversaryTest, EveryLinuxProxyScenarioEndsAsTheScenarioFileSays) {
  PLIMSOLL_REQUIRE_HOST("linux");
  LinuxDaemonBehindAdversary served;
  ASSERT_TRUE(served.problem().empty()) << served.problem();
  const std::string& base = served.proxy_url();

  int ran = 0;
  const json scenarios = LoadScenarios();
  for (const json& scenario : scenarios.at("scenarios")) {
    const std::string target = scenario.at("target").get<std::string>();
    if (target.rfind(kTargetPrefix, 0) != 0) continue;
    const std::string name = scenario.at("name").get<std::string>();
    if (auto lacking = LackingCall(scenario)) {
      std::cout << "not run: " << name << ": the C++ client has no " << *lacking
                << " call (include/plimsoll/client.h)\n";
      continue;
    }
    SCOPED_TRACE("scenario " + name);
    ++ran;
    // The proxy keeps state per mode and key: the scenario's name is the key.
    Driver driver(base + "/" + target.substr(kTargetPrefix.size()) + "/" + name + "-cpp");
    int index = 0;
    for (const json& step : scenario.at("steps")) {
      const std::string op = step.at("op").get<std::string>();
      Outcome outcome;
      std::string malformed = driver.Call(op, step.value("args", json::object()), outcome);
      ASSERT_EQ(malformed, "") << "step " << index;
      for (const std::string& problem : Check(step.at("expect"), outcome)) {
        ADD_FAILURE() << "step " << index << " (" << op << "): " << problem;
      }
      ++index;
    }
  }
  EXPECT_GE(ran, 5) << "the scenario file names fewer adversary_linux scenarios than it did";
}

}  // namespace
}  // namespace plimsoll::daemon::testing
