// `plimsoll callers create|list|rotate|revoke`: the daemon's caller store from
// the command line (docs/callers.md).
//
//   plimsoll callers create NAME [--scope SCOPE ...] [--max-concurrent N]
//                               [--rate-per-min N] [--store PATH]
//   plimsoll callers list [--json] [--store PATH]
//   plimsoll callers rotate NAME [--store PATH]
//   plimsoll callers revoke NAME [--store PATH]
//
// `create` and `rotate` print the new token, alone, on stdout (so that
// `TOKEN=$(plimsoll callers create ci)` works) and explain on stderr; the
// token exists nowhere else. `list` never shows tokens or digests.
// Exit statuses: 0 done, 2 bad command line or invalid value, 1 any other
// failure (unknown caller, unusable store, ...).
//
// Usage (in cli.cc):
//   CallersOptions callers;
//   CLI::App* callers_command = AddCallersCommand(app, callers);
//   ...
//   if (callers_command->parsed()) return RunCallersCommand(callers, out, err);
#ifndef PLIMSOLL_CLI_CALLERS_COMMAND_H_
#define PLIMSOLL_CLI_CALLERS_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace plimsoll::cli {

struct CallersOptions {
  CLI::App* create = nullptr;
  CLI::App* list = nullptr;
  CLI::App* rotate = nullptr;
  CLI::App* revoke = nullptr;
  std::string store;                // empty: the default path (auth/store_file.h)
  std::string name;                 // create, rotate, revoke
  std::vector<std::string> scopes;  // create; empty: the default scopes
  int64_t max_concurrent = 0;       // create; set only when the option was given
  int64_t rate_per_min = 0;
  CLI::Option* max_concurrent_option = nullptr;
  CLI::Option* rate_per_min_option = nullptr;
  bool json = false;  // list
};

// Adds the `callers` subcommand (with create, list, rotate, revoke) to `app`.
CLI::App* AddCallersCommand(CLI::App& app, CallersOptions& options);

// Runs the parsed subcommand; returns the exit status.
int RunCallersCommand(const CallersOptions& options, std::ostream& out, std::ostream& err);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_CALLERS_COMMAND_H_
