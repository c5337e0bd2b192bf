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
//            never read); displays are taken in the byte order of the names;
//            a file named kDisplaysTruncatedName instead says the writer
//            dropped some over the caps
//   content  the MIME type (IsDisplayMime), one "\n", then the raw bytes
//
// After the steps (or the cell) the agent reads the directory
// (agent/display_collector.h), empties it, and carries the displays in the
// sealed report. The host trusts none of it: CheckDisplays bounds what a
// report may carry, and MeasureDisplays (plimsoll/result.h) sets each
// display's width and height from the PNG's own header.
//
// Thread-safety: pure functions.
#ifndef PLIMSOLL_GUEST_DISPLAYS_H_
#define PLIMSOLL_GUEST_DISPLAYS_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/display_format.h"
#include "plimsoll/error.h"
#include "plimsoll/result.h"

namespace plimsoll::guest {

inline constexpr const char* kDisplaysDirectory = "/tmp/.plimsoll-displays";
inline constexpr const char* kDisplaysEnvironment = "PLIMSOLL_DISPLAYS";
// A file of this name in the directory says its writer dropped displays
// over the caps (displays_truncated); it is not a display itself.
inline constexpr const char* kDisplaysTruncatedName = "truncated";

// The MIME check and the PNG size are base/display_format.h's.
using base::IsDisplayMime;
using base::kMaxDisplayMimeBytes;
using base::PngSize;

// kDataLoss when the displays are more than kMaxDisplays, larger than
// kMaxDisplayBytes together, or one names a malformed MIME type.
Status CheckDisplays(const std::vector<Display>& displays);

}  // namespace plimsoll::guest

#endif  // PLIMSOLL_GUEST_DISPLAYS_H_
