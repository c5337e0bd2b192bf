#include "daemon/server/settings.h"

#include <gtest/gtest.h>

namespace plimsoll::daemon {
namespace {

TEST(Settings, DefaultsAreLoopbackAndDisabled) {
  auto settings = ParseSettings({"plimsolld"}, {});
  ASSERT_TRUE(settings.ok()) << settings.error().ToString();
  EXPECT_EQ(settings->provider, "disabled");
  EXPECT_EQ(settings->listen, "127.0.0.1:8470");
  EXPECT_EQ(settings->metrics_listen, "127.0.0.1:8471");
  EXPECT_FALSE(settings->dev);
  EXPECT_EQ(settings->http.max_body_bytes, int64_t{8} << 20);
}

TEST(Settings, FlagsWinOverTheEnvironment) {
  auto settings = ParseSettings({"plimsolld", "--provider", "linux", "--listen", "[::1]:0"},
                                {{"SANDBOX_PROVIDER", "embedded"},
                                 {"PLIMSOLL_LISTEN", "127.0.0.1:9"},
                                 {"SANDBOX_MIN_ISOLATION", "kernel"},
                                 {"PLIMSOLL_DEV", "1"}});
  ASSERT_TRUE(settings.ok()) << settings.error().ToString();
  EXPECT_EQ(settings->provider, "linux");
  EXPECT_EQ(settings->listen, "[::1]:0");
  EXPECT_EQ(settings->min_isolation, Tier::kKernel);
  EXPECT_TRUE(settings->dev);
}

TEST(Settings, CallersAndAdmissionSettings) {
  auto defaults = ParseSettings({"plimsolld"}, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->callers_path, "");
  EXPECT_EQ(defaults->max_concurrent_runs, 0u);
  auto from_environment = ParseSettings({"plimsolld"}, {{"PLIMSOLL_CALLERS", "/tmp/a.db"}});
  ASSERT_TRUE(from_environment.ok());
  EXPECT_EQ(from_environment->callers_path, "/tmp/a.db");
  auto flags = ParseSettings({"plimsolld", "--callers", "/tmp/b.db", "--max-concurrent-runs", "7"},
                             {{"PLIMSOLL_CALLERS", "/tmp/a.db"}});
  ASSERT_TRUE(flags.ok()) << flags.error().ToString();
  EXPECT_EQ(flags->callers_path, "/tmp/b.db");
  EXPECT_EQ(flags->max_concurrent_runs, 7u);
  EXPECT_FALSE(ParseSettings({"plimsolld", "--max-concurrent-runs", "0"}, {}).ok());
}

TEST(Settings, UnixSocketModeAndConnectionCaps) {
  auto defaults = ParseSettings({"plimsolld"}, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->unix_socket_mode, 0600u);
  EXPECT_EQ(defaults->max_connections, 1024u);
  EXPECT_EQ(defaults->max_connections_per_peer, 128u);
  EXPECT_LE(defaults->max_connections_per_peer, defaults->max_connections);

  auto given = ParseSettings({"plimsolld", "--unix-socket-mode", "0660", "--max-connections", "10",
                              "--max-connections-per-peer", "3"},
                             {{"PLIMSOLL_UNIX_SOCKET_MODE", "0640"}});
  ASSERT_TRUE(given.ok()) << given.error().ToString();
  EXPECT_EQ(given->unix_socket_mode, 0660u);
  EXPECT_EQ(given->max_connections, 10u);
  EXPECT_EQ(given->max_connections_per_peer, 3u);
  auto from_environment = ParseSettings({"plimsolld"}, {{"PLIMSOLL_UNIX_SOCKET_MODE", "640"}});
  ASSERT_TRUE(from_environment.ok()) << from_environment.error().ToString();
  EXPECT_EQ(from_environment->unix_socket_mode, 0640u);
  EXPECT_TRUE(UnknownVariables({{"PLIMSOLL_UNIX_SOCKET_MODE", "0600"}}).empty());

  // No owner read-write, not octal, too large: refused with the name.
  for (const char* mode : {"0400", "0060", "0689", "01777", "rw"}) {
    auto refused = ParseSettings({"plimsolld", "--unix-socket-mode", mode}, {});
    ASSERT_FALSE(refused.ok()) << mode;
    EXPECT_NE(refused.error().message().find("--unix-socket-mode"), std::string::npos) << mode;
  }
  // One peer must never be able to fill the daemon alone.
  auto peer_above =
      ParseSettings({"plimsolld", "--max-connections", "8", "--max-connections-per-peer", "9"}, {});
  ASSERT_FALSE(peer_above.ok());
  EXPECT_NE(peer_above.error().message().find("--max-connections-per-peer"), std::string::npos);
}

TEST(Settings, SessionCapsAreFlagsThatNest) {
  auto defaults = ParseSettings({"plimsolld"}, {});
  ASSERT_TRUE(defaults.ok()) << defaults.error().ToString();
  EXPECT_EQ(defaults->max_sessions, 256u);
  EXPECT_EQ(defaults->max_sessions_per_caller, 16u);
  EXPECT_EQ(defaults->max_sessions_per_owner, 4u);
  auto given = ParseSettings({"plimsolld", "--max-sessions", "8", "--max-sessions-per-caller", "3",
                              "--max-sessions-per-owner", "2"},
                             {});
  ASSERT_TRUE(given.ok()) << given.error().ToString();
  EXPECT_EQ(given->max_sessions, 8u);
  EXPECT_EQ(given->max_sessions_per_caller, 3u);
  EXPECT_EQ(given->max_sessions_per_owner, 2u);
  // A cap cannot be switched off, and an inner cap is never above an outer one.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"plimsolld", "--max-sessions", "0"},
        {"plimsolld", "--max-sessions-per-owner", "17"},
        {"plimsolld", "--max-sessions", "10", "--max-sessions-per-caller", "11"}}) {
    auto refused = ParseSettings(args, {});
    ASSERT_FALSE(refused.ok()) << args.back();
    EXPECT_NE(refused.error().message().find("--max-sessions"), std::string::npos)
        << refused.error().message();
  }
}

TEST(Settings, BadValuesAreRefusedWithTheirName) {
  EXPECT_FALSE(ParseSettings({"plimsolld", "--listen", "localhost:80"}, {}).ok());
  EXPECT_FALSE(ParseSettings({"plimsolld", "--max-body-bytes", "9000000"}, {}).ok());
  auto floor = ParseSettings({"plimsolld"}, {{"SANDBOX_MIN_ISOLATION", "none"}});
  ASSERT_FALSE(floor.ok());
  EXPECT_NE(floor.error().message().find("SANDBOX_MIN_ISOLATION"), std::string::npos);
  EXPECT_FALSE(ParseSettings({"plimsolld", "--no-such-flag"}, {}).ok());
}

TEST(Settings, UnknownVariablesAreListed) {
  auto unknown = UnknownVariables({{"SANDBOX_MIN_ISOLATON", "vm"},
                                   {"SANDBOX_PROVIDER", "embedded"},
                                   {"PLIMSOLL_IMAGE", "/x"},
                                   {"HOME", "/root"}});
  EXPECT_EQ(unknown, std::vector<std::string>{"SANDBOX_MIN_ISOLATON"});
}

TEST(Settings, RunCeilingEvidenceIntervalAndAuditLog) {
  auto defaults = ParseSettings({"plimsolld"}, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->run_ceiling, std::chrono::milliseconds(300'000));
  EXPECT_EQ(defaults->evidence_interval, std::chrono::milliseconds(60'000));
  EXPECT_EQ(defaults->audit_log, "");

  auto from_environment = ParseSettings({"plimsolld"}, {{"PLIMSOLL_RUN_CEILING_MS", "60000"},
                                                        {"PLIMSOLL_EVIDENCE_INTERVAL_MS", "0"},
                                                        {"PLIMSOLL_AUDIT_LOG", "/tmp/a.jsonl"}});
  ASSERT_TRUE(from_environment.ok()) << from_environment.error().ToString();
  EXPECT_EQ(from_environment->run_ceiling, std::chrono::milliseconds(60'000));
  EXPECT_EQ(from_environment->evidence_interval, std::chrono::milliseconds(0));
  EXPECT_EQ(from_environment->audit_log, "/tmp/a.jsonl");

  auto flags = ParseSettings({"plimsolld", "--run-ceiling-ms", "2000", "--evidence-interval-ms",
                              "1000", "--audit-log", "/tmp/b.jsonl"},
                             {{"PLIMSOLL_RUN_CEILING_MS", "60000"},
                              {"PLIMSOLL_EVIDENCE_INTERVAL_MS", "0"},
                              {"PLIMSOLL_AUDIT_LOG", "/tmp/a.jsonl"}});
  ASSERT_TRUE(flags.ok()) << flags.error().ToString();
  EXPECT_EQ(flags->run_ceiling, std::chrono::milliseconds(2'000));
  EXPECT_EQ(flags->evidence_interval, std::chrono::milliseconds(1'000));
  EXPECT_EQ(flags->audit_log, "/tmp/b.jsonl");
  EXPECT_TRUE(UnknownVariables({{"PLIMSOLL_RUN_CEILING_MS", "1"},
                                {"PLIMSOLL_EVIDENCE_INTERVAL_MS", "1"},
                                {"PLIMSOLL_AUDIT_LOG", "x"}})
                  .empty());
}

TEST(Settings, OutOfRangeCeilingsAndIntervalsNameTheirFlagOrVariable) {
  struct Case {
    std::vector<std::string> args;
    Environment environment;
    std::string named;
  };
  for (const Case& bad : std::vector<Case>{
           {{"plimsolld", "--run-ceiling-ms", "999"}, {}, "--run-ceiling-ms"},
           {{"plimsolld", "--run-ceiling-ms", "86400001"}, {}, "--run-ceiling-ms"},
           {{"plimsolld", "--run-ceiling-ms", "-5"}, {}, "--run-ceiling-ms"},
           {{"plimsolld", "--evidence-interval-ms", "999"}, {}, "--evidence-interval-ms"},
           {{"plimsolld", "--evidence-interval-ms", "-2"}, {}, "--evidence-interval-ms"},
           {{"plimsolld"}, {{"PLIMSOLL_RUN_CEILING_MS", "5 min"}}, "PLIMSOLL_RUN_CEILING_MS"},
           {{"plimsolld"}, {{"PLIMSOLL_RUN_CEILING_MS", "0"}}, "PLIMSOLL_RUN_CEILING_MS"},
           {{"plimsolld"},
            {{"PLIMSOLL_EVIDENCE_INTERVAL_MS", "10"}},
            "PLIMSOLL_EVIDENCE_INTERVAL_MS"},
       }) {
    auto settings = ParseSettings(bad.args, bad.environment);
    ASSERT_FALSE(settings.ok()) << bad.named;
    EXPECT_EQ(settings.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(settings.error().message().find(bad.named), std::string::npos)
        << settings.error().message();
  }
}

TEST(Settings, TlsNeedsBothFilesFromFlagsOrEnvironment) {
  auto flags = ParseSettings({"plimsolld", "--tls-cert", "/c.pem", "--tls-key", "/k.pem"}, {});
  ASSERT_TRUE(flags.ok()) << flags.error().ToString();
  EXPECT_EQ(flags->tls_cert, "/c.pem");
  EXPECT_EQ(flags->tls_key, "/k.pem");
  auto environment = ParseSettings(
      {"plimsolld"}, {{"PLIMSOLL_TLS_CERT", "/e.pem"}, {"PLIMSOLL_TLS_KEY", "/f.pem"}});
  ASSERT_TRUE(environment.ok()) << environment.error().ToString();
  EXPECT_EQ(environment->tls_cert, "/e.pem");
  EXPECT_TRUE(UnknownVariables({{"PLIMSOLL_TLS_CERT", "x"}, {"PLIMSOLL_TLS_KEY", "y"}}).empty());
  auto half = ParseSettings({"plimsolld", "--tls-cert", "/c.pem"}, {});
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.error().message().find("both --tls-cert and --tls-key"), std::string::npos)
      << half.error().message();
  EXPECT_FALSE(ParseSettings({"plimsolld"}, {{"PLIMSOLL_TLS_KEY", "/k.pem"}}).ok());
}

TEST(Settings, StartupRulesListEveryViolation) {
  Settings settings;
  settings.provider = "embedded";
  Status plain = CheckStartupRules(settings, /*has_callers=*/false);
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.error().message().find("--dev"), std::string::npos);
  EXPECT_TRUE(CheckStartupRules(settings, /*has_callers=*/true).ok());

  settings.dev = true;
  settings.listen = "0.0.0.0:8470";
  settings.metrics_listen = "0.0.0.0:8471";
  Status all = CheckStartupRules(settings, false);
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.error().message().find("--listen"), std::string::npos);
  EXPECT_NE(all.error().message().find("--metrics-listen"), std::string::npos);

  Settings disabled;
  EXPECT_TRUE(CheckStartupRules(disabled, false).ok());
}

}  // namespace
}  // namespace plimsoll::daemon
