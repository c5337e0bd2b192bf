// Small helpers the image code shares (image.cc, held_image.cc): reading the
// few-line files of an image directory. Not a public API.
#ifndef PLIMSOLL_IMAGE_IMAGE_FILES_H_
#define PLIMSOLL_IMAGE_IMAGE_FILES_H_

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "plimsoll/error.h"

namespace plimsoll::image::internal {

inline Error EnvironmentRefusal(std::string message) {
  return Refusal(NotDispatched::kEnvironment, std::move(message));
}

// Reads a whole small file; nullopt when it does not exist or cannot be read.
inline std::optional<std::string> ReadSmallFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// `text` without trailing newlines, carriage returns and spaces.
inline std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) {
    text.pop_back();
  }
  return text;
}

}  // namespace plimsoll::image::internal

#endif  // PLIMSOLL_IMAGE_IMAGE_FILES_H_
