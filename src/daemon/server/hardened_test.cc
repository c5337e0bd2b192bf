#include "daemon/server/hardened.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace plimsoll::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// Settings that meet every rule: each test breaks one thing.
Settings Compliant() {
  Settings settings;
  settings.provider = "oci";
  settings.hardened = true;
  settings.listen = "127.0.0.1:8470";
  settings.metrics_listen = "127.0.0.1:8471";
  settings.pinned_environment = "sha256:" + std::string(64, 'a');
  settings.max_concurrent_runs = 8;
  settings.run_limits = {.memory_mb = 256,
                         .cpus_millis = 1000,
                         .pids = 256,
                         .tmp_mb = 16,
                         .work_mb = 128,
                         .output_cap_kb = 64,
                         .max_snippet_timeout_ms = 30'000,
                         .max_project_timeout_ms = 120'000};
  return settings;
}

auth::Caller LimitedCaller(std::string name, int64_t concurrent = 2, int64_t rate = 60) {
  return {.name = std::move(name),
          .scopes = {"runs"},
          .max_concurrent = concurrent,
          .rate_per_min = rate};
}

HardenedFacts CompliantFacts() {
  return {.tier = Tier::kKernel,
          .tier_proven = true,
          .caller_store = true,
          .active_callers = {LimitedCaller("ci")}};
}

TEST(Hardened, EverySafeguardInPlaceStarts) {
  EXPECT_THAT(HardenedViolations(Compliant(), CompliantFacts()), IsEmpty());
  HardenedFacts vm = CompliantFacts();
  vm.tier = Tier::kVm;
  EXPECT_THAT(HardenedViolations(Compliant(), vm), IsEmpty());
  HardenedFacts claimed = CompliantFacts();
  claimed.tier_proven = false;  // before the evidence: a kernel claim is not refused yet
  EXPECT_THAT(HardenedViolations(Compliant(), claimed), IsEmpty());
}

TEST(Hardened, ATierBelowKernelIsRefusedBeforeAndAfterTheEvidence) {
  Settings settings = Compliant();
  settings.provider = "embedded";
  HardenedFacts claim = CompliantFacts();
  claim.tier = Tier::kProcess;
  claim.tier_proven = false;
  auto before = HardenedViolations(settings, claim);
  ASSERT_THAT(before, SizeIs(1));
  EXPECT_THAT(before[0], HasSubstr("The embedded provider can prove at most tier process"));
  EXPECT_THAT(before[0], HasSubstr("--provider / SANDBOX_PROVIDER"));

  settings.provider = "oci";
  HardenedFacts proven = CompliantFacts();
  proven.tier = Tier::kContainer;  // claimed kernel, proved less
  auto after = HardenedViolations(settings, proven);
  ASSERT_THAT(after, SizeIs(1));
  EXPECT_THAT(after[0], HasSubstr("startup evidence of the oci provider proved tier container"));

  for (Tier low : {Tier::kNone, Tier::kUnknown}) {
    HardenedFacts facts = CompliantFacts();
    facts.tier = low;
    EXPECT_THAT(HardenedViolations(settings, facts), SizeIs(1)) << TierName(low);
  }
}

TEST(Hardened, DevModeIsRefused) {
  Settings settings = Compliant();
  settings.dev = true;
  auto violations = HardenedViolations(settings, CompliantFacts());
  ASSERT_THAT(violations, SizeIs(1));
  EXPECT_THAT(violations[0], HasSubstr("--dev (PLIMSOLL_DEV) turns authentication off"));
}

TEST(Hardened, AuthenticationMustBeTheCallerStore) {
  HardenedFacts facts = CompliantFacts();
  facts.caller_store = false;
  facts.active_callers.clear();
  auto violations = HardenedViolations(Compliant(), facts);
  ASSERT_THAT(violations, SizeIs(1));
  EXPECT_THAT(violations[0], HasSubstr("No caller store with an active caller"));
  EXPECT_THAT(violations[0], HasSubstr("--callers / PLIMSOLL_CALLERS"));
}

TEST(Hardened, ANonLoopbackApiListenerNeedsTls) {
  Settings settings = Compliant();
  settings.listen = "0.0.0.0:8470";
  auto violations = HardenedViolations(settings, CompliantFacts());
  ASSERT_THAT(violations, SizeIs(1));
  EXPECT_THAT(violations[0], HasSubstr("--listen 0.0.0.0:8470 is not a loopback address"));
  EXPECT_THAT(violations[0], HasSubstr("--tls-cert and --tls-key"));
  settings.tls_cert = "/etc/plimsoll/tls.crt";
  settings.tls_key = "/etc/plimsoll/tls.key";
  EXPECT_THAT(HardenedViolations(settings, CompliantFacts()), IsEmpty());
}

TEST(Hardened, ANonLoopbackMetricsListenerNeedsTlsToo) {
  Settings settings = Compliant();
  settings.metrics_listen = "[::]:9100";
  auto violations = HardenedViolations(settings, CompliantFacts());
  ASSERT_THAT(violations, SizeIs(1));
  EXPECT_THAT(violations[0], HasSubstr("--metrics-listen [::]:9100"));
  settings.metrics_listen = "off";
  EXPECT_THAT(HardenedViolations(settings, CompliantFacts()), IsEmpty());
  settings.metrics_listen = "[::1]:9100";
  EXPECT_THAT(HardenedViolations(settings, CompliantFacts()), IsEmpty());
}

TEST(Hardened, TheUnixSocketIsLocalAndNeedsNoTls) {
  Settings settings = Compliant();
  settings.unix_socket = "/run/plimsoll/api.sock";
  EXPECT_THAT(HardenedViolations(settings, CompliantFacts()), IsEmpty());
}

TEST(Hardened, TheEnvironmentMustBePinned) {
  Settings settings = Compliant();
  settings.pinned_environment.clear();
  auto violations = HardenedViolations(settings, CompliantFacts());
  ASSERT_THAT(violations, SizeIs(1));
  EXPECT_THAT(violations[0], HasSubstr("--pin-environment / PLIMSOLL_PIN_ENVIRONMENT"));
}

TEST(Hardened, ResourceLimitsMustBeExplicit) {
  Settings settings = Compliant();
  settings.run_limits.pids.reset();
  settings.run_limits.max_project_timeout_ms.reset();
  auto violations = HardenedViolations(settings, CompliantFacts());
  ASSERT_THAT(violations, SizeIs(1));
  EXPECT_THAT(violations[0], HasSubstr("set --pids and --max-project-timeout-ms."));
  settings.run_limits = {};
  auto none = HardenedViolations(settings, CompliantFacts());
  ASSERT_THAT(none, SizeIs(1));
  EXPECT_THAT(none[0], HasSubstr("--memory-mb, --cpus-millis, --pids, --tmp-mb, --work-mb, "
                                 "--output-cap-kb, --max-snippet-timeout-ms and "
                                 "--max-project-timeout-ms"));
}

TEST(Hardened, EveryCallerNeedsBothLimits) {
  HardenedFacts facts = CompliantFacts();
  facts.active_callers.push_back({.name = "no-rate", .max_concurrent = 1});
  facts.active_callers.push_back({.name = "no-concurrency", .rate_per_min = 10});
  facts.active_callers.push_back({.name = "neither"});
  auto violations = HardenedViolations(Compliant(), facts);
  ASSERT_THAT(violations, SizeIs(3));
  EXPECT_THAT(violations[0], HasSubstr("\"no-rate\" has no rate limit"));
  EXPECT_THAT(violations[0], HasSubstr("again with --rate-per-min (plimsoll callers)"));
  EXPECT_THAT(violations[1], HasSubstr("\"no-concurrency\" has no concurrency limit"));
  EXPECT_THAT(violations[1], HasSubstr("again with --max-concurrent (plimsoll callers)"));
  EXPECT_THAT(violations[2], HasSubstr("\"neither\" has no concurrency or rate limit"));
  EXPECT_THAT(violations[2], HasSubstr("--max-concurrent and --rate-per-min"));
}

TEST(Hardened, ACallersConcurrencyMayNotExceedTheGlobalOne) {
  Settings settings = Compliant();
  settings.max_concurrent_runs = 4;
  HardenedFacts facts = CompliantFacts();
  facts.active_callers = {LimitedCaller("equal", 4), LimitedCaller("greedy", 5)};
  auto violations = HardenedViolations(settings, facts);
  ASSERT_THAT(violations, SizeIs(1));
  EXPECT_THAT(violations[0], HasSubstr("\"greedy\" may run 5 at once, more than the global "
                                       "--max-concurrent-runs (4)"));
  // Without --max-concurrent-runs the global limit is the worker count.
  settings.max_concurrent_runs = 0;
  settings.run_workers = 6;
  EXPECT_THAT(HardenedViolations(settings, facts), IsEmpty());
}

TEST(Hardened, SessionsNeedTheirCaps) {
  HardenedFacts facts = CompliantFacts();
  EXPECT_FALSE(facts.sessions_enabled);
  EXPECT_THAT(HardenedViolations(Compliant(), facts), IsEmpty());
  facts.sessions_enabled = true;  // a provider that keeps sessions, caps not set
  auto violations = HardenedViolations(Compliant(), facts);
  ASSERT_THAT(violations, SizeIs(1));
  EXPECT_THAT(violations[0], HasSubstr("Sessions are on without caps"));
  facts.session_caps_set = true;
  EXPECT_THAT(HardenedViolations(Compliant(), facts), IsEmpty());
}

TEST(Hardened, EveryViolationIsListedAtOnceInRuleOrder) {
  Settings settings;  // defaults: nothing pinned, no limits, no TLS
  settings.provider = "linux";
  settings.hardened = true;
  settings.dev = true;
  settings.listen = "0.0.0.0:8470";
  settings.metrics_listen = "0.0.0.0:8471";
  HardenedFacts facts{.tier = Tier::kContainer, .tier_proven = false};
  facts.sessions_enabled = true;
  auto violations = HardenedViolations(settings, facts);
  ASSERT_THAT(violations, SizeIs(8));
  EXPECT_THAT(violations[0], HasSubstr("can prove at most tier container"));
  EXPECT_THAT(violations[1], HasSubstr("--dev"));
  EXPECT_THAT(violations[2], HasSubstr("No caller store"));
  EXPECT_THAT(violations[3], HasSubstr("--listen 0.0.0.0:8470"));
  EXPECT_THAT(violations[4], HasSubstr("--metrics-listen 0.0.0.0:8471"));
  EXPECT_THAT(violations[5], HasSubstr("--pin-environment"));
  EXPECT_THAT(violations[6], HasSubstr("--memory-mb"));
  EXPECT_THAT(violations[7], HasSubstr("Sessions are on without caps"));
  for (const std::string& violation : violations) {
    EXPECT_TRUE(violation.ends_with(".")) << violation;  // whole sentences
  }
}

TEST(Hardened, CleartextListenersAreTheNonLoopbackOnesWithoutTls) {
  Settings settings;
  EXPECT_THAT(CleartextListeners(settings), IsEmpty());  // loopback defaults
  settings.listen = "192.0.2.10:8470";
  settings.metrics_listen = "0.0.0.0:8471";
  EXPECT_THAT(CleartextListeners(settings),
              ElementsAre("--listen 192.0.2.10:8470", "--metrics-listen 0.0.0.0:8471"));
  settings.tls_cert = "c";
  settings.tls_key = "k";
  EXPECT_THAT(CleartextListeners(settings), IsEmpty());
}

TEST(Hardened, TheReportHasOneLinePerViolation) {
  EXPECT_EQ(HardenedReport({"First.", "Second."}),
            "plimsolld cannot start in hardened mode (PLIMSOLL_HARDENED=1): 2 safeguard(s) "
            "missing:\n  - First.\n  - Second.");
}

}  // namespace
}  // namespace plimsoll::daemon
