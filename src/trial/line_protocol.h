// The controller's line protocol (SPEC §10, docs/exams.md): pure functions,
// no I/O.
//
// Each tick the runner writes the plant's state as one line: every value as
// the shortest decimal that reads back to the same double (std::to_chars),
// separated by single spaces, ended by '\n'. The controller answers one line
// with exactly the plant's input count of numbers: decimal floating point as
// std::from_chars reads it (no leading '+', no hex), separated by spaces or
// tabs (a trailing '\r' is tolerated), at most kAnswerLineCap bytes.
//
// Usage:
//   std::string line = FormatStateLine(state);            // "0 0 0.05 0\n"
//   AnswerParse answer = ParseAnswerLine("1.5", 1, inputs);
//   if (answer.verdict != AnswerVerdict::kOk) end the trial;
//
// Thread-safety: pure functions.
#ifndef PLIMSOLL_TRIAL_LINE_PROTOCOL_H_
#define PLIMSOLL_TRIAL_LINE_PROTOCOL_H_

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace plimsoll::trial {

// The longest answer line the runner accepts, newline included.
inline constexpr size_t kAnswerLineCap = 4096;

// The state line, '\n' included. Non-finite values never reach it (a plant
// fails on a non-finite state) but would be written as "nan"/"inf".
std::string FormatStateLine(std::span<const double> state);

enum class AnswerVerdict {
  kOk,
  kMalformed,  // not exactly `count` well-formed numbers
  kNonFinite,  // well-formed, but NaN, ±infinity, or too large for a double
};

struct AnswerParse {
  AnswerVerdict verdict = AnswerVerdict::kOk;
  std::string detail;  // a whole sentence when not kOk
};

// Parses one answer line (without its '\n'). On kOk, `inputs` (exactly
// `count` values) holds the numbers. A count mismatch or garbage is
// kMalformed even if some token is non-finite; "nan", "inf", "infinity"
// (any case) and numbers that overflow a double are kNonFinite; numbers
// that underflow (1e-400) are kMalformed.
AnswerParse ParseAnswerLine(std::string_view line, size_t count, std::span<double> inputs);

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_LINE_PROTOCOL_H_
