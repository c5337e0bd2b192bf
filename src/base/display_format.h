// The two facts about a display (Result::displays, SPEC §7) that every side
// checks for itself, because none trusts the code that made it: whether its
// MIME type is one a display may name, and a PNG's size by its own header.
// Used by the host (guest/displays.h), the agent and the embedded engine.
//
// Thread-safety: pure functions.
#ifndef PLIMSOLL_BASE_DISPLAY_FORMAT_H_
#define PLIMSOLL_BASE_DISPLAY_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace plimsoll::base {

// The longest MIME type a display may name.
inline constexpr size_t kMaxDisplayMimeBytes = 127;

// "type/subtype": both parts non-empty, lowercase letters, digits and
// ".+-", at most kMaxDisplayMimeBytes in all (no parameters).
bool IsDisplayMime(std::string_view mime);

struct PixelSize {
  int64_t width = 0;
  int64_t height = 0;
};
// The size a PNG's IHDR chunk states (the signature, then IHDR first, each
// side 1 to 2^31-1 as the PNG specification allows); nullopt when `data`
// does not start like a PNG.
std::optional<PixelSize> PngSize(std::string_view data);

}  // namespace plimsoll::base

#endif  // PLIMSOLL_BASE_DISPLAY_FORMAT_H_
