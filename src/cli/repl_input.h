// How `plimsoll repl` knows that what was typed so far is not a whole cell
// yet: brackets still open (outside strings and comments), a line ending in
// a backslash, or (Python) a block opened by a line ending in ':' that no
// empty line has closed. Pure functions, so the rules are unit-tested.
#ifndef PLIMSOLL_CLI_REPL_INPUT_H_
#define PLIMSOLL_CLI_REPL_INPUT_H_

#include <string_view>

namespace plimsoll::cli {

// Whether `cell` (the lines typed so far, joined with '\n') needs another
// line. `language` is "javascript" or "python".
bool CellNeedsMoreInput(std::string_view cell, std::string_view language);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_REPL_INPUT_H_
