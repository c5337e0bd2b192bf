// Rich outputs (Result::displays, SPEC §7) between the guest and the host.
//
// Inside the sandbox, code does not talk to the agent: it writes files. The
// agent makes kDisplaysDirectory (owned by the guest user, mode 0700) before
// a job's steps and names it to every step in kDisplaysEnvironment; the
// image's Python hook (image/variants/data/python/plimsoll_display.py) and
// qjs's display() write one file per display there:
//
//   name     any name not starting with "." (a writer renames a finished
//            file into place from a dot-name, so a half-written file is
//            never read); displays are taken in the byte order of the names
//   content  the MIME type (IsDisplayMime), one "\n", then the raw bytes
//
// After the steps (or the cell) the agent reads the directory
// (agent/display_collector.h), empties it, and carries the displays in the
// sealed report. The host trusts none of it: CheckDisplays bounds what a
// report may carry, and MeasureDisplays sets each display's width and height
// from the PNG's own header (0 for anything that is not a PNG).
//
// Thread-safety: pure functions.
#ifndef PLIMSOLL_GUEST_DISPLAYS_H_
#define PLIMSOLL_GUEST_DISPLAYS_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"
#include "plimsoll/result.h"

namespace plimsoll::guest {

inline constexpr const char* kDisplaysDirectory = "/tmp/.plimsoll-displays";
inline constexpr const char* kDisplaysEnvironment = "PLIMSOLL_DISPLAYS";
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

// kDataLoss when the displays are more than kMaxDisplays, larger than
// kMaxDisplayBytes together, or one names a malformed MIME type.
Status CheckDisplays(const std::vector<Display>& displays);

// Sets width and height from each image/png display's header, 0 and 0 for
// every other display (and for a "PNG" whose header is not one).
void MeasureDisplays(std::vector<Display>& displays);

}  // namespace plimsoll::guest

#endif  // PLIMSOLL_GUEST_DISPLAYS_H_
