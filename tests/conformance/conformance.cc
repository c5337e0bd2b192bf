#include "conformance/conformance.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "common/host_preconditions.h"
#include "common/providers_under_test.h"
#include "common/warm_sandbox.h"

namespace plimsoll::conformance {
namespace {

struct OpenedProvider {
  std::unique_ptr<Sandbox> sandbox;
  // Set when it could not be opened or confirmed: a skip only for a named
  // host precondition (tests/common/host_preconditions.h), else a failure.
  std::optional<testing::HostVerdict> unavailable;
};

OpenedProvider& Open(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, OpenedProvider> opened;
  std::lock_guard lock(mutex);
  auto it = opened.find(name);
  if (it != opened.end()) return it->second;
  OpenedProvider entry;
  auto sandbox = Sandbox::Open(name);
  if (!sandbox.ok()) {
    entry.unavailable = testing::JudgeUnavailable(name, sandbox.error().message());
  } else {
    entry.sandbox = std::make_unique<Sandbox>(std::move(*sandbox));
    auto evidence = entry.sandbox->CollectEvidence();
    if (!evidence.ok()) {
      entry.unavailable = testing::JudgeUnavailable(name, evidence.error().message());
    }
  }
  return opened.emplace(name, std::move(entry)).first->second;
}

}  // namespace

std::vector<std::string> ProvidersUnderTest() {
  return testing::ProvidersUnderTest({"PLIMSOLL_CONFORMANCE_PROVIDERS"});
}

void ConformanceTest::SetUp() {
  OpenedProvider& opened = Open(GetParam());
  if (opened.unavailable) {
    if (opened.unavailable->fail) GTEST_FAIL() << opened.unavailable->message;
    GTEST_SKIP() << opened.unavailable->message;
  }
  sandbox_ = opened.sandbox.get();
  description_ = sandbox_->Describe();
}

bool ConformanceTest::Accepts(PayloadKind kind) const {
  const auto& payloads = description_.capabilities.payloads;
  return std::find(payloads.begin(), payloads.end(), kind) != payloads.end();
}

void ConformanceTest::AwaitWarmSandbox() {
  std::string why = testing::AwaitWarmSandbox(sandbox());
  if (!why.empty()) ADD_FAILURE() << GetParam() << ": " << why;
}

Result ConformanceTest::RunChecked(const Request& request) {
  auto result = sandbox().Run(request);
  if (!result.ok()) {
    ADD_FAILURE() << "the run was refused or failed: " << result.error().ToString();
    return Result{};
  }
  EXPECT_TRUE(CheckExchange(request, *result).ok()) << "the record does not match the exchange";
  return *result;
}

Result ConformanceTest::RunJavascript(const std::string& code, int64_t timeout_ms) {
  Request request;
  request.timeout_ms = timeout_ms;
  request.javascript = JavascriptPayload{code};
  return RunChecked(request);
}

}  // namespace plimsoll::conformance
