#include "cli/token_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace plimsoll::cli {
namespace {

class TokenSourceTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& content) {
    std::ofstream(path_, std::ios::binary) << content;
    return path_.string();
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_ = std::filesystem::temp_directory_path() /
                                ("plimsoll-token-test-" + std::to_string(::getpid()));
};

TEST_F(TokenSourceTest, TheFileWinsAndItsNewlineIsDropped) {
  auto token = ReadBearerToken(Write("plm_abc123\n"), "from-environment");
  ASSERT_TRUE(token.ok()) << token.error().ToString();
  EXPECT_EQ(*token, "plm_abc123");
}

TEST_F(TokenSourceTest, TheEnvironmentIsTheFallbackAndNothingMeansNoToken) {
  EXPECT_EQ(*ReadBearerToken("", " env-token\n"), "env-token");
  EXPECT_EQ(*ReadBearerToken("", nullptr), "");
  EXPECT_EQ(*ReadBearerToken("", ""), "");
}

TEST_F(TokenSourceTest, UnusableFilesAreRefusals) {
  auto missing = ReadBearerToken("/nonexistent/token", nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().not_dispatched(), NotDispatched::kRequest);
  EXPECT_NE(missing.error().message().find("Cannot read the token file"), std::string::npos);

  auto empty = ReadBearerToken(Write(" \n\n"), "ignored");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message().find("is empty"), std::string::npos);

  auto huge = ReadBearerToken(Write(std::string(10000, 'a')), nullptr);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message().find("larger than 4096 bytes"), std::string::npos);
}

}  // namespace
}  // namespace plimsoll::cli
