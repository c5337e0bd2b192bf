// Where `plimsoll run|describe --daemon` finds its bearer token:
// `--token-file PATH` first, else the PLIMSOLL_TOKEN environment variable,
// else none. Never from a flag's value: command lines are visible to every
// user through ps and /proc.
//
// Surrounding whitespace (the newline `plimsoll callers create > file`
// leaves) is removed.
//
// Usage:
//   Expected<std::string> token = ReadBearerToken(flags.token_file, std::getenv("PLIMSOLL_TOKEN"));
#ifndef PLIMSOLL_CLI_TOKEN_SOURCE_H_
#define PLIMSOLL_CLI_TOKEN_SOURCE_H_

#include <string>

#include "plimsoll/error.h"

namespace plimsoll::cli {

inline constexpr char kTokenVariable[] = "PLIMSOLL_TOKEN";

// "" when neither source gives a token. An unreadable or empty token file is
// Refusal(kRequest). `environment_value` may be null.
Expected<std::string> ReadBearerToken(const std::string& token_file, const char* environment_value);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_TOKEN_SOURCE_H_
