#include "specgen/summary.h"

#include <vector>

namespace plimsoll::specgen {
namespace {

bool IsContinuationByte(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

// The first sentence: up to and including the first '.', '!' or '?' that
// ends the text or is followed by a space.
std::string_view FirstSentence(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '.' || c == '!' || c == '?') && (i + 1 == text.size() || text[i + 1] == ' ')) {
      return text.substr(0, i + 1);
    }
  }
  return text;
}

std::string CutToCharacters(const std::string& text, size_t limit) {
  std::vector<size_t> starts;  // byte offset of each code point
  for (size_t i = 0; i < text.size(); ++i) {
    if (!IsContinuationByte(static_cast<unsigned char>(text[i]))) starts.push_back(i);
  }
  if (starts.size() <= limit) return text;
  std::string cut = text.substr(0, starts[limit - 3]);
  while (!cut.empty() && cut.back() == ' ') cut.pop_back();
  return cut + "...";
}

}  // namespace

std::string OneLine(std::string_view text) {
  std::string line;
  bool space = false;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    // YAML 1.1 also breaks lines at NEL (U+0085), U+2028 and U+2029.
    size_t unicode_break =
        text.substr(i).starts_with("\xC2\x85") ? 2
        : text.substr(i).starts_with("\xE2\x80\xA8") || text.substr(i).starts_with("\xE2\x80\xA9")
            ? 3
            : 0;
    if (unicode_break > 0 || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
        c == '\v') {
      space = !line.empty();
      if (unicode_break > 0) i += unicode_break - 1;
      continue;
    }
    if (c < 0x20 || c == 0x7f) continue;
    if (space) line += ' ';
    space = false;
    line += static_cast<char>(c);
  }
  return line;
}

std::string OneLineSummary(std::string_view summary, std::string_view description,
                           std::string_view operation_id) {
  std::string line = OneLine(summary);
  if (line.empty()) line = std::string(FirstSentence(OneLine(description)));
  if (line.empty()) line = OneLine(operation_id);
  return CutToCharacters(line, kSummaryMaxCharacters);
}

}  // namespace plimsoll::specgen
