#include "cli/human_output.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace plimsoll::cli {
namespace {

std::string YesNo(bool value) {
  return value ? "yes" : "no";
}

std::string Truncation(bool out, bool err) {
  if (out && err) return "stdout, stderr";
  if (out) return "stdout";
  if (err) return "stderr";
  return "no";
}

std::string Joined(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& word : argv) {
    if (!text.empty()) text += ' ';
    text += word;
  }
  return text;
}

void PrintStream(std::string_view label, const std::string& bytes, std::ostream& out) {
  out << label << ":";
  if (bytes.empty()) {
    out << " (empty)\n";
    return;
  }
  out << "\n" << bytes;
  if (bytes.back() != '\n') out << "\n";
}

// A module run's rows (the artifact's JSON lines) as CSV: row, ended,
// ticks, time, score, then the final state; a row's error in `ended`'s
// place, quoted.
void PrintModuleRows(const Result& result, std::ostream& out) {
  for (const Artifact& artifact : result.artifacts) {
    if (artifact.path != kModuleRowsArtifact) continue;
    out << "rows (row,ended,ticks,time,score,final_state...):\n";
    std::istringstream lines(artifact.content);
    for (std::string line; std::getline(lines, line);) {
      const nlohmann::json row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!row.is_object() || !row.contains("row")) {
        out << "(unreadable row) " << line << "\n";
        continue;
      }
      out << row["row"].dump();
      if (row.contains("error")) {
        out << "," << row["error"].dump() << "\n";
        continue;
      }
      out << "," << row.value("ended", "") << "," << row.value("ticks", 0) << ","
          << row["time"].dump() << "," << row["score"].dump();
      for (const nlohmann::json& value : row.value("final_state", nlohmann::json::array())) {
        out << "," << value.dump();
      }
      out << "\n";
    }
  }
}

}  // namespace

void PrintResult(const Result& result, std::ostream& out, std::string_view why) {
  out << "provider:   " << result.provider << "\n"
      << "isolation:  " << TierName(result.isolation) << "\n";
  if (!why.empty()) out << "why:        " << why << "\n";
  out << "exit code:  " << result.exit_code << "\n"
      << "timed out:  " << YesNo(result.timed_out) << "\n"
      << "truncated:  " << Truncation(result.stdout_truncated, result.stderr_truncated) << "\n"
      << "duration:   " << result.duration_ms << " ms\n";
  if (result.outcome) out << "outcome:    " << ProjectOutcomeName(*result.outcome) << "\n";
  out << "record:     " << result.record.record_sha256 << "\n";
  for (size_t i = 0; i < result.steps.size(); ++i) {
    const StepResult& step = result.steps[i];
    out << "step " << i + 1 << ":     " << Joined(step.command) << " -> exit " << step.exit_code
        << (step.timed_out ? " (timed out)" : "") << ", " << step.duration_ms << " ms, truncated "
        << Truncation(step.stdout_truncated, step.stderr_truncated) << "\n";
  }
  for (const Artifact& artifact : result.artifacts) {
    out << "artifact:   " << artifact.path << " (" << artifact.content.size() << " bytes"
        << (artifact.truncated ? ", truncated" : "") << ")\n";
  }
  for (size_t i = 0; i < result.displays.size(); ++i) {
    const Display& display = result.displays[i];
    out << "display " << i + 1 << ":  " << display.mime;
    if (display.width > 0 && display.height > 0)
      out << " " << display.width << "x" << display.height;
    out << " (" << display.data.size() << " bytes)\n";
  }
  if (result.displays_truncated) out << "displays:   more were dropped (at most 16, 4 MiB)\n";
  if (result.broker) {
    const BrokerSummary& broker = *result.broker;
    out << "grant:      " << broker.profile << ": " << broker.calls << " call"
        << (broker.calls == 1 ? "" : "s") << ", " << broker.denied << " denied\n";
    for (const BrokerRoute& row : broker.routes) {
      out << "  " << row.count << " x " << row.method << " "
          << (row.route.empty() ? "(no route)" : row.route) << " -> ";
      if (row.reason.empty()) {
        out << row.status;
      } else {
        out << (row.allowed ? "failed (" : "denied (") << row.reason << ")";
      }
      out << "\n";
    }
    if (broker.routes_dropped > 0) {
      out << "  (" << broker.routes_dropped << " more rows not kept)\n";
    }
  }
  for (const Advice& advice : result.advice) {
    out << "advice:     " << advice.pattern << " on " << advice.route << ": " << advice.message
        << "\n";
  }
  PrintStream("stdout", result.stdout_bytes, out);
  PrintStream("stderr", result.stderr_bytes, out);
  if (result.kind == PayloadKind::kModule) PrintModuleRows(result, out);
}

void PrintError(const Error& error, std::ostream& out) {
  if (auto reason = NotDispatchedReason(error)) {
    out << "nothing ran: " << NotDispatchedName(*reason) << ": " << error.message() << "\n";
  } else {
    out << "error (the code may have run): " << ErrorCodeName(error.code()) << ": "
        << error.message() << "\n";
  }
}

void PrintDescription(const Description& description, const std::optional<Evidence>& evidence,
                      const std::optional<Error>& evidence_error, std::ostream& out) {
  out << "provider:     " << description.provider << "\n"
      << "claimed tier: " << TierName(description.tier) << "\n";
  if (evidence) {
    out << "isolation:    " << TierName(evidence->tier) << " (from evidence)\n";
    if (!evidence->summary.empty()) out << "evidence:     " << evidence->summary << "\n";
    for (const auto& [name, value] : evidence->facts) out << "  " << name << ": " << value << "\n";
    for (const EvidenceCheck& check : evidence->checks) {
      out << "  [" << (check.passed ? "pass" : "FAIL") << "] " << check.name << ": " << check.detail
          << "\n";
    }
  } else {
    out << "isolation:    unknown (no evidence)\n";
  }
  if (evidence_error) out << "evidence failed: " << evidence_error->message() << "\n";
  out << "environment:  " << (description.environment.empty() ? "none" : description.environment)
      << "\n";
  out << "payloads:    ";
  if (description.capabilities.payloads.empty()) out << " none";
  for (PayloadKind kind : description.capabilities.payloads) out << " " << PayloadKindName(kind);
  out << "\nsessions:     " << YesNo(description.capabilities.sessions)
      << "\ngrants:       " << YesNo(description.capabilities.grants) << "\n";
  const Limits& limits = description.limits;
  out << "limits:       memory " << (limits.memory_bytes >> 20) << " MiB, cpus "
      << limits.cpus_millis / 1000.0 << ", pids " << limits.pids << ", /tmp "
      << (limits.tmp_bytes >> 20) << " MiB, /work " << (limits.work_bytes >> 20) << " MiB, output "
      << (limits.output_cap_bytes >> 10) << " KiB per stream\n"
      << "timeouts:     snippet " << limits.snippet_timeout_default_ms << " ms (max "
      << limits.snippet_timeout_max_ms << "), project " << limits.project_timeout_default_ms
      << " ms (max " << limits.project_timeout_max_ms << ")\n"
      << "protocol:     " << kProtocol << "\n";
  for (const auto& [name, value] : description.details) out << name << ": " << value << "\n";
}

}  // namespace plimsoll::cli
