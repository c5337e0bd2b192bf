#include "image/builder.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "image/held_image.h"
#include "image/image.h"
#include "image/test_tree.h"

namespace plimsoll::image {
namespace {

using testing::FakeElf;
using testing::ReadFile;
using testing::TemporaryDirectory;
using testing::WriteFile;

// Stands in for mmdebstrap: counts its runs and writes a tiny tree.
class FakeBaseBuilder final : public BaseTreeBuilder {
 public:
  Expected<std::string> ToolVersion() override { return std::string("fake 1"); }
  Status Build(const Recipe& recipe, const std::filesystem::path& root, std::ostream&) override {
    ++builds;
    if (fail) return Failure(ErrorCode::kInternal, "fake bootstrap failed");
    WriteFile(root / "etc" / "os-release", "suite " + recipe.suite + "\n");
    WriteFile(root / "etc" / "passwd",
              "root:x:0:0::/root:/bin/sh\nguest:x:1000:1000::/work:/bin/sh\n");
    std::filesystem::create_directories(root / "work");
    std::filesystem::create_directories(root / "usr" / "local" / "bin");
    return Status::Ok();
  }
  int builds = 0;
  bool fail = false;
};

class BuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto& top = temporary_.path();
    WriteFile(top / "recipe", "suite = bookworm\nvariant = minbase\nmirror = http://m\n");
    WriteFile(top / "bin" / "qjs", FakeElf(false, "qjs v1"), 0755);
    WriteFile(top / "bin" / "plimsoll-guest", FakeElf(false, "agent v1"), 0755);
    options_.recipe_file = top / "recipe";
    options_.output = top / "out";
    options_.guest_bin = top / "bin";
    options_.cache = top / "cache";
  }

  Expected<BuildResult> Build() {
    progress_.str("");
    return BuildImage(options_, builder_, progress_);
  }

  TemporaryDirectory temporary_;
  BuildOptions options_;
  FakeBaseBuilder builder_;
  std::ostringstream progress_;
};

TEST_F(BuilderTest, BuildsAnImageWithOurBinaries) {
  auto built = Build();
  ASSERT_TRUE(built.ok()) << built.error().ToString();
  EXPECT_EQ(builder_.builds, 1);
  EXPECT_FALSE(built->base_was_cached);
  EXPECT_TRUE(built->has_agent);
  auto image = OpenImage(options_.output);
  ASSERT_TRUE(image.ok()) << image.error().ToString();
  EXPECT_EQ(image->identity, built->identity);
  EXPECT_TRUE(Verify(*image).ok());
  EXPECT_EQ(ReadFile(image->rootfs / "usr/local/bin/qjs"), FakeElf(false, "qjs v1"));
  EXPECT_EQ(std::filesystem::status(image->rootfs / "usr/local/bin/plimsoll-guest").permissions(),
            std::filesystem::perms(0755));
  EXPECT_NE(ReadFile(options_.output / "manifest").find("/usr/local/bin/qjs f 0755"),
            std::string::npos);
}

TEST_F(BuilderTest, AnUnchangedRebuildIsANoOp) {
  auto first = Build();
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  auto second = Build();
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(builder_.builds, 1);
  EXPECT_TRUE(second->base_was_cached);
  EXPECT_TRUE(second->unchanged);
  EXPECT_EQ(second->identity, first->identity);
  EXPECT_NE(progress_.str().find("up to date"), std::string::npos) << progress_.str();
}

TEST_F(BuilderTest, ANewBinaryReassemblesOnTheCachedBase) {
  auto first = Build();
  ASSERT_TRUE(first.ok());
  WriteFile(options_.guest_bin / "qjs", FakeElf(false, "qjs v2"), 0755);
  auto second = Build();
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(builder_.builds, 1);
  EXPECT_TRUE(second->base_was_cached);
  EXPECT_FALSE(second->unchanged);
  EXPECT_NE(second->identity, first->identity);
  EXPECT_FALSE(std::filesystem::exists(options_.output / "rootfs.partial"));
}

TEST_F(BuilderTest, AChangedRecipeRebuildsTheBase) {
  ASSERT_TRUE(Build().ok());
  WriteFile(options_.recipe_file, "suite = trixie\nvariant = minbase\nmirror = http://m\n");
  auto second = Build();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(builder_.builds, 2);
  EXPECT_EQ(ReadFile(options_.output / "rootfs/etc/os-release"), "suite trixie\n");
  options_.rebuild_base = true;
  ASSERT_TRUE(Build().ok());
  EXPECT_EQ(builder_.builds, 3);
}

TEST_F(BuilderTest, AnInterruptedAssemblyIsRebuilt) {
  auto first = Build();
  ASSERT_TRUE(first.ok());
  std::filesystem::remove(options_.output / "identity");
  EXPECT_FALSE(OpenImage(options_.output).ok());
  auto second = Build();
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->unchanged);
  EXPECT_EQ(second->identity, first->identity);
}

TEST_F(BuilderTest, AFailedBootstrapLeavesNoCachedBase) {
  builder_.fail = true;
  auto built = Build();
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.error().message().find("fake bootstrap failed"), std::string::npos);
  builder_.fail = false;
  ASSERT_TRUE(Build().ok());
  EXPECT_EQ(builder_.builds, 2);
}

TEST_F(BuilderTest, RefusesDynamicOrMissingQjs) {
  WriteFile(options_.guest_bin / "qjs", FakeElf(true), 0755);
  auto built = Build();
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.error().message().find("dynamically linked"), std::string::npos);
  std::filesystem::remove(options_.guest_bin / "qjs");
  built = Build();
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.error().message().find("does not exist"), std::string::npos);
  EXPECT_EQ(builder_.builds, 0);  // checked before the slow bootstrap
}

TEST_F(BuilderTest, AMissingAgentWarnsUnlessRequired) {
  std::filesystem::remove(options_.guest_bin / "plimsoll-guest");
  auto built = Build();
  ASSERT_TRUE(built.ok());
  EXPECT_FALSE(built->has_agent);
  EXPECT_NE(progress_.str().find("WARNING"), std::string::npos);
  options_.require_agent = true;
  EXPECT_FALSE(Build().ok());
}

TEST_F(BuilderTest, InstallsTheExamBinariesAndRequiresThemWithTheAgent) {
  options_.require_agent = true;
  EXPECT_FALSE(Build().ok()) << "none of the exam commands";
  for (const char* name :
       {"plimsoll-trial", "plimsoll-cc", "plimsoll-wasm-controller", "plimsoll-model"}) {
    WriteFile(options_.guest_bin / name, FakeElf(false, name), 0755);
  }
  auto built = Build();
  ASSERT_TRUE(built.ok()) << built.error().ToString();
  auto image = OpenImage(options_.output);
  ASSERT_TRUE(image.ok()) << image.error().ToString();
  for (const char* name :
       {"plimsoll-trial", "plimsoll-cc", "plimsoll-wasm-controller", "plimsoll-model"}) {
    EXPECT_EQ(ReadFile(image->rootfs / "usr/local/bin" / name), FakeElf(false, name)) << name;
  }
}

TEST(StaticElfTest, TellsStaticFromDynamic) {
  TemporaryDirectory temporary;
  WriteFile(temporary.path() / "static", FakeElf(false));
  WriteFile(temporary.path() / "script", "#!/bin/sh\n");
  EXPECT_TRUE(*IsStaticElf(temporary.path() / "static"));
  EXPECT_FALSE(*IsStaticElf("/bin/sh"));  // Debian's sh is dynamically linked
  EXPECT_FALSE(IsStaticElf(temporary.path() / "script").ok());
}

// Issue 13: a rebuild swaps a new tree in under the same name; a provider
// that holds the old one keeps it whole (before, the rebuild deleted it).
TEST_F(BuilderTest, ARebuildKeepsTheTreeAProviderHoldsAndRemovesItLater) {
  ASSERT_TRUE(Build().ok());
  auto image = OpenImage(options_.output);
  ASSERT_TRUE(image.ok());
  auto held = HoldImage(*image);
  ASSERT_TRUE(held.ok()) << held.error().ToString();

  WriteFile(options_.guest_bin / "qjs", FakeElf(false, "qjs v2"), 0755);
  auto second = Build();
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_NE(progress_.str().find("kept 1 retired tree"), std::string::npos) << progress_.str();
  // The held tree is still the old one, whole, under its old identity.
  int qjs = openat((*held)->tree_fd(), "usr/local/bin/qjs", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(qjs, 0);
  char buffer[4096];
  ssize_t got = read(qjs, buffer, sizeof buffer);
  close(qjs);
  ASSERT_GT(got, 0);
  EXPECT_NE(std::string(buffer, static_cast<size_t>(got)).find("qjs v1"), std::string::npos);
  EXPECT_NE((*held)->identity(), second->identity);
  EXPECT_EQ(ReadFile(options_.output / "rootfs/usr/local/bin/qjs"), FakeElf(false, "qjs v2"));

  // Released, the next build removes it.
  held->reset();
  WriteFile(options_.guest_bin / "qjs", FakeElf(false, "qjs v3"), 0755);
  ASSERT_TRUE(Build().ok());
  size_t retired = 0;
  for (const auto& entry : std::filesystem::directory_iterator(options_.output)) {
    if (entry.path().filename().string().find(".retired-") != std::string::npos) ++retired;
  }
  EXPECT_EQ(retired, 0u) << progress_.str();
}

}  // namespace
}  // namespace plimsoll::image
