#include "trial/line_protocol.h"

#include <charconv>
#include <cmath>
#include <system_error>
#include <vector>

namespace plimsoll::trial {

namespace {

bool IsSeparator(char c) {
  return c == ' ' || c == '\t';
}

// Whether a token that from_chars found out of range has a negative
// exponent (an underflow, not an overflow).
bool Underflows(std::string_view token) {
  const size_t e = token.find_first_of("eE");
  return e != std::string_view::npos && e + 1 < token.size() && token[e + 1] == '-';
}

}  // namespace

std::string FormatStateLine(std::span<const double> state) {
  std::string line;
  line.reserve(state.size() * 25);
  char text[64];
  for (size_t i = 0; i < state.size(); ++i) {
    if (i != 0) line += ' ';
    const auto [end, error] = std::to_chars(text, text + sizeof text, state[i]);
    // 64 bytes always hold a shortest double (at most 24 characters).
    if (error == std::errc()) line.append(text, end);
  }
  line += '\n';
  return line;
}

AnswerParse ParseAnswerLine(std::string_view line, size_t count, std::span<double> inputs) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string_view> tokens;
  size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && IsSeparator(line[at])) ++at;
    const size_t start = at;
    while (at < line.size() && !IsSeparator(line[at])) ++at;
    if (at > start) tokens.push_back(line.substr(start, at - start));
  }
  if (tokens.size() != count) {
    return {AnswerVerdict::kMalformed, "The answer has " + std::to_string(tokens.size()) +
                                           " numbers; the plant takes " + std::to_string(count) +
                                           "."};
  }
  bool non_finite = false;
  for (size_t i = 0; i < count; ++i) {
    const std::string_view token = tokens[i];
    double value = 0;
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
    const bool whole = end == token.data() + token.size();
    if (error == std::errc::result_out_of_range && whole && !Underflows(token)) {
      non_finite = true;
      value = HUGE_VAL;
    } else if (error != std::errc() || !whole) {
      return {AnswerVerdict::kMalformed,
              "Answer value " + std::to_string(i + 1) + " is not a number a double can hold."};
    }
    if (!std::isfinite(value)) non_finite = true;
    inputs[i] = value;
  }
  if (non_finite) {
    return {AnswerVerdict::kNonFinite, "The answer holds a value that is not a finite number."};
  }
  return {};
}

}  // namespace plimsoll::trial
