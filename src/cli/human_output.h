// How `plimsoll run` and `plimsoll describe` print for people.
//
// The isolation line is always read from the result (or the evidence), never
// from the command's own idea of what it asked for.
#ifndef PLIMSOLL_CLI_HUMAN_OUTPUT_H_
#define PLIMSOLL_CLI_HUMAN_OUTPUT_H_

#include <optional>
#include <ostream>
#include <string_view>

#include "plimsoll/provider.h"
#include "plimsoll/result.h"

namespace plimsoll::cli {

// provider, isolation (and, when known, `why`: the evidence's one-sentence
// reason for that tier), exit code, timed out, truncated, duration, then the
// outputs (and steps and artifacts for projects).
void PrintResult(const Result& result, std::ostream& out, std::string_view why = {});

// "nothing ran: <reason>: <message>" for refusals; otherwise
// "error (the code may have run): <code>: <message>".
void PrintError(const Error& error, std::ostream& out);

void PrintDescription(const Description& description, const std::optional<Evidence>& evidence,
                      const std::optional<Error>& evidence_error, std::ostream& out);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_HUMAN_OUTPUT_H_
