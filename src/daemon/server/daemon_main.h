// plimsolld from argv to exit status, in the startup order of SPEC §4:
//   1. parse every setting (flags over environment); warn about unknown
//      PLIMSOLL_* / SANDBOX_* variables; check the rules that combine them
//      (--dev needs loopback; a real provider needs callers or --dev); warn
//      about non-loopback listeners without TLS (outside hardened mode);
//   2. load callers (--callers / PLIMSOLL_CALLERS, else the default store
//      when it exists; not with --dev), open the audit log (--audit-log) and
//      the provider (its limits carry --run-ceiling-ms); with at least
//      one active caller every /v1 request is authenticated against the
//      store (read per request: rotation and revocation apply at once);
//      In hardened mode (PLIMSOLL_HARDENED=1, hardened.h) every safeguard is
//      then checked against the provider's claimed tier, and all violations
//      are listed at once (exit 2);
//   3. load TLS (--tls-cert, --tls-key; unusable files: exit 2) and bind
//      every listener (so a taken port fails before any slow work);
//   4. provider Reconcile (leftovers of a crashed predecessor), then
//      Preflight + SmokeTest bounded by --evidence-budget-ms; a sandbox that
//      cannot be confirmed stops the start;
//   5. check SANDBOX_MIN_ISOLATION against the evidence; in hardened mode,
//      check the tier the evidence proved (kernel or vm; exit 2 if lower);
//   6. start the run workers, the evidence monitor (--evidence-interval-ms)
//      and the event loop; print the bound addresses
//      on stdout ("plimsolld: serving api=ADDR:PORT metrics=ADDR:PORT");
//   7. wait for SIGTERM or SIGINT, then drain (stop accepting, finish
//      in-flight requests up to --drain-timeout-ms) and exit 0.
// Exit statuses: 0 after a drain (or --help); 2 bad settings; 1 anything
// else that stops the start.
//
// Usage (src/exe/plimsolld_main.cc):
//   return plimsoll::daemon::DaemonMain(args, plimsoll::daemon::CurrentEnvironment(),
//                                       std::cout, std::cerr);
#ifndef PLIMSOLL_DAEMON_SERVER_DAEMON_MAIN_H_
#define PLIMSOLL_DAEMON_SERVER_DAEMON_MAIN_H_

#include <ostream>
#include <string>
#include <vector>

#include "daemon/server/settings.h"

namespace plimsoll::daemon {

inline constexpr int kExitStartFailed = 1;
inline constexpr int kExitBadSettings = 2;

// Blocks SIGTERM, SIGINT (and ignores SIGPIPE) in the calling thread; must be
// called before any other thread starts, so every thread inherits the mask
// and the signals are taken only by the waiting thread.
void BlockStopSignals();

int DaemonMain(const std::vector<std::string>& args, const Environment& environment,
               std::ostream& out, std::ostream& err);

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_DAEMON_MAIN_H_
