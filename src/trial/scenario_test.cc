#include "trial/scenario.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "trial/unprivileged_for_tests.h"

namespace plimsoll::trial {
namespace {

class ScenarioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/plimsoll-scenario-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf " + directory_).c_str()); }

  std::string Write(const std::string& text) {
    const std::string path = directory_ + "/scenario.json";
    std::ofstream(path) << text;
    return path;
  }
  static bool Exists(const std::string& path) {
    struct stat status;
    return lstat(path.c_str(), &status) == 0;
  }

  std::string directory_;
};

TEST_F(ScenarioTest, ReadsTheParametersAndDeletesTheFile) {
  const std::string path = Write(R"({"plant": "cartpole", "parameters": [0.5, -1, 0.25, 0]})");
  Expected<Scenario> scenario = TakeScenario(path);
  ASSERT_TRUE(scenario.ok()) << scenario.error().ToString();
  EXPECT_EQ(scenario->plant, "cartpole");
  EXPECT_EQ(scenario->parameters, (std::vector<double>{0.5, -1, 0.25, 0}));
  EXPECT_FALSE(Exists(path));

  Expected<Scenario> defaults = TakeScenario(Write(R"({"parameters": []})"));
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->plant.has_value());
  EXPECT_TRUE(defaults->parameters.empty());
}

TEST_F(ScenarioTest, RefusesBadFilesAndStillDeletesThem) {
  for (const char* text : {"", "[]", "{}", R"({"parameters": 1})", R"({"parameters": ["1"]})",
                           R"({"parameters": [], "extra": 1})", R"({"plant": 3, "parameters": []})",
                           "{\"parameters\": [1,"}) {
    const std::string path = Write(text);
    Expected<Scenario> scenario = TakeScenario(path);
    EXPECT_FALSE(scenario.ok()) << text;
    EXPECT_FALSE(Exists(path)) << text;
  }
  EXPECT_FALSE(TakeScenario(Write(std::string(kScenarioFileCap + 1, ' '))).ok());
  EXPECT_FALSE(TakeScenario(directory_ + "/absent.json").ok());
  EXPECT_FALSE(TakeScenario(directory_).ok());  // a directory
}

// A second name made before the runner came (a hard link by an earlier
// step) would outlive the delete: refused before a byte is read, this name
// deleted, the other beyond the runner's reach (and so no trial runs).
TEST_F(ScenarioTest, RefusesAFileWithASecondLink) {
  const std::string path = Write(R"({"parameters": [0, 0, 0.2, 0]})");
  const std::string other = directory_ + "/kept.json";
  ASSERT_EQ(link(path.c_str(), other.c_str()), 0);
  Expected<Scenario> scenario = TakeScenario(path);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(scenario.error().message().find("has 2 links"), std::string::npos)
      << scenario.error().message();
  EXPECT_FALSE(Exists(path));
  EXPECT_TRUE(Exists(other));
}

// A symlink is not followed (O_NOFOLLOW): the link is deleted, its target
// never read.
TEST_F(ScenarioTest, RefusesASymlink) {
  const std::string target = Write(R"({"parameters": [0, 0, 0.2, 0]})");
  const std::string path = directory_ + "/link.json";
  ASSERT_EQ(symlink(target.c_str(), path.c_str()), 0);
  Expected<Scenario> scenario = TakeScenario(path);
  ASSERT_FALSE(scenario.ok());
  EXPECT_NE(scenario.error().message().find("cannot be opened"), std::string::npos)
      << scenario.error().message();
  EXPECT_FALSE(Exists(path));
  EXPECT_TRUE(Exists(target));
}

// A file of another user: that user could link it or hold it open. (In a
// sandbox the project's files are the step user's, the runner's own.)
TEST_F(ScenarioTest, RefusesAFileOfAnotherUser) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "skipped: needs root (CAP_CHOWN) to make a file of another user";
  }
  const std::string path = Write(R"({"parameters": [0, 0, 0.2, 0]})");
  ASSERT_EQ(chown(path.c_str(), testing::kUnprivilegedId, testing::kUnprivilegedId), 0);
  Expected<Scenario> scenario = TakeScenario(path);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(
      scenario.error().message().find("belongs to uid " + std::to_string(testing::kUnprivilegedId)),
      std::string::npos)
      << scenario.error().message();
  EXPECT_FALSE(Exists(path));
}

TEST(ScenarioDigest, IsSha256OfLittleEndianFloat64s) {
  // sha256sum of empty input, and of the 8 bytes of 1.0 (00 00 00 00 00 00 f0 3f).
  EXPECT_EQ(ScenarioDigestHex({}),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ScenarioDigestHex(std::vector<double>{1.0}),
            "6c3c396ed6b5c36dcae172271f462051b1266b851e92df3deea8ac65478fd712");
}

}  // namespace
}  // namespace plimsoll::trial
