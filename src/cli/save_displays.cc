#include "cli/save_displays.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include "base/unique_fd.h"

namespace plimsoll::cli {

std::string_view DisplayExtension(std::string_view mime) {
  static constexpr std::pair<std::string_view, std::string_view> kExtensions[] = {
      {"image/png", "png"},  {"image/jpeg", "jpg"},       {"image/svg+xml", "svg"},
      {"text/html", "html"}, {"text/plain", "txt"},       {"text/markdown", "md"},
      {"text/csv", "csv"},   {"application/json", "json"}};
  for (const auto& [type, extension] : kExtensions) {
    if (mime == type) return extension;
  }
  return "bin";
}

Status SaveDisplays(const Result& result, const std::filesystem::path& directory,
                    std::ostream& log) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "Cannot create " + directory.string() + ": " + error.message() + ".");
  }
  for (size_t i = 0; i < result.displays.size(); ++i) {
    const Display& display = result.displays[i];
    const std::filesystem::path file =
        directory / ("display-" + std::to_string(i + 1) + "." +
                     std::string(DisplayExtension(display.mime)));
    base::UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                             0644));
    if (!fd.valid()) {
      return Failure(ErrorCode::kFailedPrecondition,
                     "Cannot write " + file.string() + ": " + std::strerror(errno) + ".");
    }
    size_t written = 0;
    while (written < display.data.size()) {
      ssize_t wrote =
          ::write(fd.get(), display.data.data() + written, display.data.size() - written);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote < 0) {
        return Failure(ErrorCode::kFailedPrecondition,
                       "Cannot write " + file.string() + ": " + std::strerror(errno) + ".");
      }
      written += static_cast<size_t>(wrote);
    }
    log << "saved:      " << file.string() << " (" << display.mime << ")\n";
  }
  return Status::Ok();
}

}  // namespace plimsoll::cli
