// Splits a `--step` argument into an argv list, without a shell.
//
// Accepts either a JSON array of strings (`["python3", "-c", "print(1)"]`)
// or words separated by spaces, where single quotes keep text literal,
// double quotes group words, and a backslash escapes the next character.
// Nothing is expanded: no variables, globs or substitutions.
//
// Usage:
//   auto argv = plimsoll::cli::SplitArgv("python3 -c 'print(1)'");
//   // {"python3", "-c", "print(1)"}
#ifndef PLIMSOLL_CLI_ARGV_SPLIT_H_
#define PLIMSOLL_CLI_ARGV_SPLIT_H_

#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::cli {

Expected<std::vector<std::string>> SplitArgv(std::string_view text);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_ARGV_SPLIT_H_
