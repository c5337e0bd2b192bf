#include "auth/store_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace plimsoll::auth {
namespace {

namespace fs = std::filesystem;

class StoreFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "plimsoll-store-file-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

mode_t ModeOf(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

TEST_F(StoreFileTest, CreatesTheFileWithMode0600EvenUnderAPermissiveUmask) {
  mode_t old = ::umask(0);
  Status created = PrepareStoreFile(dir_ / "callers.db", true, false);
  ::umask(old);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  EXPECT_EQ(ModeOf(dir_ / "callers.db"), 0600u);
}

TEST_F(StoreFileTest, AMissingFileIsNotFoundUnlessCreating) {
  Status missing = PrepareStoreFile(dir_ / "callers.db", false, false);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message().find("plimsoll callers create"), std::string::npos);
}

TEST_F(StoreFileTest, AMissingParentIsCreatedOnlyWhenAsked) {
  fs::path path = dir_ / "a" / "b" / "callers.db";
  Status refused = PrepareStoreFile(path, true, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("does not exist"), std::string::npos)
      << refused.error().message();
  ASSERT_TRUE(PrepareStoreFile(path, true, true).ok());
  EXPECT_EQ(ModeOf(dir_ / "a" / "b"), 0700u);
}

TEST_F(StoreFileTest, ADirectoryIsRefusedWithAHint) {
  Status refused = PrepareStoreFile(dir_, true, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("is a directory"), std::string::npos);
}

TEST_F(StoreFileTest, AFileOthersMayWriteIsRefused) {
  fs::path path = dir_ / "callers.db";
  std::ofstream(path).put('x');
  ASSERT_EQ(::chmod(path.c_str(), 0664), 0);
  Status refused = PrepareStoreFile(path, false, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("mode 0664"), std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().message().find("chmod 600"), std::string::npos);
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);  // readable by others is allowed: digests only
  EXPECT_TRUE(PrepareStoreFile(path, false, false).ok());
}

TEST_F(StoreFileTest, AParentThatIsAFileIsRefused) {
  std::ofstream(dir_ / "file").put('x');
  Status refused = PrepareStoreFile(dir_ / "file" / "callers.db", true, true);
  ASSERT_FALSE(refused.ok());
}

TEST(DefaultStorePathTest, FollowsTheVariableThenRootThenHome) {
  const char* saved = std::getenv(kCallerStoreVariable);
  std::string saved_value = saved ? saved : "";
  setenv(kCallerStoreVariable, "/tmp/x/callers.db", 1);
  auto path = DefaultCallerStorePath();
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, fs::path("/tmp/x/callers.db"));
  unsetenv(kCallerStoreVariable);
  path = DefaultCallerStorePath();
  ASSERT_TRUE(path.ok());
  if (::geteuid() == 0) {
    EXPECT_EQ(*path, fs::path("/var/lib/plimsoll/callers.db"));
  } else {
    EXPECT_EQ(path->filename(), "callers.db");
  }
  if (saved) setenv(kCallerStoreVariable, saved_value.c_str(), 1);
}

}  // namespace
}  // namespace plimsoll::auth
