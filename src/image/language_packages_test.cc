#include "image/language_packages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "image/test_tree.h"

namespace plimsoll::image {
namespace {

using testing::TemporaryDirectory;
using testing::WriteFile;

const std::string kHash = "--hash=sha256:" + std::string(64, 'b');

TEST(LanguagePackagesTest, RequirementsMustBePinnedByVersionAndHash) {
  EXPECT_TRUE(CheckPinnedRequirements("# wheels\npyarrow==26.0.1 " + kHash + "\n").ok());
  EXPECT_TRUE(CheckPinnedRequirements("a==1 \\\n    " + kHash + " \\\n    " + kHash + "\n").ok());
  for (const std::string& bad : {
           std::string("pyarrow " + kHash + "\n"),          // no version
           std::string("pyarrow>=26 " + kHash + "\n"),      // a range
           std::string("pyarrow==26.0.1\n"),                // no hash
           std::string("pyarrow==26 --hash=md5:abc\n"),     // not SHA-256
           std::string("pyarrow==26 --hash=sha256:ABC\n"),  // not 64 lowercase hex
           std::string("--index-url http://evil/ \npyarrow==26 " + kHash + "\n"),
           std::string("-r other.txt\n"),
           std::string("-e git+https://x\n"),
           std::string("pkg @ https://x/pkg.whl " + kHash + "\n"),
           std::string("# nothing\n"),
       }) {
    EXPECT_FALSE(CheckPinnedRequirements(bad).ok()) << bad;
  }
  auto bad = CheckPinnedRequirements("a==1 " + kHash + "\nb==2\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("line 2"), std::string::npos) << bad.error().message();
}

TEST(LanguagePackagesTest, PipGetsEveryManylinuxTagTheTreesGlibcRunsAndNothingElse) {
  auto argv = PipInstallArguments("/r/requirements.txt", "/t", "3.11", 36);
  auto has = [&](std::string_view word) {
    return std::find(argv.begin(), argv.end(), word) != argv.end();
  };
  for (const char* word :
       {"--require-hashes", "--no-deps", "--only-binary=:all:", "--no-compile", "--no-cache-dir",
        "cp311", "3.11", "manylinux_2_36_x86_64", "manylinux_2_28_x86_64", "manylinux_2_17_x86_64",
        "manylinux2014_x86_64", "/t", "/r/requirements.txt"}) {
    EXPECT_TRUE(has(word)) << word;
  }
  EXPECT_FALSE(has("manylinux_2_37_x86_64"));
  EXPECT_FALSE(has("manylinux_2_16_x86_64"));
  EXPECT_EQ(argv[0], "python3");
}

TEST(LanguagePackagesTest, TheTreesPythonVersionComesFromItsPython3Link) {
  TemporaryDirectory temporary;
  std::filesystem::create_directories(temporary.path() / "usr/bin");
  EXPECT_FALSE(TreePythonVersion(temporary.path()).ok());
  std::filesystem::create_symlink("python3.11", temporary.path() / "usr/bin/python3");
  auto version = TreePythonVersion(temporary.path());
  ASSERT_TRUE(version.ok()) << version.error().ToString();
  EXPECT_EQ(*version, "3.11");
  std::filesystem::remove(temporary.path() / "usr/bin/python3");
  std::filesystem::create_symlink("python3.x; rm -rf /", temporary.path() / "usr/bin/python3");
  EXPECT_FALSE(TreePythonVersion(temporary.path()).ok());
}

TEST(LanguagePackagesTest, ARecipeWithoutThemTouchesNothing) {
  TemporaryDirectory temporary;
  Recipe recipe;
  std::ostringstream progress;
  EXPECT_TRUE(InstallPythonRequirements(recipe, temporary.path(), progress).ok());
  EXPECT_TRUE(InstallNpmProjects(recipe, temporary.path(), progress).ok());
  EXPECT_TRUE(std::filesystem::is_empty(temporary.path()));
  EXPECT_EQ(progress.str(), "");
}

TEST(LanguagePackagesTest, AnUnpinnedFileIsRefusedBeforePipRuns) {
  TemporaryDirectory temporary;
  std::filesystem::create_directories(temporary.path() / "rootfs/usr/bin");
  std::filesystem::create_symlink("python3.11", temporary.path() / "rootfs/usr/bin/python3");
  WriteFile(temporary.path() / "rootfs/usr/lib/x86_64-linux-gnu/libc.so.6",
            std::string("\x7f"
                        "ELF...GNU C Library stable release version 2.36.\n"));
  WriteFile(temporary.path() / "requirements.txt", "pyarrow>=1\n");
  Recipe recipe;
  recipe.pip_requirements = {temporary.path() / "requirements.txt"};
  std::ostringstream progress;
  auto status = InstallPythonRequirements(recipe, temporary.path() / "rootfs", progress);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message().find("not pinned"), std::string::npos)
      << status.error().message();
  EXPECT_FALSE(std::filesystem::exists(temporary.path() / "rootfs/usr/local"));
}

}  // namespace
}  // namespace plimsoll::image
