// plimsoll-broker-bench: the broker call round trip (SPEC §8) from inside a
// tier, against a direct loopback HTTP request from the host, both to the
// same upstream in this process (bench/scenarios.py, broker.*).
//
//   plimsoll-broker-bench --scenario NAME [--provider P] [--env K=V]...
//                         [--runs N] [--warmup N]
//
// Prints one sampler line (bench/README.md) for NAME:
//   broker.direct_loopback   CallUpstream (the broker's own HTTP client: a
//                            fresh connection, one GET, the answer read) from
//                            this process to the upstream, timed here.
//   any other name           host.get('/items/1') from guest JavaScript in
//                            one granted run on provider P (default
//                            embedded), each call timed by the script with
//                            performance.now(): the guest's way to the broker
//                            (embedded: the engine's host_call; OS-level
//                            tiers: qjs, the agent's relay socket and its
//                            channel), the broker's path, allow-list, budget
//                            and trace, the credential attached, the same
//                            upstream call, the answer back in the guest.
// --env K=V (repeatable) sets a variable before the provider is opened (its
// configuration, as plimsoll-latency does). The upstream is a loopback HTTP
// server on its own thread answering a small JSON body
// (broker/testing/fake_upstream.h). Runs/warm-ups from the flags, else
// $PLIMSOLL_BENCH_RUNS / $PLIMSOLL_BENCH_WARMUP, else 1000 / 20. Exit status
// 0; 1 when a call fails (an "error" line says why); 2 for usage.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "broker/broker.h"
#include "broker/grants.h"
#include "broker/testing/fake_upstream.h"
#include "broker/upstream.h"
#include "plimsoll/sandbox.h"
#include "tools/sampler_output.h"

namespace plimsoll::bench {
namespace {

using broker::testing::FakeUpstream;
using broker::testing::ReceivedRequest;
using broker::testing::UpstreamReply;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kDirect = "broker.direct_loopback";

int64_t CountFrom(const char* flag_value, const char* variable, int64_t fallback) {
  const char* text = flag_value != nullptr ? flag_value : std::getenv(variable);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 0) return -1;
  return value;
}

std::vector<double> DirectSamples(const FakeUpstream& upstream, int64_t runs, int64_t warmup,
                                  std::string& error) {
  std::vector<double> samples;
  for (int64_t i = 0; i < warmup + runs; ++i) {
    broker::UpstreamRequest request{.origin = upstream.origin(), .path = "/items/1"};
    Clock::time_point start = Clock::now();
    auto answer = broker::CallUpstream(request, start + std::chrono::seconds(10));
    double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!answer.ok() || answer->status != 200) {
      error = answer.ok() ? "status " + std::to_string(answer->status) : answer.error().message();
      return {};
    }
    if (i >= warmup) samples.push_back(elapsed);
  }
  return samples;
}

std::vector<double> GuestSamples(const FakeUpstream& upstream, const std::string& provider,
                                 int64_t runs, int64_t warmup, std::string& error,
                                 std::string& tier) {
  const std::string yaml =
      "version: 1\nprofiles:\n  bench:\n    base_url: " + upstream.origin().ToString() +
      "\n    allow: [\"GET /items/*\"]\n    allowed_callers: [bench]\n"
      "    token: {source: static, env: BENCH_TOKEN}\n    max_calls: " +
      std::to_string(broker::kMaxMaxCalls) + "\n";
  auto grants = broker::ParseGrants(yaml, "bench-grants.yaml");
  if (!grants.ok()) return error = grants.error().message(), std::vector<double>{};
  auto made = broker::Broker::Create(std::move(*grants), [](std::string_view) {
    return std::optional<std::string>("bench-token-not-a-secret");
  });
  if (!made.ok()) return error = made.error().message(), std::vector<double>{};
  auto sandbox = Sandbox::Open(provider);
  if (!sandbox.ok()) return error = sandbox.error().message(), std::vector<double>{};
  auto evidence = sandbox->CollectEvidence();
  if (!evidence.ok()) return error = evidence.error().message(), std::vector<double>{};
  tier = std::string(TierName(evidence->tier));

  const int64_t timeout_ms = 30'000;  // the providers' maximum for a snippet
  auto grant = made->Open("bench", "bench", std::chrono::milliseconds(timeout_ms), false);
  if (!grant.ok()) return error = grant.error().message(), std::vector<double>{};
  Request request;
  request.grant_profile = "bench";
  request.timeout_ms = timeout_ms;
  request.javascript = JavascriptPayload{
      "const samples = [];\n"
      "for (let i = 0; i < " +
      std::to_string(warmup + runs) +
      "; i++) {\n"
      "  const start = performance.now();\n"
      "  const answer = host.get('/items/1');\n"
      "  const elapsed = performance.now() - start;\n"
      "  if (answer.status !== 200) throw new Error('status ' + answer.status);\n"
      "  if (i >= " +
      std::to_string(warmup) +
      ") samples.push(elapsed);\n"
      "}\n"
      "console.log(JSON.stringify(samples));\n"};
  auto result = sandbox->Run(request, grant->get());
  if (!result.ok()) return error = result.error().message(), std::vector<double>{};
  if (result->exit_code != 0) {
    error = "the script exited " + std::to_string(result->exit_code) + ": " + result->stderr_bytes;
    return {};
  }
  auto parsed = nlohmann::json::parse(result->stdout_bytes, nullptr, false);
  if (!parsed.is_array() || parsed.size() != static_cast<size_t>(runs)) {
    error = "the script printed no samples (stdout truncated?)";
    return {};
  }
  return parsed.get<std::vector<double>>();
}

int Main(int argc, char** argv) {
  const char* runs_flag = nullptr;
  const char* warmup_flag = nullptr;
  std::string scenario, provider = "embedded";
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    bool has_value = i + 1 < argc;
    if (arg == "--runs" && has_value) {
      runs_flag = argv[++i];
    } else if (arg == "--warmup" && has_value) {
      warmup_flag = argv[++i];
    } else if (arg == "--scenario" && has_value) {
      scenario = argv[++i];
    } else if (arg == "--provider" && has_value) {
      provider = argv[++i];
    } else if (arg == "--env" && has_value && std::string_view(argv[i + 1]).find('=') != 0 &&
               std::string_view(argv[i + 1]).find('=') != std::string_view::npos) {
      std::string setting = argv[++i];
      size_t equals = setting.find('=');
      setenv(setting.substr(0, equals).c_str(), setting.substr(equals + 1).c_str(), 1);
    } else {
      std::fprintf(stderr,
                   "usage: plimsoll-broker-bench --scenario NAME [--provider P] [--env K=V]... "
                   "[--runs N] [--warmup N]\n");
      return 2;
    }
  }
  const int64_t runs = CountFrom(runs_flag, "PLIMSOLL_BENCH_RUNS", 1000);
  const int64_t warmup = CountFrom(warmup_flag, "PLIMSOLL_BENCH_WARMUP", 20);
  // The script prints its samples as one JSON line; keep it within the
  // output cap (64 KiB: ~7000 samples).
  if (scenario.empty() || runs < 1 || warmup < 0 || runs > 5000 || warmup > 1000) {
    std::fprintf(stderr,
                 "plimsoll-broker-bench: --scenario NAME, --runs 1..5000, --warmup 0..1000\n");
    return 2;
  }
  FakeUpstream upstream([](const ReceivedRequest&) {
    return UpstreamReply{.status = 200,
                         .headers = {{"Content-Type", "application/json"}},
                         .body = R"({"id":"1","name":"bolt","stock":12})"};
  });
  std::string error, tier;
  std::vector<double> samples = scenario == kDirect
                                    ? DirectSamples(upstream, runs, warmup, error)
                                    : GuestSamples(upstream, provider, runs, warmup, error, tier);
  if (samples.empty()) {
    PrintError(scenario, error);
    return 1;
  }
  if (tier.empty()) {
    PrintSamples(scenario, "ms", samples);
  } else {
    PrintSamples(scenario, "ms", samples, {{"provider", provider}, {"tier", tier}});
  }
  return 0;
}

}  // namespace
}  // namespace plimsoll::bench

int main(int argc, char** argv) {
  return plimsoll::bench::Main(argc, argv);
}
