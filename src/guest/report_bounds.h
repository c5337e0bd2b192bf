// What the host accepts as an agent's report for one job (issue 13): the
// report is bounded before it is parsed into a DOM, and may describe only
// the steps and artifacts the job asked for.
//
// The report is sealed with a key only the agent holds, but the agent runs
// inside the sandbox: a guest that took it over could send a 32 MiB frame of
// tiny strings (a DOM many times that size in the daemon) or a report of
// steps and files the job never named. So, before the DOM: the frame's size
// and the count of JSON strings and nesting depth (ScanJsonShape, one pass,
// no allocation) are checked against bounds derived from the job; after
// decoding: the steps are a prefix of the job's, with their commands and
// within the output cap; the artifacts are the job's paths, each at most
// once, within the artifact budget.
//
// Usage (ReadSealedReport(fd, job, deadline) does this):
//   ReportBounds bounds = ReportBoundsFor(job);
//   PLIMSOLL_RETURN_IF_ERROR(CheckReportShape(frame, bounds));
//   auto report = DecodeReport(frame);
//   PLIMSOLL_RETURN_IF_ERROR(CheckReportAgainstJob(*report, job));
//
// Thread-safety: pure functions.
#ifndef PLIMSOLL_GUEST_REPORT_BOUNDS_H_
#define PLIMSOLL_GUEST_REPORT_BOUNDS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "guest/protocol.h"
#include "plimsoll/error.h"

namespace plimsoll::guest {

struct ReportBounds {
  uint64_t max_frame_bytes = 0;  // <= kMaxFrameBytes
  size_t max_strings = 0;        // JSON strings, object keys included
  size_t max_depth = 0;          // nesting of objects and arrays
};

// The largest report an honest agent sends for `job` (base64 outputs at the
// job's cap, its command lines and artifact paths escaped at worst, the
// artifact budget, the detail), with room to spare.
ReportBounds ReportBoundsFor(const Job& job);

// Counts, outside strings, the strings and the deepest nesting of `text`;
// does not validate JSON (the decoder does, afterwards).
struct JsonShape {
  size_t strings = 0;
  size_t depth = 0;
};
JsonShape ScanJsonShape(std::string_view text);

// kDataLoss when the frame is larger or has more strings or depth than
// `bounds` allow.
Status CheckReportShape(std::string_view frame, const ReportBounds& bounds);

// kDataLoss when the report describes a step, command or artifact the job
// did not ask for, or outputs beyond the job's caps.
Status CheckReportAgainstJob(const Report& report, const Job& job);

// The host's read of an agent's report (ExchangeJob's): the sealed frame
// (ReadSealedFrame), CheckReportShape, DecodeReport, CheckReportAgainstJob.
// `calls` answers a granted run's host calls before the report (host_calls.h).
Expected<Report> ReadSealedReport(int fd, const Job& job,
                                  std::chrono::steady_clock::time_point deadline,
                                  GrantedCalls* calls = nullptr);

}  // namespace plimsoll::guest

#endif  // PLIMSOLL_GUEST_REPORT_BOUNDS_H_
