// The skip rule of the cross-cutting suites and the provider tests
// (host_preconditions.h): a provider is skipped only for a named host
// precondition it lacks, and never when PLIMSOLL_REQUIRE_PROVIDERS lists it.
#include "common/host_preconditions.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace plimsoll::testing {
namespace {

// Sets PLIMSOLL_REQUIRE_PROVIDERS for one test and restores it after.
class RequiredProvidersScope {
 public:
  explicit RequiredProvidersScope(const char* value) {
    if (const char* old = std::getenv(kName)) saved_ = old;
    if (value) {
      setenv(kName, value, 1);
    } else {
      unsetenv(kName);
    }
  }
  ~RequiredProvidersScope() {
    if (saved_) {
      setenv(kName, saved_->c_str(), 1);
    } else {
      unsetenv(kName);
    }
  }

 private:
  static constexpr const char* kName = "PLIMSOLL_REQUIRE_PROVIDERS";
  std::optional<std::string> saved_;
};

// A runtime no machine has: its precondition is missing everywhere (as root;
// not as root, "not root" is the missing precondition instead).
constexpr const char* kAbsentRuntime = "oci:no-such-runtime-for-plimsoll-tests";

TEST(HostPreconditions, AProviderWithEveryPreconditionThatFailsIsAFailure) {
  RequiredProvidersScope none(nullptr);
  ASSERT_EQ(MissingHostPrecondition("embedded"), "") << "embedded needs nothing from the host";
  HostVerdict verdict = JudgeUnavailable("embedded", "its smoke test failed: the wall leaked");
  EXPECT_TRUE(verdict.fail);
  EXPECT_NE(verdict.message.find("a failure, not a skip"), std::string::npos) << verdict.message;
  EXPECT_NE(verdict.message.find("the wall leaked"), std::string::npos) << verdict.message;
  EXPECT_EQ(verdict.message.rfind("skipped: ", 0), std::string::npos) << verdict.message;
}

TEST(HostPreconditions, AMissingPreconditionIsASkipThatNamesIt) {
  RequiredProvidersScope none(nullptr);
  std::string missing = MissingHostPrecondition(kAbsentRuntime);
  ASSERT_NE(missing, "");
  HostVerdict verdict = JudgeUnavailable(kAbsentRuntime, "could not open");
  EXPECT_FALSE(verdict.fail);
  EXPECT_EQ(verdict.message.rfind("skipped: ", 0), 0u) << verdict.message;
  EXPECT_NE(verdict.message.find(missing), std::string::npos) << verdict.message;
}

TEST(HostPreconditions, ARequiredProviderIsNeverSkipped) {
  RequiredProvidersScope required((std::string("linux,") + kAbsentRuntime + ",microvm").c_str());
  EXPECT_TRUE(IsRequired(kAbsentRuntime));
  EXPECT_TRUE(IsRequired("linux"));
  EXPECT_FALSE(IsRequired("oci:runc")) << "only what the list names";
  EXPECT_FALSE(IsRequired("oci")) << "a name is matched whole, not as a prefix";
  HostVerdict verdict = JudgeUnavailable(kAbsentRuntime, "could not open");
  EXPECT_TRUE(verdict.fail);
  EXPECT_NE(verdict.message.find("PLIMSOLL_REQUIRE_PROVIDERS"), std::string::npos)
      << verdict.message;
}

TEST(HostPreconditions, TheRequiredListIsCommaSeparatedAndSkipsEmptyNames) {
  RequiredProvidersScope required(",embedded,,oci:runsc,");
  EXPECT_EQ(RequiredProviders(), (std::vector<std::string>{"embedded", "oci:runsc"}));
  RequiredProvidersScope unset(nullptr);
  EXPECT_TRUE(RequiredProviders().empty());
}

TEST(HostPreconditions, JudgeHostSkipsOrFailsOnlyForAMissingPrecondition) {
  RequiredProvidersScope none(nullptr);
  EXPECT_EQ(JudgeHost("embedded").message, "");
  EXPECT_FALSE(JudgeHost("embedded").fail);
  HostVerdict absent = JudgeHost(kAbsentRuntime);
  EXPECT_FALSE(absent.fail);
  EXPECT_EQ(absent.message.rfind("skipped: ", 0), 0u) << absent.message;
  RequiredProvidersScope required(kAbsentRuntime);
  EXPECT_TRUE(JudgeHost(kAbsentRuntime).fail);
}

}  // namespace
}  // namespace plimsoll::testing
