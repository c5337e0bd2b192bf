#include "broker/advisor.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace plimsoll::broker {
namespace {

bool Answered(const TraceEntry& entry) {
  return entry.allowed && entry.status != 0;
}

std::string RouteText(const TraceEntry& entry) {
  return entry.method + " " + entry.route;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  std::size_t middle = values.size() / 2;
  if (values.size() % 2 == 1) return values[middle];
  return (values[middle - 1] + values[middle]) / 2;
}

// The calls one finding covers.
struct Calls {
  std::vector<double> latencies;
  int64_t bytes = 0;
  void Add(const TraceEntry& entry) {
    latencies.push_back(entry.latency_ms);
    bytes += entry.response_bytes;
  }
};

bool IsAllowed(const Profile& profile, const std::string& route_text) {
  return std::any_of(profile.allow.begin(), profile.allow.end(),
                     [&](const RouteTemplate& route) { return route.text() == route_text; });
}

void FindFanOut(std::span<const TraceEntry> entries, const Profile& profile,
                std::vector<AdvisorFinding>& findings) {
  for (const auto& [item, collection] : profile.batch_of) {
    if (!IsAllowed(profile, collection)) continue;
    Calls calls;
    for (const TraceEntry& entry : entries) {
      if (Answered(entry) && RouteText(entry) == item) calls.Add(entry);
    }
    auto count = static_cast<int64_t>(calls.latencies.size());
    if (count < kMinFanOutCalls) continue;
    AdvisorFinding finding;
    finding.advice.pattern = "fan_out";
    finding.advice.route = item;
    finding.advice.extra_calls = count - 1;
    finding.advice.added_latency_ms =
        static_cast<double>(count - 1) * Median(std::move(calls.latencies));
    finding.advice.bytes = calls.bytes;
    std::string& message = finding.advice.message;
    message = "The run called ";
    message += item;
    message += " " + std::to_string(count) + " times, one item at a time, while ";
    message += collection;
    message += " returns them all in one call: call ";
    message += collection;
    message += " once and pick the items from its answer.";
    findings.push_back(std::move(finding));
  }
}

void FindRepeatedReads(std::span<const TraceEntry> entries, std::vector<AdvisorFinding>& findings) {
  // route -> fingerprint -> the calls with it
  std::map<std::string, std::map<std::string, std::vector<const TraceEntry*>>> reads;
  for (const TraceEntry& entry : entries) {
    if (!Answered(entry) || entry.method != "GET" || entry.fingerprint.empty()) continue;
    reads[RouteText(entry)][entry.fingerprint].push_back(&entry);
  }
  for (const auto& [route, by_fingerprint] : reads) {
    int64_t repeats = 0;
    Calls calls;
    for (const auto& [fingerprint, same] : by_fingerprint) {
      if (same.size() < 2) continue;
      repeats += static_cast<int64_t>(same.size()) - 1;
      for (const TraceEntry* entry : same) calls.Add(*entry);
    }
    if (repeats == 0) continue;
    AdvisorFinding finding;
    finding.advice.pattern = "repeated_read";
    finding.advice.route = route;
    finding.advice.extra_calls = repeats;
    finding.advice.added_latency_ms =
        static_cast<double>(repeats) * Median(std::move(calls.latencies));
    finding.advice.bytes = calls.bytes;
    finding.advice.message =
        "The run sent " + std::to_string(repeats) + " " + route + " request" +
        (repeats == 1 ? "" : "s") +
        " identical to an earlier one: keep the first answer and reuse it instead of asking "
        "again.";
    findings.push_back(std::move(finding));
  }
}

}  // namespace

std::vector<AdvisorFinding> Advise(std::span<const TraceEntry> entries, const Profile& profile) {
  std::vector<AdvisorFinding> findings;
  FindFanOut(entries, profile, findings);  // batch_of is a sorted map: by route
  FindRepeatedReads(entries, findings);    // by route too
  return findings;
}

std::vector<Advice> AgentAdvice(const std::vector<AdvisorFinding>& findings) {
  std::vector<Advice> advice;
  for (const auto& finding : findings) {
    if (finding.agent_fixable) advice.push_back(finding.advice);
  }
  return advice;
}

}  // namespace plimsoll::broker
