#include "cli/project_loader.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <system_error>

namespace plimsoll::cli {
namespace {

Error Bad(std::string message) {
  return Refusal(NotDispatched::kRequest, std::move(message));
}

}  // namespace

Expected<std::vector<ProjectFile>> LoadProjectFiles(const std::filesystem::path& directory,
                                                    const Limits& limits) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    return Bad("--project " + directory.string() + " is not a directory.");
  }
  std::vector<fs::path> paths;
  fs::recursive_directory_iterator it(directory, fs::directory_options::none, error);
  if (error) return Bad("Cannot read " + directory.string() + ": " + error.message() + ".");
  for (; it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (error) return Bad("Cannot read " + directory.string() + ": " + error.message() + ".");
    fs::file_status status = it->symlink_status(error);
    if (fs::is_directory(status)) continue;
    fs::path relative = it->path().lexically_relative(directory);
    if (fs::is_symlink(status)) {
      return Bad(relative.string() +
                 " in the project is a symbolic link; send its target as a file.");
    }
    if (!fs::is_regular_file(status)) {
      return Bad(relative.string() + " in the project is not a regular file.");
    }
    paths.push_back(relative);
    if (static_cast<int64_t>(paths.size()) > limits.max_project_files) {
      return Bad("The project directory has more than " + std::to_string(limits.max_project_files) +
                 " files.");
    }
  }
  std::sort(paths.begin(), paths.end());

  std::vector<ProjectFile> files;
  int64_t total = 0;
  for (const fs::path& relative : paths) {
    auto size = fs::file_size(directory / relative, error);
    if (error) return Bad("Cannot read " + relative.string() + ": " + error.message() + ".");
    total += static_cast<int64_t>(size);
    if (total > limits.max_project_bytes) {
      return Bad("The project directory holds more than " +
                 std::to_string(limits.max_project_bytes) + " bytes.");
    }
    std::ifstream in(directory / relative, std::ios::binary);
    if (!in) return Bad("Cannot open " + relative.string() + ".");
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    files.push_back({relative.generic_string(), std::move(content)});
  }
  return files;
}

}  // namespace plimsoll::cli
