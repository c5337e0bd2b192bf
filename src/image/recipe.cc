#include "image/recipe.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "image/image_files.h"
#include "image/manifest.h"

namespace plimsoll::image {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream in{std::string(text)};
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

bool AllOf(std::string_view text, std::string_view allowed_punctuation) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           allowed_punctuation.find(c) != std::string_view::npos;
  });
}

Error Bad(int line, std::string message) {
  return Failure(ErrorCode::kInvalidArgument,
                 "Recipe line " + std::to_string(line) + ": " + std::move(message));
}

Expected<std::string> ReadRecipeFile(const std::filesystem::path& file) {
  std::optional<std::string> text = internal::ReadSmallFile(file);
  if (!text) {
    return Failure(ErrorCode::kNotFound, "Cannot read the image recipe " + file.string() + ".");
  }
  return std::move(*text);
}

// Parses `text` into `recipe`. `including` holds the files whose include led here (a cycle
// or a chain deeper than kMaxRecipeIncludeDepth is refused).
Status ParseInto(Recipe& recipe, std::string_view text, const std::filesystem::path& directory,
                 std::vector<std::filesystem::path>& including) {
  int number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    size_t equals = line.find('=');
    if (equals == std::string_view::npos) return Bad(number, "expected `key = value`.");
    std::string key(Trim(line.substr(0, equals)));
    std::string_view value = Trim(line.substr(equals + 1));
    if (value.empty()) return Bad(number, "`" + key + "` has no value.");

    auto single = [&](std::string& field, std::string_view punctuation) -> Status {
      if (!field.empty()) return Bad(number, "`" + key + "` is given twice.");
      if (!punctuation.empty() && !AllOf(value, punctuation)) {
        return Bad(number,
                   "`" + key + "` has an unexpected character in \"" + std::string(value) + "\".");
      }
      field = value;
      return Status::Ok();
    };
    if (key == "include") {
      std::filesystem::path file = (directory / std::string(value)).lexically_normal();
      if (std::find(including.begin(), including.end(), file) != including.end()) {
        return Bad(number, "`include` of " + file.string() + " makes a cycle.");
      }
      if (static_cast<int>(including.size()) >= kMaxRecipeIncludeDepth) {
        return Bad(number, "includes nest deeper than " + std::to_string(kMaxRecipeIncludeDepth) +
                               " recipes.");
      }
      auto included = ReadRecipeFile(file);
      if (!included.ok()) return Bad(number, included.error().message());
      including.push_back(file);
      Status parsed = ParseInto(recipe, *included, file.parent_path(), including);
      including.pop_back();
      if (!parsed.ok()) return parsed.error().WithContext(file.string());
    } else if (key == "suite") {
      PLIMSOLL_RETURN_IF_ERROR(single(recipe.suite, "-"));
    } else if (key == "variant") {
      PLIMSOLL_RETURN_IF_ERROR(single(recipe.variant, "-"));
    } else if (key == "architecture") {
      PLIMSOLL_RETURN_IF_ERROR(single(recipe.architecture, "-"));
    } else if (key == "mirror") {
      if (value.find_first_of(" \t\"'") != std::string_view::npos) {
        return Bad(number, "the mirror is one URL.");
      }
      PLIMSOLL_RETURN_IF_ERROR(single(recipe.mirror, ""));
    } else if (key == "source_date_epoch") {
      if (!std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return Bad(number, "source_date_epoch is seconds since 1970 (digits only).");
      }
      PLIMSOLL_RETURN_IF_ERROR(single(recipe.source_date_epoch, ""));
    } else if (key == "packages") {
      for (std::string& word : Words(value)) {
        if (!AllOf(word, ".+-"))
          return Bad(number, "\"" + word + "\" is not a Debian package name.");
        recipe.packages.push_back(std::move(word));
      }
    } else if (key == "dpkg_exclude" || key == "dpkg_include") {
      auto& list = key == "dpkg_exclude" ? recipe.dpkg_exclude : recipe.dpkg_include;
      for (std::string& word : Words(value)) {
        if (word.front() != '/')
          return Bad(number, "\"" + word + "\" is not an absolute path pattern.");
        list.push_back(std::move(word));
      }
    } else if (key == "customize_hook") {
      recipe.customize_hooks.push_back(directory / std::string(value));
    } else if (key == "pip_requirements") {
      recipe.pip_requirements.push_back((directory / std::string(value)).lexically_normal());
    } else if (key == "npm_project") {
      recipe.npm_projects.push_back((directory / std::string(value)).lexically_normal());
    } else if (key == "python_site") {
      for (const std::string& word : Words(value)) {
        std::filesystem::path file = (directory / word).lexically_normal();
        std::string extension = file.extension().string();
        if (extension != ".py" && extension != ".pth") {
          return Bad(number, "\"" + word + "\" is not a .py or .pth file.");
        }
        recipe.python_site.push_back(std::move(file));
      }
    } else {
      return Bad(number, "unknown key `" + key + "`.");
    }
  }
  return Status::Ok();
}

// ParseInto, then the keys every recipe needs. `including` starts with the file being read, if any.
Expected<Recipe> ParseComplete(std::string_view text, const std::filesystem::path& directory,
                               std::vector<std::filesystem::path> including) {
  Recipe recipe;
  PLIMSOLL_RETURN_IF_ERROR(ParseInto(recipe, text, directory, including));
  if (recipe.suite.empty() || recipe.variant.empty() || recipe.mirror.empty()) {
    return Failure(ErrorCode::kInvalidArgument, "The recipe needs suite, variant and mirror.");
  }
  return recipe;
}

}  // namespace

Expected<Recipe> ParseRecipe(std::string_view text, const std::filesystem::path& directory) {
  return ParseComplete(text, directory, {});
}

Expected<Recipe> LoadRecipe(const std::filesystem::path& file) {
  auto text = ReadRecipeFile(file);
  if (!text.ok()) return text.error();
  auto recipe = ParseComplete(*text, file.parent_path(), {file.lexically_normal()});
  if (!recipe.ok()) return recipe.error().WithContext(file.string());
  return recipe;
}

Expected<std::string> CanonicalRecipe(const Recipe& recipe) {
  std::string text = "plimsoll-image-recipe-v1\n";
  auto line = [&](std::string_view key, std::string_view value) {
    text += key;
    text += '=';
    text += value;
    text += '\n';
  };
  line("suite", recipe.suite);
  line("variant", recipe.variant);
  line("architecture", recipe.architecture);
  line("mirror", recipe.mirror);
  line("source_date_epoch", recipe.source_date_epoch);
  for (const auto& package : recipe.packages) line("package", package);
  for (const auto& pattern : recipe.dpkg_exclude) line("dpkg_exclude", pattern);
  for (const auto& pattern : recipe.dpkg_include) line("dpkg_include", pattern);
  for (const auto& hook : recipe.customize_hooks) {
    auto digest = Sha256OfFile(hook);
    if (!digest.ok()) return digest.error().WithContext("Cannot read the customize hook");
    line("customize_hook", hook.filename().string() + " " + *digest);
  }
  // Written only when present, so a recipe without them keeps the key it had.
  for (const auto& requirements : recipe.pip_requirements) {
    auto digest = Sha256OfFile(requirements);
    if (!digest.ok()) return digest.error().WithContext("Cannot read the pip requirements");
    line("pip_requirements", requirements.filename().string() + " " + *digest);
  }
  for (const auto& project : recipe.npm_projects) {
    std::string value = project.filename().string();
    for (const char* name : {"package.json", "package-lock.json"}) {
      auto digest = Sha256OfFile(project / name);
      if (!digest.ok())
        return digest.error().WithContext("Cannot read the npm project's " + std::string(name));
      value += " " + *digest;
    }
    line("npm_project", value);
  }
  for (const auto& file : recipe.python_site) {
    auto digest = Sha256OfFile(file);
    if (!digest.ok()) return digest.error().WithContext("Cannot read the python_site file");
    line("python_site", file.filename().string() + " " + *digest);
  }
  return text;
}

Expected<std::string> RecipeCacheKey(const Recipe& recipe, std::string_view tool_version) {
  auto canonical = CanonicalRecipe(recipe);
  if (!canonical.ok()) return canonical.error();
  return Sha256Hex(*canonical + "tool=" + std::string(tool_version) + "\n");
}

std::vector<std::string> MmdebstrapArguments(const Recipe& recipe,
                                             const std::filesystem::path& root) {
  std::vector<std::string> argv = {"mmdebstrap", "--variant=" + recipe.variant};
  if (!recipe.architecture.empty()) argv.push_back("--architecture=" + recipe.architecture);
  if (!recipe.packages.empty()) {
    std::string include = "--include=";
    for (size_t i = 0; i < recipe.packages.size(); ++i) {
      include += (i ? "," : "") + recipe.packages[i];
    }
    argv.push_back(include);
  }
  for (const auto& pattern : recipe.dpkg_exclude)
    argv.push_back("--dpkgopt=path-exclude=" + pattern);
  for (const auto& pattern : recipe.dpkg_include)
    argv.push_back("--dpkgopt=path-include=" + pattern);
  for (const auto& hook : recipe.customize_hooks) {
    // mmdebstrap runs the hook through sh with the root as "$1"; the path is
    // quoted for sh (it comes from our own recipe, but may hold spaces).
    std::string quoted = "'";
    for (char c : hook.string()) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted += "'";
    argv.push_back("--customize-hook=sh " + quoted + " \"$1\"");
  }
  argv.push_back(recipe.suite);
  argv.push_back(root.string());
  argv.push_back(recipe.mirror);
  return argv;
}

}  // namespace plimsoll::image
