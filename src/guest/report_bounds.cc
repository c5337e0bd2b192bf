#include "guest/report_bounds.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "guest/displays.h"

namespace plimsoll::guest {
namespace {

// The detail an honest agent writes: its notes plus, for a step that could
// not start, that step's stderr (agent.cc); FitReport cuts it to 64 KiB
// only when the frame overflows.
constexpr uint64_t kDetailNotesBytes = 64 * 1024;
// JSON's worst escape (\u00XX) for a raw string byte.
constexpr uint64_t kWorstEscape = 6;

uint64_t Base64Bytes(uint64_t raw) {
  return (raw + 2) / 3 * 4;
}

Error Refused(const std::string& why) {
  return Failure(ErrorCode::kDataLoss, "The agent's report is not one for this job: " + why);
}

}  // namespace

ReportBounds ReportBoundsFor(const Job& job) {
  const uint64_t cap = static_cast<uint64_t>(std::max<int64_t>(job.output_cap_bytes, 0));
  const uint64_t artifacts = static_cast<uint64_t>(std::max<int64_t>(job.max_artifact_bytes, 0));
  uint64_t bytes = 4096;  // the envelope, numbers, booleans
  size_t strings = 16;
  for (const auto& argv : job.steps) {
    uint64_t argv_bytes = 0;
    for (const std::string& argument : argv) argv_bytes += argument.size() + 2;
    bytes += 2 * Base64Bytes(cap) + kWorstEscape * argv_bytes + 512;
    strings += 10 + argv.size();
  }
  if (job.cell) {
    const uint64_t value = static_cast<uint64_t>(std::max<int64_t>(job.cell->value_cap_bytes, 0));
    bytes += 2 * Base64Bytes(cap) + kWorstEscape * value + 1024;
    strings += 20;
  }
  bytes += Base64Bytes(artifacts);
  for (const std::string& path : job.artifacts) {
    bytes += kWorstEscape * path.size() + 256;
    strings += 5;
  }
  // Displays: whatever the steps or the cell showed, within their own caps.
  bytes += Base64Bytes(kMaxDisplayBytes) + kMaxDisplays * (kMaxDisplayMimeBytes + 64);
  strings += 4 * kMaxDisplays + 2;
  uint64_t detail = kDetailNotesBytes + cap + 512 * job.artifacts.size();
  bytes += kWorstEscape * detail;
  ReportBounds bounds;
  bounds.max_frame_bytes = std::min<uint64_t>(bytes, kMaxFrameBytes);
  bounds.max_strings = strings;
  bounds.max_depth = 6;  // report > steps > step > command, with room
  return bounds;
}

JsonShape ScanJsonShape(std::string_view text) {
  JsonShape shape;
  size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        ++shape.strings;
        break;
      case '{':
      case '[':
        shape.depth = std::max(shape.depth, ++depth);
        break;
      case '}':
      case ']':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return shape;
}

Status CheckReportShape(std::string_view frame, const ReportBounds& bounds) {
  if (frame.size() > bounds.max_frame_bytes) {
    return Refused("its frame has " + std::to_string(frame.size()) + " bytes; at most " +
                   std::to_string(bounds.max_frame_bytes) + " fit the job.");
  }
  JsonShape shape = ScanJsonShape(frame);
  if (shape.strings > bounds.max_strings) {
    return Refused("it has " + std::to_string(shape.strings) + " strings; at most " +
                   std::to_string(bounds.max_strings) + " fit the job.");
  }
  if (shape.depth > bounds.max_depth) {
    return Refused("it nests " + std::to_string(shape.depth) + " levels deep; at most " +
                   std::to_string(bounds.max_depth) + ".");
  }
  return Status::Ok();
}

Status CheckReportAgainstJob(const Report& report, const Job& job) {
  // A cell's one step is CellCommand(language) (protocol.h).
  const std::vector<std::vector<std::string>> expected =
      job.cell ? std::vector<std::vector<std::string>>{CellCommand(job.cell->language)} : job.steps;
  if (report.steps.size() > expected.size()) {
    return Refused("it describes " + std::to_string(report.steps.size()) + " steps; the job has " +
                   std::to_string(expected.size()) + ".");
  }
  if (report.cell.has_value() != job.cell.has_value()) {
    return Refused(job.cell ? "it has no answer for the job's cell."
                            : "it answers a cell the job did not send.");
  }
  if (report.cell && report.cell->value &&
      report.cell->value->size() > static_cast<size_t>(job.cell->value_cap_bytes)) {
    return Refused("its cell value is longer than the cap of " +
                   std::to_string(job.cell->value_cap_bytes) + " bytes.");
  }
  const auto cap = static_cast<size_t>(std::max<int64_t>(job.output_cap_bytes, 0));
  for (size_t i = 0; i < report.steps.size(); ++i) {
    const StepResult& step = report.steps[i];
    if (step.command != expected[i]) {
      return Refused("step " + std::to_string(i + 1) + " is not the job's step " +
                     std::to_string(i + 1) + ".");
    }
    if (step.stdout_bytes.size() > cap || step.stderr_bytes.size() > cap) {
      return Refused("step " + std::to_string(i + 1) + " has more output than the cap of " +
                     std::to_string(cap) + " bytes per stream.");
    }
  }
  PLIMSOLL_RETURN_IF_ERROR(CheckDisplays(report.displays));
  std::set<std::string> asked(job.artifacts.begin(), job.artifacts.end());
  std::set<std::string> seen;
  uint64_t total = 0;
  for (const Artifact& artifact : report.artifacts) {
    if (asked.count(artifact.path) == 0)
      return Refused("it brings back a file the job did not ask for.");
    if (!seen.insert(artifact.path).second) return Refused("it brings back a file twice.");
    total += artifact.content.size();
  }
  if (total > static_cast<uint64_t>(std::max<int64_t>(job.max_artifact_bytes, 0))) {
    return Refused("its artifacts exceed the budget of " + std::to_string(job.max_artifact_bytes) +
                   " bytes.");
  }
  return Status::Ok();
}

Expected<Report> ReadSealedReport(int fd, const Job& job,
                                  std::chrono::steady_clock::time_point deadline,
                                  GrantedCalls* calls) {
  auto frame = ReadSealedFrame(fd, job.report_key, deadline, job.host_calls ? calls : nullptr);
  if (!frame.ok()) return frame.error();
  PLIMSOLL_RETURN_IF_ERROR(CheckReportShape(*frame, ReportBoundsFor(job)));
  auto report = DecodeReport(*frame);
  if (!report.ok()) return report.error();
  PLIMSOLL_RETURN_IF_ERROR(CheckReportAgainstJob(*report, job));
  return report;
}

}  // namespace plimsoll::guest
