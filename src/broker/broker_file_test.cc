#include "broker/broker_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace plimsoll::broker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class BrokerFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        std::filesystem::temp_directory_path() / ("broker_file_test." + std::to_string(getpid()));
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::filesystem::path Write(const std::string& name, const std::string& text) {
    std::filesystem::path path = directory_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  static EnvironmentReader Environment(std::map<std::string, std::string> variables) {
    return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
      auto found = variables.find(std::string(name));
      if (found == variables.end()) return std::nullopt;
      return found->second;
    };
  }

  std::filesystem::path directory_;
};

constexpr char kOpenToAll[] = R"(version: 1
profiles:
  inventory:
    base_url: http://127.0.0.1:9
    allow: ["GET /items", "GET /items/*"]
    allowed_callers: ["*"]
    token: {source: static, env: INVENTORY_TOKEN}
)";

TEST_F(BrokerFileTest, AGoodFileOpensAndItsWarningsComeBack) {
  std::vector<std::string> warnings;
  auto broker = OpenBrokerFile(Write("grants.yaml", kOpenToAll),
                               Environment({{"INVENTORY_TOKEN", "t0ken-value"}}), warnings);
  ASSERT_TRUE(broker.ok()) << broker.error().ToString();
  EXPECT_THAT(broker->ProfilesFor("anyone"), ElementsAre("inventory"));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("inventory"));
}

TEST_F(BrokerFileTest, AnUnsetCredentialVariableStopsItNamingTheVariableAndTheFile) {
  std::vector<std::string> warnings;
  auto path = Write("grants.yaml", kOpenToAll);
  auto broker = OpenBrokerFile(path, Environment({}), warnings);
  ASSERT_FALSE(broker.ok());
  EXPECT_THAT(broker.error().message(), HasSubstr("INVENTORY_TOKEN"));
  EXPECT_THAT(broker.error().message(), HasSubstr(path.string()));
}

TEST_F(BrokerFileTest, AFileWithProblemsListsEveryOne) {
  std::vector<std::string> warnings;
  auto broker = OpenBrokerFile(Write("bad.yaml", R"(version: 1
profiles:
  inventory:
    base_url: ftp://example.com
    allow: ["FETCH /items"]
    token: {source: static, env: INVENTORY_TOKEN}
)"),
                               Environment({{"INVENTORY_TOKEN", "t"}}), warnings);
  ASSERT_FALSE(broker.ok());
  EXPECT_EQ(broker.error().code(), ErrorCode::kInvalidArgument);
  const std::string& message = broker.error().message();
  EXPECT_THAT(message, HasSubstr("base_url"));
  EXPECT_THAT(message, HasSubstr("allow"));
  EXPECT_THAT(message, HasSubstr("allowed_callers"));
}

TEST_F(BrokerFileTest, AMissingATooLargeAndADirectoryPathAreClearErrors) {
  std::vector<std::string> warnings;
  auto missing = OpenBrokerFile(directory_ / "absent.yaml", Environment({}), warnings);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message(), HasSubstr("absent.yaml"));

  auto directory = OpenBrokerFile(directory_, Environment({}), warnings);
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(directory.error().message(), HasSubstr("not a regular file"));

  auto large = OpenBrokerFile(Write("large.yaml", std::string(kMaxGrantsFileBytes + 1, '#')),
                              Environment({}), warnings);
  ASSERT_FALSE(large.ok());
  EXPECT_THAT(large.error().message(), HasSubstr("at most"));
}

}  // namespace
}  // namespace plimsoll::broker
