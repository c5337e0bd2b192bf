#include "image/recipe.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "image/test_tree.h"

namespace plimsoll::image {
namespace {

using testing::TemporaryDirectory;
using testing::WriteFile;

bool Contains(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

TEST(RecipeTest, TheProjectRecipeParses) {
  auto recipe = LoadRecipe(PLIMSOLL_SOURCE_RECIPE);
  ASSERT_TRUE(recipe.ok()) << recipe.error().ToString();
  EXPECT_EQ(recipe->suite, "bookworm");
  EXPECT_EQ(recipe->variant, "minbase");
  EXPECT_TRUE(Contains(recipe->packages, "nodejs"));
  EXPECT_TRUE(Contains(recipe->packages, "python3-minimal"));
  EXPECT_FALSE(recipe->source_date_epoch.empty());
  ASSERT_FALSE(recipe->customize_hooks.empty());
  EXPECT_TRUE(std::filesystem::exists(recipe->customize_hooks.front()));
  EXPECT_TRUE(CanonicalRecipe(*recipe).ok());
}

TEST(RecipeTest, RejectsUnknownRepeatedAndMissingKeys) {
  EXPECT_FALSE(
      ParseRecipe("suite = bookworm\nvariant = minbase\nmirror = http://m\npackage = x\n", "/")
          .ok());
  EXPECT_FALSE(
      ParseRecipe("suite = bookworm\nsuite = trixie\nvariant = minbase\nmirror = http://m\n", "/")
          .ok());
  EXPECT_FALSE(ParseRecipe("variant = minbase\nmirror = http://m\n", "/").ok());
  EXPECT_FALSE(
      ParseRecipe("suite = bookworm\nvariant = minbase\nmirror = http://m\npackages = Bad;rm\n",
                  "/")
          .ok());
  EXPECT_FALSE(
      ParseRecipe(
          "suite = bookworm\nvariant = minbase\nmirror = http://m\nsource_date_epoch = soon\n", "/")
          .ok());
  auto bad = ParseRecipe("suite = bookworm\nnonsense\n", "/");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("line 2"), std::string::npos);
}

TEST(RecipeTest, TheKeyIgnoresCommentsAndSpacingButNotSettingsOrHooks) {
  TemporaryDirectory temporary;
  WriteFile(temporary.path() / "hook.sh", "echo one\n");
  std::string text =
      "suite = bookworm\nvariant = minbase\nmirror = http://m\npackages = a b\n"
      "customize_hook = hook.sh\n";
  auto key_of = [&](std::string_view recipe_text, std::string_view tool = "mmdebstrap 1") {
    auto recipe = ParseRecipe(recipe_text, temporary.path());
    EXPECT_TRUE(recipe.ok());
    auto key = RecipeCacheKey(*recipe, tool);
    EXPECT_TRUE(key.ok());
    return *key;
  };
  std::string key = key_of(text);
  EXPECT_EQ(key_of("# a comment\n" + text + "\n\n"), key);
  EXPECT_EQ(
      key_of("suite=bookworm\nvariant =minbase\nmirror= http://m\npackages = a\npackages = b\n"
             "customize_hook = hook.sh\n"),
      key);
  EXPECT_NE(key_of(text + "packages = c\n"), key);
  EXPECT_NE(key_of(text, "mmdebstrap 2"), key);
  WriteFile(temporary.path() / "hook.sh", "echo two\n");
  EXPECT_NE(key_of(text), key);
}

TEST(RecipeTest, MakesTheMmdebstrapCommand) {
  auto recipe = ParseRecipe(
      "suite = bookworm\nvariant = minbase\narchitecture = amd64\nmirror = http://m/debian\n"
      "packages = nodejs python3-minimal\ndpkg_exclude = /usr/share/man/*\n"
      "dpkg_include = /usr/share/doc/*/copyright\ncustomize_hook = hooks/it's.sh\n",
      "/src/image");
  ASSERT_TRUE(recipe.ok());
  std::vector<std::string> expected = {"mmdebstrap",
                                       "--variant=minbase",
                                       "--architecture=amd64",
                                       "--include=nodejs,python3-minimal",
                                       "--dpkgopt=path-exclude=/usr/share/man/*",
                                       "--dpkgopt=path-include=/usr/share/doc/*/copyright",
                                       "--customize-hook=sh '/src/image/hooks/it'\\''s.sh' \"$1\"",
                                       "bookworm",
                                       "/out/rootfs",
                                       "http://m/debian"};
  EXPECT_EQ(MmdebstrapArguments(*recipe, "/out/rootfs"), expected);
}

}  // namespace
}  // namespace plimsoll::image
