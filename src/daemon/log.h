// The daemon's operator log: one line per event on a stream (stderr in
// plimsolld, a string stream in tests).
//
// Lines are "plimsolld: <level>: <message>". Details of internal errors go
// here and never to callers (SPEC §4). Audit lines (server/audit.h) come here
// as "plimsolld: audit: {json}" unless --audit-log names a file of their own.
//
// One event is one line whatever its message holds: messages carry text from
// runtimes, consoles, guests and clients (trace IDs, header values), so
// EscapeLogText is applied to every message before it is written. A reader
// can then split the log on '\n' and no message can forge a line, move a
// terminal's cursor or recolour it.
//
// Thread-safety: every method may be called from any thread.
//
// Usage:
//   plimsoll::daemon::Log log(std::cerr);
//   log.Warning("SANDBOX_FOO is not a known variable; it is ignored.");
#ifndef PLIMSOLL_DAEMON_LOG_H_
#define PLIMSOLL_DAEMON_LOG_H_

#include <mutex>
#include <ostream>
#include <string>
#include <string_view>

namespace plimsoll::daemon {

// `text` with everything that is not printable made visible: \n, \r and \t
// as those two-character escapes, other C0 controls, DEL and bytes that are
// not part of valid UTF-8 as \xHH, and the C1 controls and the Unicode line
// and paragraph separators (U+0080..U+009F, U+2028, U+2029) as \u{XXXX}.
// Printable ASCII and other valid UTF-8 pass unchanged, backslashes
// included: the escapes are for reading, not for reversing.
std::string EscapeLogText(std::string_view text);

class Log {
 public:
  // `out` must outlive the Log.
  explicit Log(std::ostream& out) : out_(out) {}

  void Info(std::string_view message) { Write("info", message); }
  void Warning(std::string_view message) { Write("warning", message); }
  void Error(std::string_view message) { Write("error", message); }
  // One audit line (a JSON object); see server/audit.h.
  void Audit(std::string_view json_line) { Write("audit", json_line); }

 private:
  void Write(std::string_view level, std::string_view message);

  std::mutex mutex_;
  std::ostream& out_;
};

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_LOG_H_
