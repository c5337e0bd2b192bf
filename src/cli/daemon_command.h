// `plimsoll run --daemon URL` and `plimsoll describe --daemon URL`: the same
// commands, sent to a plimsolld through plimsoll::Client (docs/client.md)
// instead of an in-process provider. The request is built exactly as the
// in-process run builds it, and the output and exit statuses are the same
// (docs/cli.md), so scripts cannot tell the paths apart except by what the
// client adds: request-ID and record checks, which turn an answer that
// cannot be believed into "error (the code may have run): data_loss: ...".
//
// Usage:
//   DaemonFlags daemon{.url = "http://127.0.0.1:8470"};
//   int status = RunOnDaemon(run_options, daemon, std::cout, std::cerr);
#ifndef PLIMSOLL_CLI_DAEMON_COMMAND_H_
#define PLIMSOLL_CLI_DAEMON_COMMAND_H_

#include <ostream>
#include <string>

#include "cli/run_request.h"
#include "plimsoll/client.h"

namespace plimsoll::cli {

struct DaemonFlags {
  std::string url;               // --daemon
  std::string token_file;        // --token-file (else $PLIMSOLL_TOKEN)
  bool allow_cleartext = false;  // --allow-cleartext
};

// A client for the daemon of `daemon` (the token from --token-file or
// $PLIMSOLL_TOKEN).
Expected<Client> OpenDaemonClient(const DaemonFlags& daemon);

int RunOnDaemon(const RunOptions& options, const DaemonFlags& daemon, std::ostream& out,
                std::ostream& err);

int DescribeOnDaemon(const DaemonFlags& daemon, std::ostream& out, std::ostream& err);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_DAEMON_COMMAND_H_
