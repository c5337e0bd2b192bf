#include "base/display_format.h"

namespace plimsoll::base {
namespace {

bool IsMimeCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-';
}

uint32_t BigEndian32(std::string_view bytes) {
  return static_cast<uint32_t>(static_cast<unsigned char>(bytes[0])) << 24 |
         static_cast<uint32_t>(static_cast<unsigned char>(bytes[1])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(bytes[2])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(bytes[3]));
}

}  // namespace

bool IsDisplayMime(std::string_view mime) {
  if (mime.empty() || mime.size() > kMaxDisplayMimeBytes) return false;
  size_t slash = mime.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == mime.size()) return false;
  for (size_t i = 0; i < mime.size(); ++i) {
    if (i != slash && !IsMimeCharacter(mime[i])) return false;
  }
  return true;
}

std::optional<PixelSize> PngSize(std::string_view data) {
  // 8-byte signature, then the IHDR chunk: length 13, "IHDR", width, height.
  constexpr std::string_view kSignature = "\x89PNG\r\n\x1a\n";
  if (data.size() < 8 + 8 + 8 || data.substr(0, 8) != kSignature) return std::nullopt;
  if (BigEndian32(data.substr(8, 4)) != 13 || data.substr(12, 4) != "IHDR") return std::nullopt;
  uint32_t width = BigEndian32(data.substr(16, 4));
  uint32_t height = BigEndian32(data.substr(20, 4));
  constexpr uint32_t kLargest = 0x7fffffffu;
  if (width == 0 || height == 0 || width > kLargest || height > kLargest) return std::nullopt;
  return PixelSize{width, height};
}

}  // namespace plimsoll::base
