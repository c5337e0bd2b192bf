// The exit statuses of the `plimsoll` command (documented in docs/cli.md).
//
// A refusal (nothing ran) has its own status so that scripts can tell it
// apart from a guest that ran and failed.
#ifndef PLIMSOLL_CLI_EXIT_STATUS_H_
#define PLIMSOLL_CLI_EXIT_STATUS_H_

namespace plimsoll::cli {

inline constexpr int kExitRanOk = 0;       // the code ran and exited 0
inline constexpr int kExitRanFailed = 1;   // the code ran: non-zero exit or timed out
inline constexpr int kExitUsage = 2;       // bad command line; nothing ran
inline constexpr int kExitNothingRan = 3;  // a refusal: nothing ran (reason printed)
inline constexpr int kExitMayHaveRun = 4;  // an error after dispatch: the code may have run

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_EXIT_STATUS_H_
