// `plimsoll session open|run|close|list --daemon URL`: a daemon's session
// (SPEC §9, docs/sessions.md) driven one command at a time, for scripts.
//
//   id=$(plimsoll session open --daemon URL [--floor T] [--lifetime-ms N]
//                                           [--idle-timeout-ms N])
//   plimsoll session run --daemon URL "$id" [--lang python] -e 'x = 41'
//   plimsoll session run --daemon URL "$id" --lang python -e 'x + 1'   # 42
//   plimsoll session close --daemon URL "$id"
//   plimsoll session list
//
// Each call's record is checked as `plimsoll run --daemon` checks one, and
// against the session's chain (the record names this session, carries the
// next sequence and links to the previous record; a gap, a reorder or a
// foreign session is data_loss). Commands are separate processes, so the
// chain lives in a file per session under the state directory
// (--state-dir, else $PLIMSOLL_STATE_DIR, else $XDG_STATE_HOME/plimsoll,
// else ~/.local/state/plimsoll): sessions/<SHA-256 of the ID>, mode 0600,
// holding the daemon's URL, the last sequence, the last record's digest and
// the floor `open` asked (--floor), never the ID (a bearer secret). `run`
// gives that floor to its Client (Client::SetSessionFloor), so every cell's
// answer is held to it as within one process: a tier below it is data_loss,
// exit 4, and a floor in the file that is not a tier makes the file damaged.
// `close` checks the daemon's close against it and removes it; `list` shows
// the sessions this user opened with the CLI and has not closed (by the
// digest of their ID).
//
// Output and exit statuses as `plimsoll run` (docs/cli.md); `open` prints
// the ID alone on stdout and the provider and tier on stderr.
#ifndef PLIMSOLL_CLI_SESSION_COMMAND_H_
#define PLIMSOLL_CLI_SESSION_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "cli/daemon_command.h"

namespace plimsoll::cli {

struct SessionCommandOptions {
  std::string action;  // "open", "run", "close" or "list"
  DaemonFlags daemon;
  std::string id;         // run, close
  std::string state_dir;  // --state-dir
  // open
  std::string floor;
  std::string image;  // --image NAME: one of the daemon's images
  int64_t lifetime_ms = 0;
  int64_t idle_timeout_ms = 0;
  // run
  std::string lang = "javascript";
  std::string code;  // -e
  std::string file;  // or a file holding the cell
  int64_t timeout_ms = 0;
  bool json = false;
};

int RunSessionCommand(const SessionCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_SESSION_COMMAND_H_
