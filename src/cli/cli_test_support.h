// What the CLI's tests share: run cli::Main in-process and keep its exit
// status and both output streams.
#ifndef PLIMSOLL_CLI_CLI_TEST_SUPPORT_H_
#define PLIMSOLL_CLI_CLI_TEST_SUPPORT_H_

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace plimsoll::cli {

struct Outcome {
  int status;
  std::string out;
  std::string err;
};

// `plimsoll <args...>`.
inline Outcome Invoke(std::vector<std::string> args) {
  args.insert(args.begin(), "plimsoll");
  std::ostringstream out;
  std::ostringstream err;
  int status = Main(args, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_CLI_TEST_SUPPORT_H_
