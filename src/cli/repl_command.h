// `plimsoll repl [--provider P | --daemon URL] [--lang javascript|python]`:
// an interactive prompt backed by a session (docs/sessions.md, docs/cli.md).
//
// The banner names the provider and the session's tier. Each cell is read
// line by line (a continuation prompt while brackets are open or, in
// Python, a block has not been closed by an empty line; repl_input.h), run
// in the session, and its stdout, stderr and printed value are shown as a
// REPL shows them; a cell that restarted the interpreter says so. End of
// input (Ctrl-D) closes the session and prints its call count and last
// record. Line editing is the terminal's own (canonical mode: erase, kill
// word and line); there is no history.
//
// Usage:
//   ReplOptions options{.provider = "embedded", .lang = "javascript"};
//   int status = RunRepl(options, std::cin, std::cout, std::cerr);
#ifndef PLIMSOLL_CLI_REPL_COMMAND_H_
#define PLIMSOLL_CLI_REPL_COMMAND_H_

#include <istream>
#include <ostream>
#include <string>

#include "cli/daemon_command.h"

namespace plimsoll::cli {

struct ReplOptions {
  std::string provider;  // --provider (else $SANDBOX_PROVIDER); unused with a daemon
  std::string runtime;   // --runtime (oci)
  DaemonFlags daemon;    // --daemon: used when daemon.url is set
  std::string lang = "javascript";
  std::string floor;     // --floor: the session's minimum isolation
  int64_t timeout_ms = 0;  // per cell; <= 0: the provider's default
};

// Exit status: 0 once the session is closed at end of input; the refusal or
// error statuses of docs/cli.md when the session cannot be opened.
int RunRepl(const ReplOptions& options, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_REPL_COMMAND_H_
