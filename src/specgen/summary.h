// An operation's one-line summary for specgen's preamble (docs/specgen.md).
//
// Usage:
//   OneLineSummary("", "Returns a booking.\nMore detail.", "getBooking")  // "Returns a booking."
#ifndef PLIMSOLL_SPECGEN_SUMMARY_H_
#define PLIMSOLL_SPECGEN_SUMMARY_H_

#include <string>
#include <string_view>

namespace plimsoll::specgen {

inline constexpr size_t kSummaryMaxCharacters = 120;

// `summary`, else the first sentence of `description`, else `operation_id`;
// whitespace runs become one space, control characters are dropped (the
// line may be printed inside a YAML comment), and a longer text is cut to
// kSummaryMaxCharacters characters (code points) ending in "...".
std::string OneLineSummary(std::string_view summary, std::string_view description,
                           std::string_view operation_id);

// The same clean-up for any one-line text (a title, a parameter name).
std::string OneLine(std::string_view text);

}  // namespace plimsoll::specgen

#endif  // PLIMSOLL_SPECGEN_SUMMARY_H_
