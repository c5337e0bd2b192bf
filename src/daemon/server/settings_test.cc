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
  settings.hardened = true;
  Status all = CheckStartupRules(settings, false);
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.error().message().find("hardened"), std::string::npos);
  EXPECT_NE(all.error().message().find("--listen"), std::string::npos);
  EXPECT_NE(all.error().message().find("--metrics-listen"), std::string::npos);

  Settings disabled;
  EXPECT_TRUE(CheckStartupRules(disabled, false).ok());
}

}  // namespace
}  // namespace plimsoll::daemon
