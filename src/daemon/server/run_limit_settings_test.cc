#include "daemon/server/run_limit_settings.h"

#include <gtest/gtest.h>

#include "daemon/server/settings.h"

namespace plimsoll::daemon {
namespace {

constexpr std::chrono::milliseconds kCeiling{300'000};

TEST(RunLimitSettings, UnsetFlagsKeepTheDefaults) {
  auto settings = ParseSettings({"plimsolld"}, {});
  ASSERT_TRUE(settings.ok()) << settings.error().ToString();
  EXPECT_EQ(settings->run_limits, RunLimitSettings{});
  EXPECT_EQ(ApplyRunLimits(settings->run_limits, Limits{}), Limits{});
}

TEST(RunLimitSettings, EveryFlagReachesItsLimit) {
  auto settings = ParseSettings({"plimsolld", "--memory-mb",
                                 "512",       "--cpus-millis",
                                 "500",       "--pids",
                                 "128",       "--tmp-mb",
                                 "8",         "--work-mb",
                                 "64",        "--output-cap-kb",
                                 "32",        "--snippet-timeout-ms",
                                 "2000",      "--max-snippet-timeout-ms",
                                 "10000",     "--project-timeout-ms",
                                 "20000",     "--max-project-timeout-ms",
                                 "60000"},
                                {});
  ASSERT_TRUE(settings.ok()) << settings.error().ToString();
  Limits limits = ApplyRunLimits(settings->run_limits, Limits{});
  EXPECT_EQ(limits.memory_bytes, int64_t{512} << 20);
  EXPECT_EQ(limits.cpus_millis, 500);
  EXPECT_EQ(limits.pids, 128);
  EXPECT_EQ(limits.tmp_bytes, int64_t{8} << 20);
  EXPECT_EQ(limits.work_bytes, int64_t{64} << 20);
  EXPECT_EQ(limits.output_cap_bytes, int64_t{32} << 10);
  EXPECT_EQ(limits.snippet_timeout_default_ms, 2000);
  EXPECT_EQ(limits.snippet_timeout_max_ms, 10000);
  EXPECT_EQ(limits.project_timeout_default_ms, 20000);
  EXPECT_EQ(limits.project_timeout_max_ms, 60000);
  EXPECT_TRUE(UnsetResourceLimitFlags(settings->run_limits).empty());
  // What is not a limit stays as it was.
  EXPECT_EQ(limits.run_ceiling_ms, Limits{}.run_ceiling_ms);
  EXPECT_EQ(limits.max_project_files, Limits{}.max_project_files);
}

TEST(RunLimitSettings, OutOfRangeValuesAreRefusedByName) {
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--memory-mb", "8"},
                                                        {"--memory-mb", "-1"},
                                                        {"--cpus-millis", "5"},
                                                        {"--pids", "0"},
                                                        {"--tmp-mb", "0"},
                                                        {"--work-mb", "99999999"},
                                                        {"--output-cap-kb", "0"},
                                                        {"--memory-mb", "lots"}}) {
    auto settings = ParseSettings({"plimsolld", flag, value}, {});
    ASSERT_FALSE(settings.ok()) << flag << " " << value;
    EXPECT_NE(settings.error().message().find(flag), std::string::npos)
        << settings.error().message();
  }
}

TEST(RunLimitSettings, TimeoutsStayWithinTheRunCeiling) {
  RunLimitSettings limits;
  limits.max_project_timeout_ms = 300'001;
  Status above = CheckRunLimits(limits, kCeiling);
  ASSERT_FALSE(above.ok());
  EXPECT_NE(above.error().message().find("--max-project-timeout-ms must be between 1 and the run "
                                         "ceiling (300000 ms"),
            std::string::npos)
      << above.error().message();
  limits.max_project_timeout_ms = 0;
  EXPECT_FALSE(CheckRunLimits(limits, kCeiling).ok());
  // A lower ceiling lowers what a maximum may be.
  auto settings = ParseSettings(
      {"plimsolld", "--run-ceiling-ms", "10000", "--max-snippet-timeout-ms", "20000"}, {});
  ASSERT_FALSE(settings.ok());
  EXPECT_NE(settings.error().message().find("--max-snippet-timeout-ms"), std::string::npos);
}

TEST(RunLimitSettings, ADefaultTimeoutAboveItsMaximumIsRefused) {
  RunLimitSettings limits;
  limits.snippet_timeout_ms = 40'000;  // above the default maximum, 30 s
  Status refused = CheckRunLimits(limits, kCeiling);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find(
                "--snippet-timeout-ms (40000 ms) is above --max-snippet-timeout-ms (30000 ms)"),
            std::string::npos)
      << refused.error().message();
  limits.max_snippet_timeout_ms = 40'000;
  EXPECT_TRUE(CheckRunLimits(limits, kCeiling).ok());
  RunLimitSettings project;
  project.max_project_timeout_ms = 10'000;  // below the default project timeout, 30 s
  EXPECT_FALSE(CheckRunLimits(project, kCeiling).ok());
}

TEST(RunLimitSettings, UnsetResourceFlagsAreListedInOrder) {
  RunLimitSettings limits;
  limits.memory_mb = 256;
  limits.snippet_timeout_ms = 1000;  // a default, not a limit: never required
  EXPECT_EQ(UnsetResourceLimitFlags(limits),
            (std::vector<std::string>{"--cpus-millis", "--pids", "--tmp-mb", "--work-mb",
                                      "--output-cap-kb", "--max-snippet-timeout-ms",
                                      "--max-project-timeout-ms"}));
}

}  // namespace
}  // namespace plimsoll::daemon
