// A guest image recipe (image/variants/NAME/recipe): what the base tree is made of.
//
// The file is `key = value` lines; `#` starts a comment. Keys:
//   include          another recipe (a path relative to this one), read in its place: its
//                    settings become this recipe's (a single key given by both is an error)
//   suite, variant, architecture, mirror, source_date_epoch   (once each)
//   packages, dpkg_exclude, dpkg_include   (space-separated lists; may repeat)
//   customize_hook   (a script path relative to the recipe; may repeat)
//   pip_requirements (a pip requirements file relative to the recipe, every line pinned with
//                    `==` and `--hash=sha256:`; wheels only; may repeat)
//   npm_project      (a directory relative to the recipe holding package.json and
//                    package-lock.json; `npm ci` of it lands on the guest node's global path;
//                    may repeat)
//   python_site      (.py and .pth files relative to the recipe, space-separated; may repeat:
//                    copied into the tree's /usr/local/lib/python3.X/dist-packages and compiled,
//                    e.g. the displays hook of image/variants/data/python)
// Unknown keys are errors, so a typo never silently changes the image. Every file a recipe
// names is part of its cache key by content.
//
// Usage:
//   auto recipe = image::LoadRecipe("image/variants/base/recipe");
//   auto key = image::RecipeCacheKey(*recipe, "mmdebstrap 1.3.5");
//   std::vector<std::string> argv = image::MmdebstrapArguments(*recipe, root);
#ifndef PLIMSOLL_IMAGE_RECIPE_H_
#define PLIMSOLL_IMAGE_RECIPE_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::image {

struct Recipe {
  std::string suite;
  std::string variant;
  std::string architecture;
  std::string mirror;
  std::string source_date_epoch;
  std::vector<std::string> packages;
  std::vector<std::string> dpkg_exclude;
  std::vector<std::string> dpkg_include;
  std::vector<std::filesystem::path> customize_hooks;   // absolute paths
  std::vector<std::filesystem::path> pip_requirements;  // absolute paths
  std::vector<std::filesystem::path> npm_projects;      // absolute paths (directories)
  std::vector<std::filesystem::path> python_site;       // absolute paths (.py and .pth files)
};

// How deep `include` may nest (a cycle is refused before that).
inline constexpr int kMaxRecipeIncludeDepth = 4;

// Parses recipe text; hook paths and includes are resolved against `directory`.
Expected<Recipe> ParseRecipe(std::string_view text, const std::filesystem::path& directory);
Expected<Recipe> LoadRecipe(const std::filesystem::path& file);

// A canonical text of the recipe's settings (comments and spacing do not
// matter), with each hook's content digest.
Expected<std::string> CanonicalRecipe(const Recipe& recipe);

// The cache key of the base tree: SHA-256 (hex) of the canonical recipe and
// the bootstrap tool's version.
Expected<std::string> RecipeCacheKey(const Recipe& recipe, std::string_view tool_version);

// mmdebstrap's argv (without the environment: SOURCE_DATE_EPOCH is set by
// the caller) to bootstrap `root`, which must not exist or be empty.
std::vector<std::string> MmdebstrapArguments(const Recipe& recipe,
                                             const std::filesystem::path& root);

}  // namespace plimsoll::image

#endif  // PLIMSOLL_IMAGE_RECIPE_H_
