#include "cli/save_displays.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace plimsoll::cli {
namespace {

std::string Slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class SaveDisplaysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = std::filesystem::temp_directory_path() / "plimsoll-displays-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_;
};

TEST_F(SaveDisplaysTest, EachDisplayBecomesAFileNamedByItsIndexAndType) {
  Result result;
  const std::string png("\x89PNG\r\n\x1a\n\0\0", 10);
  result.displays = {Display{"image/png", png, 2, 1}, Display{"text/html", "<b>x</b>", 0, 0},
                     Display{"text/plain", "x", 0, 0},
                     Display{"application/x-unknown", "?", 0, 0}};
  std::ostringstream log;
  const std::filesystem::path directory = root_ / "out" / "nested";
  ASSERT_TRUE(SaveDisplays(result, directory, log).ok());
  EXPECT_EQ(Slurp(directory / "display-1.png"), png);
  EXPECT_EQ(Slurp(directory / "display-2.html"), "<b>x</b>");
  EXPECT_EQ(Slurp(directory / "display-3.txt"), "x");
  EXPECT_EQ(Slurp(directory / "display-4.bin"), "?");
  EXPECT_NE(log.str().find("display-1.png (image/png)"), std::string::npos) << log.str();
}

TEST_F(SaveDisplaysTest, ALinkInThePlaceOfAFileIsNotFollowed) {
  std::filesystem::create_directories(root_ / "out");
  std::ofstream(root_ / "target") << "keep";
  std::filesystem::create_symlink(root_ / "target", root_ / "out" / "display-1.txt");
  Result result;
  result.displays = {Display{"text/plain", "overwrite", 0, 0}};
  std::ostringstream log;
  EXPECT_FALSE(SaveDisplays(result, root_ / "out", log).ok());
  EXPECT_EQ(Slurp(root_ / "target"), "keep");
}

TEST_F(SaveDisplaysTest, ADirectoryThatCannotBeMadeIsAnError) {
  std::ofstream(root_ / "file") << "x";
  Result result;
  result.displays = {Display{"text/plain", "x", 0, 0}};
  std::ostringstream log;
  Status saved = SaveDisplays(result, root_ / "file" / "under", log);
  ASSERT_FALSE(saved.ok());
  EXPECT_NE(saved.error().message().find("Cannot create"), std::string::npos);
}

}  // namespace
}  // namespace plimsoll::cli
