#include "daemon/server/audit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/beast/http/verb.hpp>
#include <cerrno>
#include <cmath>
#include <ctime>

#include "daemon/http/request_id.h"

namespace plimsoll::daemon {
namespace {

using nlohmann::ordered_json;

// RFC 3339 in UTC with milliseconds: "2026-11-29T12:34:56.789Z".
std::string FormatTime(std::chrono::system_clock::time_point time) {
  auto milliseconds =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(milliseconds / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::string fraction = std::to_string(1000 + milliseconds % 1000);  // "1007" for 7 ms
  return std::string(text, length) + "." + fraction.substr(1) + "Z";
}

ordered_json TextOrNull(std::string_view text) {
  if (text.empty()) return nullptr;
  return std::string(text);
}

int64_t PayloadBytes(const Request& request) {
  if (request.javascript) return static_cast<int64_t>(request.javascript->code.size());
  if (request.python) return static_cast<int64_t>(request.python->code.size());
  if (request.cell) return static_cast<int64_t>(request.cell->code.size());
  int64_t bytes = 0;
  if (request.project) {
    for (const ProjectFile& file : request.project->files) {
      bytes += static_cast<int64_t>(file.content.size());
    }
  }
  return bytes;
}

// The name of a known HTTP verb; "" for one Beast does not know (the
// client's own spelling is never written).
std::string_view VerbName(http::Verb verb) {
  if (verb == http::Verb::unknown) return "";
  return boost::beast::http::to_string(verb);
}

}  // namespace

AuditEntry AuditEntryFor(const http::Answer& answer, const http::AnswerContext& facts,
                         std::chrono::system_clock::time_point now) {
  AuditEntry entry;
  entry.time = now;
  entry.request_id = facts.request_id;
  entry.method = VerbName(facts.method);
  entry.route = facts.route;
  entry.status = static_cast<unsigned>(answer.status);
  if (facts.caller != nullptr) entry.caller = facts.caller->name;
  entry.not_dispatched = answer.not_dispatched;
  for (const auto& [name, value] : answer.headers) {
    if (name == http::kErrorIdHeader) entry.error_id = value;
  }
  entry.duration = std::chrono::steady_clock::now() - facts.started;
  if (!answer.audit_details.is_null()) entry.details = &answer.audit_details;
  return entry;
}

std::string FormatAuditLine(const AuditEntry& entry) {
  ordered_json line = ordered_json::object();
  line["time"] = FormatTime(entry.time);
  line["request_id"] = TextOrNull(entry.request_id);
  line["method"] = TextOrNull(entry.method);
  line["route"] = TextOrNull(entry.route);
  line["status"] = entry.status;
  line["caller"] = TextOrNull(entry.caller);
  line["not_dispatched"] =
      entry.not_dispatched ? TextOrNull(NotDispatchedName(*entry.not_dispatched)) : nullptr;
  line["error_id"] = TextOrNull(entry.error_id);
  // Microsecond resolution, written in milliseconds.
  double microseconds =
      std::round(std::chrono::duration<double, std::micro>(entry.duration).count());
  line["duration_ms"] = microseconds / 1000.0;
  if (entry.details != nullptr && entry.details->is_object()) {
    for (const auto& [key, value] : entry.details->items()) {
      if (!line.contains(key)) line[key] = value;
    }
  }
  // ensure_ascii: every byte of the line is printable ASCII (controls, DEL,
  // C1 controls and U+2028 become \u escapes), so no string in it can break
  // the line or reach a terminal raw.
  return line.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
}

ordered_json RunAuditFields(const Request& request, std::string_view provider) {
  ordered_json run = ordered_json::object();
  std::optional<PayloadKind> kind = request.kind();
  run["kind"] = kind ? TextOrNull(PayloadKindName(*kind)) : nullptr;
  run["payload_bytes"] = PayloadBytes(request);
  run["provider"] = TextOrNull(provider);
  run["tier"] = nullptr;
  run["exit_code"] = nullptr;
  run["timed_out"] = nullptr;
  run["duration_ms"] = nullptr;
  run["broker_calls"] = 0;
  run["broker_denied"] = 0;
  run["trace_id"] = IsWellFormedTraceId(request.trace_id) ? TextOrNull(request.trace_id) : nullptr;
  return run;
}

void AddRunResult(ordered_json& run, const Result& result) {
  run["tier"] = TierName(result.isolation);
  run["exit_code"] = result.exit_code;
  run["timed_out"] = result.timed_out;
  run["duration_ms"] = result.duration_ms;
  run["broker_calls"] = result.broker ? result.broker->calls : 0;
  run["broker_denied"] = result.broker ? result.broker->denied : 0;
}

std::unique_ptr<AuditLog> AuditLog::ToOperatorLog(Log& log) {
  return std::unique_ptr<AuditLog>(new AuditLog(&log, -1, ""));
}

Expected<std::unique_ptr<AuditLog>> AuditLog::OpenFile(const std::string& path) {
  if (path.empty()) return Failure(ErrorCode::kInvalidArgument, "The audit log path is empty.");
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return SystemError("Cannot open the audit log " + path, errno);
  std::unique_ptr<AuditLog> audit(new AuditLog(nullptr, fd, path));
  struct stat status {};
  if (::fstat(fd, &status) != 0) return SystemError("Cannot inspect the audit log " + path, errno);
  if (!S_ISREG(status.st_mode)) {
    return Failure(ErrorCode::kInvalidArgument,
                   "The audit log " + path + " is not a regular file.");
  }
  return audit;
}

AuditLog::~AuditLog() {
  if (fd_ >= 0) ::close(fd_);
}

Status AuditLog::Write(const AuditEntry& entry) {
  std::string line = FormatAuditLine(entry);
  if (log_ != nullptr) {
    log_->Audit(line);
    return Status::Ok();
  }
  line += '\n';
  std::lock_guard lock(mutex_);
  std::string_view rest = line;
  while (!rest.empty()) {
    ssize_t written = ::write(fd_, rest.data(), rest.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      return SystemError("Cannot write to the audit log " + path_, written < 0 ? errno : EIO);
    }
    rest.remove_prefix(static_cast<size_t>(written));
  }
  return Status::Ok();
}

std::string AuditLog::destination() const {
  return log_ != nullptr ? std::string("the operator log") : path_;
}

}  // namespace plimsoll::daemon
