// Small helpers the image code shares (image.cc, held_image.cc, recipe.cc,
// builder.cc, language_packages.cc): reading a whole file. Not a public API.
#ifndef PLIMSOLL_IMAGE_IMAGE_FILES_H_
#define PLIMSOLL_IMAGE_IMAGE_FILES_H_

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "plimsoll/error.h"

namespace plimsoll::image::internal {

inline Error EnvironmentRefusal(std::string message) {
  return Refusal(NotDispatched::kEnvironment, std::move(message));
}

// Reads a whole file; nullopt when it does not exist or cannot be read. (A
// read loop, not istreambuf_iterator, whose inlined code makes g++ 12 -O2
// warn -Wnull-dereference at every caller.)
inline std::optional<std::string> ReadSmallFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::string content;
  char buffer[16384];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    content.append(buffer, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return std::nullopt;
  return content;
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
