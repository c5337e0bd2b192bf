// The guest image recipe (image/recipe): what mmdebstrap bootstraps.
//
// The file is `key = value` lines; `#` starts a comment. Keys:
//   suite, variant, architecture, mirror, source_date_epoch   (once each)
//   packages, dpkg_exclude, dpkg_include   (space-separated lists; may repeat)
//   customize_hook   (a script path relative to the recipe; may repeat)
// Unknown keys are errors, so a typo never silently changes the image.
//
// Usage:
//   auto recipe = image::LoadRecipe("image/recipe");
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
  std::vector<std::filesystem::path> customize_hooks;  // absolute paths
};

// Parses recipe text; hook paths are resolved against `directory`.
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
