// Tier honesty, evidence, refusals and the absence of host access
// (SPEC §1, §2, §3, §6).
#include <atomic>
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
    const names = ['require', 'process', 'std', 'os', 'XMLHttpRequest', 'WebSocket',
                   'Deno', 'Bun', 'scriptArgs', 'print'];
    console.log(names.filter(n => typeof globalThis[n] !== 'undefined').join(',') || 'none');
    // fetch exists, as on the hosts snippets are written for, and rejects: no network.
    fetch('http://127.0.0.1/').then(() => console.log('fetch imported a response'),
                                    e => console.log('no network:', e.name, e.code));
    import('std').then(() => console.log('std imported'), e => console.log('no std:', e.name));
    import('os').then(() => console.log('os imported'), e => console.log('no os:', e.name));
  )js");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes.substr(0, result.stdout_bytes.find('\n')), "none");
  EXPECT_EQ(result.stdout_bytes.find("imported"), std::string::npos) << result.stdout_bytes;
  EXPECT_NE(result.stdout_bytes.find("no network: TypeError ERR_NO_NETWORK\n"), std::string::npos)
      << result.stdout_bytes;
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

TEST_P(ConformanceTest, ConcurrentCallersGetTheirOwnOutputs) {
  if (!Accepts(PayloadKind::kJavascript)) GTEST_SKIP() << "skipped: no javascript payloads";
  // Expected difference: runs behind an OS-level wall cost a sandbox each
  // (~150 ms under runc, ~1.2 s under runsc) and under microvm a VM boot
  // (~2.5 s of a core under TCG), so 800 runs would take minutes there. The
  // concurrent callers are what the test is about: eight, with 12 runs each
  // behind an OS wall (96 sandboxes whose channels, reports and keys must
  // not mix) and 100 each in the embedded engine. Under TCG, eight cold
  // boots at once on two emulated cores miss the setup budget (24 of 32 runs
  // refused `capacity` in one make test): there four callers boot 2 VMs
  // each (8 VMs, 22 s of the suite's 420 s), more at once than the warm pool
  // holds, so every caller but the first waits on a boot of its own.
  const int callers = UnderSoftwareEmulation() ? 4 : 8;
  const int runs_per_thread = EachRunBootsAVm()                      ? 2
                              : description().tier == Tier::kProcess ? 100
                                                                     : 12;
  std::vector<std::vector<std::string>> mismatches(callers);
  // Under TCG, VMs booting at once on a busy 2-core host can miss the
  // setup budget: each such run is refused `capacity` with nothing run (seen
  // in CI), which mixes nothing up. Those are counted, not failed, but most
  // runs must have run. Guests sharing two emulated cores (and the
  // pool booting more beside them) also run slowly: there a run gets the
  // longest snippet timeout, so a timeout stays a failure worth reading (one
  // run of the 5 s default, seen in CI, ended with no output).
  std::atomic<int> refused_nothing_ran{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < runs_per_thread; ++i) {
        std::string id = std::to_string(t) + "-" + std::to_string(i);
        Request request;
        if (EachRunBootsAVm()) request.timeout_ms = description().limits.snippet_timeout_max_ms;
        request.javascript =
            JavascriptPayload{"let s = 0; for (let k = 0; k < 2000; k++) s += k; console.log('" +
                              id + "', s); console.error('" + id + "')"};
        auto result = sandbox().Run(request);
        if (EachRunBootsAVm() && !result.ok() &&
            NotDispatchedReason(result.error()) == NotDispatched::kCapacity) {
          ++refused_nothing_ran;
          continue;
        }
        std::string want_out = id + " 1999000\n";
        if (!result.ok() || result->stdout_bytes != want_out || result->stderr_bytes != id + "\n" ||
            result->exit_code != 0) {
          mismatches[t].push_back(id + ": " +
                                  (result.ok() ? "exit " + std::to_string(result->exit_code) +
                                                     (result->timed_out ? " (timed out)" : "") +
                                                     ", stdout \"" + result->stdout_bytes +
                                                     "\", stderr \"" + result->stderr_bytes + "\""
                                               : result.error().ToString()));
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(refused_nothing_ran * 2, callers * runs_per_thread)
      << refused_nothing_ran << " runs refused: the test proved too little";
  for (int t = 0; t < callers; ++t) {
    EXPECT_TRUE(mismatches[t].empty())
        << mismatches[t].size() << " mixed or failed runs, first: " << mismatches[t].front();
  }
}

INSTANTIATE_TEST_SUITE_P(Providers, ConformanceTest, ::testing::ValuesIn(ProvidersUnderTest()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConformanceTest);

}  // namespace
}  // namespace plimsoll::conformance
