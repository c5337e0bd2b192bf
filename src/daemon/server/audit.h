// The audit log: one JSON line per answered API call (SPEC §4 "Every run
// writes one structured audit log line"; docs/daemon.md "Audit log").
//
// A line says who called what and what came of it: time, request ID (only
// the well-formed echoable one), method, route (the pattern, e.g.
// "/v1/sessions/{id}/runs", never the concrete path), HTTP status, caller
// name, the not-dispatched reason, the error ID of an internal error, and
// the answer's duration. Run requests add a "run" object: payload kind and
// size in bytes, provider, tier, exit code, timed out, run duration, broker
// calls and trace ID. A line never holds code, file contents, outputs,
// tokens, the Authorization header or session IDs: nothing here reads them.
//
// Where lines go: `--audit-log PATH` appends them to a file (opened
// O_APPEND, created 0600, existing permissions kept); without it they go to
// the operator log as "plimsolld: audit: {…}".
//
// Thread-safety: Write may be called from any thread; each line is written
// whole, under a lock.
//
// Usage:
//   auto audit = AuditLog::OpenFile("/var/log/plimsoll/audit.jsonl");
//   if (!audit.ok()) ...                 // the message names the path
//   (*audit)->Write({.time = now, .method = "POST", .route = "/v1/runs", ...});
#ifndef PLIMSOLL_DAEMON_SERVER_AUDIT_H_
#define PLIMSOLL_DAEMON_SERVER_AUDIT_H_

#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/http/answer.h"
#include "daemon/http/connection.h"
#include "daemon/log.h"
#include "plimsoll/error.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"

namespace plimsoll::daemon {

// One answered call, as the audit log sees it. Views must stay valid for the
// call to Write / FormatAuditLine.
struct AuditEntry {
  std::chrono::system_clock::time_point time{};
  std::string_view request_id{};  // the echoed ID; "" when none
  std::string_view method{};      // a known HTTP verb; "" when the header was not read
  std::string_view route{};       // the matched route pattern; "" when none matched
  unsigned status = 0;
  std::string_view caller{};  // the authenticated caller's name; "" when none
  std::optional<NotDispatched> not_dispatched{};
  std::string_view error_id{};  // Plimsoll-Error-Id of an internal error; "" when none
  std::chrono::nanoseconds duration{};
  // Members the handler added (http::Answer::audit_details, e.g. {"run":
  // RunAuditFields(...)}), or null. They never replace the fields above.
  const nlohmann::ordered_json* details = nullptr;
};

// The entry of one answer of the API listener (http::ConnectionEnvironment's
// on_answer); it views into both arguments. The duration runs from the
// request's first byte to `facts` being reported, just before the write.
AuditEntry AuditEntryFor(const http::Answer& answer, const http::AnswerContext& facts,
                         std::chrono::system_clock::time_point now);

// The line for `entry`: one JSON object, no newline, printable ASCII only
// (anything else in a string is a \u escape). Strings that are not valid
// UTF-8 are written with replacement characters, never rejected.
std::string FormatAuditLine(const AuditEntry& entry);

// The "run" object of a run request: kind, payload_bytes (code, or the sum of
// a project's file contents), provider and trace_id (only when well-formed);
// tier, exit_code, timed_out and duration_ms stay null and broker_calls 0
// until AddRunResult fills them.
nlohmann::ordered_json RunAuditFields(const Request& request, std::string_view provider);
void AddRunResult(nlohmann::ordered_json& run, const Result& result);

class AuditLog {
 public:
  // Lines go to `log` (which must outlive the AuditLog) with the "audit" level.
  static std::unique_ptr<AuditLog> ToOperatorLog(Log& log);
  // Appends to `path`, creating it with mode 0600. Refuses anything but a
  // regular file (symbolic links are not followed).
  static Expected<std::unique_ptr<AuditLog>> OpenFile(const std::string& path);

  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Writes one line; an error when the file write fails.
  Status Write(const AuditEntry& entry);

  // "the operator log" or the file's path, for messages.
  std::string destination() const;

 private:
  AuditLog(Log* log, int fd, std::string path) : log_(log), fd_(fd), path_(std::move(path)) {}

  Log* log_;  // set: lines go to the operator log
  int fd_;    // >= 0: owned file descriptor
  std::string path_;
  std::mutex mutex_;
};

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_AUDIT_H_
