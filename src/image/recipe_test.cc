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

TEST(RecipeTest, TheDataVariantIsTheBasePlusItsOwnPackages) {
  auto base = LoadRecipe(PLIMSOLL_SOURCE_RECIPE);
  auto data = LoadRecipe(std::string(PLIMSOLL_SOURCE_VARIANTS) + "/data/recipe");
  ASSERT_TRUE(base.ok()) << base.error().ToString();
  ASSERT_TRUE(data.ok()) << data.error().ToString();
  EXPECT_EQ(data->suite, base->suite);
  EXPECT_EQ(data->mirror, base->mirror);
  for (const auto& package : base->packages) EXPECT_TRUE(Contains(data->packages, package));
  EXPECT_TRUE(Contains(data->packages, "python3-pandas"));
  EXPECT_TRUE(Contains(data->packages, "python3-pytest"));
  ASSERT_EQ(data->pip_requirements.size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(data->pip_requirements.front()));
  ASSERT_EQ(data->npm_projects.size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(data->npm_projects.front() / "package-lock.json"));
  // The base's plimsoll_host, then the displays hook: .pth, module, backend.
  ASSERT_EQ(base->python_site.size(), 1u);
  EXPECT_EQ(base->python_site.front().filename(), "plimsoll_host.py");
  ASSERT_EQ(data->python_site.size(), 4u);
  EXPECT_EQ(data->python_site.front(), base->python_site.front());
  for (const auto& file : data->python_site) EXPECT_TRUE(std::filesystem::exists(file)) << file;
  // The base's hook (the guest user, the mount points) is the variant's too.
  EXPECT_EQ(data->customize_hooks, base->customize_hooks);
  auto base_key = RecipeCacheKey(*base, "mmdebstrap 1");
  auto data_key = RecipeCacheKey(*data, "mmdebstrap 1");
  ASSERT_TRUE(base_key.ok() && data_key.ok());
  EXPECT_NE(*base_key, *data_key);
}

TEST(RecipeTest, AnIncludeIsReadInPlaceAndItsKeysCannotBeGivenAgain) {
  TemporaryDirectory temporary;
  WriteFile(temporary.path() / "base" / "recipe",
            "suite = bookworm\nvariant = minbase\nmirror = http://m\npackages = a\n"
            "customize_hook = hooks/one.sh\n");
  WriteFile(temporary.path() / "base" / "hooks" / "one.sh", "echo one\n");
  WriteFile(temporary.path() / "v" / "two.sh", "echo two\n");
  auto recipe = ParseRecipe("include = ../base/recipe\npackages = b\ncustomize_hook = two.sh\n",
                            temporary.path() / "v");
  ASSERT_TRUE(recipe.ok()) << recipe.error().ToString();
  EXPECT_EQ(recipe->packages, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(recipe->customize_hooks.size(), 2u);
  // A hook of the included recipe is found beside that recipe, not beside the includer.
  EXPECT_TRUE(std::filesystem::exists(recipe->customize_hooks[0]));
  EXPECT_TRUE(std::filesystem::exists(recipe->customize_hooks[1]));

  auto twice = ParseRecipe("include = ../base/recipe\nsuite = trixie\n", temporary.path() / "v");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message().find("given twice"), std::string::npos);
  auto missing = ParseRecipe("include = nowhere\n", temporary.path());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("line 1"), std::string::npos);
}

TEST(RecipeTest, AnIncludeCycleAndTooDeepANestingAreRefused) {
  TemporaryDirectory temporary;
  WriteFile(temporary.path() / "a", "include = b\n");
  WriteFile(temporary.path() / "b", "include = a\n");
  auto cycle = LoadRecipe(temporary.path() / "a");
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.error().message().find("cycle"), std::string::npos) << cycle.error().message();

  for (int i = 0; i < kMaxRecipeIncludeDepth + 2; ++i) {
    WriteFile(temporary.path() / ("r" + std::to_string(i)),
              "include = r" + std::to_string(i + 1) + "\n");
  }
  WriteFile(temporary.path() / ("r" + std::to_string(kMaxRecipeIncludeDepth + 2)),
            "suite = bookworm\nvariant = minbase\nmirror = http://m\n");
  auto deep = LoadRecipe(temporary.path() / "r0");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message().find("deeper"), std::string::npos) << deep.error().message();
}

TEST(RecipeTest, PipAndNpmFilesAreInTheKeyByContentAndOnlyWhenNamed) {
  TemporaryDirectory temporary;
  std::string text = "suite = bookworm\nvariant = minbase\nmirror = http://m\n";
  WriteFile(temporary.path() / "requirements.txt",
            "x==1 --hash=sha256:" + std::string(64, 'a') + "\n");
  WriteFile(temporary.path() / "npm" / "package.json", "{}\n");
  WriteFile(temporary.path() / "npm" / "package-lock.json", "{}\n");
  auto key_of = [&](std::string_view recipe_text) {
    auto recipe = ParseRecipe(recipe_text, temporary.path());
    EXPECT_TRUE(recipe.ok());
    auto key = RecipeCacheKey(*recipe, "mmdebstrap 1");
    EXPECT_TRUE(key.ok()) << key.error().ToString();
    return key.ok() ? *key : std::string();
  };
  auto canonical = CanonicalRecipe(*ParseRecipe(text, temporary.path()));
  ASSERT_TRUE(canonical.ok());
  EXPECT_EQ(canonical->find("pip_requirements"), std::string::npos);
  EXPECT_EQ(canonical->find("npm_project"), std::string::npos);

  std::string with = text + "pip_requirements = requirements.txt\nnpm_project = npm\n";
  std::string key = key_of(with);
  EXPECT_NE(key, key_of(text));
  WriteFile(temporary.path() / "requirements.txt",
            "x==2 --hash=sha256:" + std::string(64, 'a') + "\n");
  std::string pip_changed = key_of(with);
  EXPECT_NE(pip_changed, key);
  WriteFile(temporary.path() / "npm" / "package-lock.json", "{\"lockfileVersion\": 3}\n");
  EXPECT_NE(key_of(with), pip_changed);
  std::filesystem::remove(temporary.path() / "npm" / "package-lock.json");
  auto recipe = ParseRecipe(with, temporary.path());
  ASSERT_TRUE(recipe.ok());
  EXPECT_FALSE(RecipeCacheKey(*recipe, "mmdebstrap 1").ok());
}

TEST(RecipeTest, PythonSiteFilesAreKeyedByContentAndMustBePythonFiles) {
  TemporaryDirectory temporary;
  const std::string text = "suite = bookworm\nvariant = minbase\nmirror = http://m\n";
  WriteFile(temporary.path() / "python" / "hook.pth", "import hook\n");
  WriteFile(temporary.path() / "python" / "hook.py", "x = 1\n");
  auto recipe =
      ParseRecipe(text + "python_site = python/hook.pth python/hook.py\n", temporary.path());
  ASSERT_TRUE(recipe.ok()) << recipe.error().ToString();
  ASSERT_EQ(recipe->python_site.size(), 2u);
  EXPECT_EQ(recipe->python_site[1], temporary.path() / "python" / "hook.py");
  auto before = RecipeCacheKey(*recipe, "mmdebstrap 1");
  ASSERT_TRUE(before.ok());
  WriteFile(temporary.path() / "python" / "hook.py", "x = 2\n");
  auto after = RecipeCacheKey(*recipe, "mmdebstrap 1");
  ASSERT_TRUE(after.ok());
  EXPECT_NE(*before, *after) << "a changed module must make a new tree";
  auto plain = CanonicalRecipe(*ParseRecipe(text, temporary.path()));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->find("python_site"), std::string::npos) << "older recipes keep their keys";
  EXPECT_FALSE(ParseRecipe(text + "python_site = python/hook.sh\n", temporary.path()).ok());
  auto missing = ParseRecipe(text + "python_site = python/missing.py\n", temporary.path());
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(RecipeCacheKey(*missing, "mmdebstrap 1").ok())
      << "a file the recipe names must exist by the time its key is made";
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
