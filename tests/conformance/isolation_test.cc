// Tier honesty, evidence, refusals and the absence of host access
// (SPEC §1, §2, §3, §6).
#include <set>
#include <thread>

#include "common/providers_under_test.h"
#include "conformance/conformance.h"

namespace plimsoll::conformance {
namespace {

TEST_P(ConformanceTest, TheResultCarriesTheTierTheEvidenceProved) {
  std::optional<Evidence> evidence = sandbox().evidence();
  ASSERT_TRUE(evidence.has_value());
  EXPECT_TRUE(IsRunnableTier(evidence->tier));
  EXPECT_LE(CompareTiers(evidence->tier, description().tier), 0);
  EXPECT_FALSE(evidence->facts.empty()) << "evidence names no backend facts";
  EXPECT_FALSE(evidence->checks.empty()) << "evidence has no checks made from inside";
  if (!Accepts(PayloadKind::kJavascript)) GTEST_SKIP() << "skipped: no javascript payloads";
  Result result = RunJavascript("console.log(1)");
  EXPECT_EQ(result.isolation, evidence->tier);
  EXPECT_EQ(result.record.isolation, evidence->tier);
  EXPECT_EQ(result.provider, testing::ProviderNameOf(GetParam()));
  EXPECT_FALSE(result.environment.empty());
}

TEST_P(ConformanceTest, AFloorAboveTheTierRefusesWithIsolationAndRunsNothing) {
  Tier tier = sandbox().evidence()->tier;
  for (Tier floor : {Tier::kProcess, Tier::kContainer, Tier::kKernel, Tier::kVm}) {
    Request request;
    request.minimum_isolation = std::string(TierName(floor));
    request.javascript = JavascriptPayload{"console.log('ran')"};
    auto result = sandbox().Run(request);
    if (MeetsFloor(tier, floor)) {
      if (Accepts(PayloadKind::kJavascript)) {
        ASSERT_TRUE(result.ok()) << result.error().ToString();
        EXPECT_EQ(result->stdout_bytes, "ran\n");
      }
    } else {
      ASSERT_FALSE(result.ok()) << "floor " << TierName(floor) << " on tier " << TierName(tier);
      EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kIsolation);
    }
  }
}

TEST_P(ConformanceTest, PayloadsTheProviderLacksAreRefusedUnsupported) {
  Request python;
  python.python = PythonPayload{"print(6*7)"};
  Request project;
  project.project = ProjectPayload{{{"main.py", "print(6*7)"}}, {{"python3", "main.py"}}, {}};
  for (const Request& request : {python, project}) {
    PayloadKind kind = *request.kind();
    auto result = sandbox().Run(request);
    if (Accepts(kind)) {
      ASSERT_TRUE(result.ok()) << result.error().ToString();
      EXPECT_EQ(result->stdout_bytes, "42\n");
    } else {
      ASSERT_FALSE(result.ok()) << PayloadKindName(kind) << " ran on a provider that lacks it";
      EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kUnsupported)
          << result.error().ToString();
    }
  }
}

TEST_P(ConformanceTest, SnippetsHaveNoHostAccess) {
  if (!Accepts(PayloadKind::kJavascript)) GTEST_SKIP() << "skipped: no javascript payloads";
  Result result = RunJavascript(R"js(
    const names = ['require', 'process', 'std', 'os', 'fetch', 'XMLHttpRequest', 'WebSocket',
                   'Deno', 'Bun', 'scriptArgs', 'print'];
    console.log(names.filter(n => typeof globalThis[n] !== 'undefined').join(',') || 'none');
    import('std').then(() => console.log('std imported'), e => console.log('no std:', e.name));
    import('os').then(() => console.log('os imported'), e => console.log('no os:', e.name));
  )js");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes.substr(0, result.stdout_bytes.find('\n')), "none");
  EXPECT_EQ(result.stdout_bytes.find("imported"), std::string::npos) << result.stdout_bytes;
}

TEST_P(ConformanceTest, TheBrokerIsRefusedInsideTheGuestWithoutAGrant) {
  if (!Accepts(PayloadKind::kJavascript)) GTEST_SKIP() << "skipped: no javascript payloads";
  Result result = RunJavascript(R"js(
    try { host.get('/v1/items'); console.log('reached the broker'); }
    catch (e) { console.log('refused:', e.message); }
  )js");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes.rfind("refused:", 0), 0u) << result.stdout_bytes;
  EXPECT_NE(result.stdout_bytes.find("grant"), std::string::npos) << result.stdout_bytes;
}

TEST_P(ConformanceTest, EightThreadsOfAHundredRunsGetTheirOwnOutputs) {
  if (!Accepts(PayloadKind::kJavascript)) GTEST_SKIP() << "skipped: no javascript payloads";
  constexpr int kThreads = 8;
  // Expected difference: under microvm every run boots a VM of its own
  // (~2.5 s of a core each under TCG), so 800 runs would take ~15 min on
  // our 2 cores. Four runs per thread keep the eight concurrent callers and
  // still give 32 VMs whose channels, reports and keys must not mix.
  const int runs_per_thread = EachRunBootsAVm() ? 4 : 100;
  std::vector<std::vector<std::string>> mismatches(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < runs_per_thread; ++i) {
        std::string id = std::to_string(t) + "-" + std::to_string(i);
        Request request;
        request.javascript =
            JavascriptPayload{"let s = 0; for (let k = 0; k < 2000; k++) s += k; console.log('" +
                              id + "', s); console.error('" + id + "')"};
        auto result = sandbox().Run(request);
        std::string want_out = id + " 1999000\n";
        if (!result.ok() || result->stdout_bytes != want_out || result->stderr_bytes != id + "\n" ||
            result->exit_code != 0) {
          mismatches[t].push_back(id + ": " +
                                  (result.ok() ? result->stdout_bytes : result.error().ToString()));
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(mismatches[t].empty())
        << mismatches[t].size() << " mixed or failed runs, first: " << mismatches[t].front();
  }
}

INSTANTIATE_TEST_SUITE_P(Providers, ConformanceTest, ::testing::ValuesIn(ProvidersUnderTest()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConformanceTest);

}  // namespace
}  // namespace plimsoll::conformance
