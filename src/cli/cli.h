// The `plimsoll` command line, built on the library (include/plimsoll/).
//
//   plimsoll run [--provider NAME] [--floor TIER] [--timeout MS]
//                [--lang javascript|python] [--json] (-e CODE | FILE)
//   plimsoll run --project DIR --step 'argv...' [--step ...] [--artifact PATH]
//   plimsoll run --daemon URL [--token-file PATH] [--allow-cleartext] [run flags]
//   plimsoll describe [--provider NAME | --daemon URL [--token-file PATH]]
//   plimsoll version
//
// Exit statuses are in cli/exit_status.h and docs/cli.md.
//
// Usage (tests call it directly):
//   std::ostringstream out, err;
//   int status = plimsoll::cli::Main({"plimsoll", "run", "-e", "1"}, out, err);
#ifndef PLIMSOLL_CLI_CLI_H_
#define PLIMSOLL_CLI_CLI_H_

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace plimsoll::cli {

int Main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// The same, reading `plimsoll repl`'s input from `in` (the other one reads
// std::cin).
int Main(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
         std::ostream& err);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_CLI_H_
