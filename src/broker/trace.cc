#include "broker/trace.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <utility>

namespace plimsoll::broker {
namespace {

constexpr std::size_t kFingerprintKeyBytes = 32;

void AppendFramed(std::string& out, std::string_view part) {
  uint64_t size = part.size();
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((size >> shift) & 0xff));
  }
  out.append(part);
}

}  // namespace

std::string_view CallRefusalCode(CallRefusal refusal) {
  switch (refusal) {
    case CallRefusal::kNone:
      return "";
    case CallRefusal::kNotAllowed:
      return "not_allowed";
    case CallRefusal::kBadPath:
      return "bad_path";
    case CallRefusal::kMaxCalls:
      return "max_calls";
    case CallRefusal::kRouteMaxCalls:
      return "route_max_calls";
    case CallRefusal::kCircuitOpen:
      return "circuit_open";
    case CallRefusal::kBodyTooLarge:
      return "body_too_large";
    case CallRefusal::kUpstreamTimeout:
      return "upstream_timeout";
    case CallRefusal::kUpstreamError:
      return "upstream_error";
  }
  return "upstream_error";
}

std::string TraceMethodName(std::string_view guest_method) {
  if (auto method = ParseHttpMethod(guest_method)) return std::string(HttpMethodName(*method));
  return "OTHER";
}

Expected<std::unique_ptr<CallTrace>> CallTrace::Create() {
  std::string key(kFingerprintKeyBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1) {
    return Failure(ErrorCode::kInternal,
                   "The OS random number generator could not produce a trace key (RAND_bytes "
                   "failed).");
  }
  auto trace = std::make_unique<CallTrace>(key);
  OPENSSL_cleanse(key.data(), key.size());
  return trace;
}

CallTrace::CallTrace(std::string fingerprint_key) : key_(std::move(fingerprint_key)) {}

CallTrace::~CallTrace() {
  if (!key_.empty()) OPENSSL_cleanse(key_.data(), key_.size());
}

std::string CallTrace::Fingerprint(std::string_view method, const CanonicalPath& path,
                                   std::string_view body) const {
  std::string input;
  input.reserve(24 + method.size() + path.encoded().size() + body.size());
  AppendFramed(input, method);
  AppendFramed(input, path.encoded());
  AppendFramed(input, body);
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int mac_size = 0;
  if (HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
           reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac.data(),
           &mac_size) == nullptr) {
    return "";
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(static_cast<std::size_t>(mac_size) * 2);
  for (unsigned int i = 0; i < mac_size; ++i) {
    hex.push_back(kHex[mac[i] >> 4]);
    hex.push_back(kHex[mac[i] & 0xf]);
  }
  return hex;
}

void CallTrace::Record(TraceEntry entry) {
  std::lock_guard lock(mutex_);
  ++calls_;
  if (!entry.allowed) ++denied_;
  ++rows_[RowKey(entry.method, entry.route, entry.status, entry.allowed,
                 std::string(CallRefusalCode(entry.refusal)))];
  if (entries_.size() < kMaxTraceEntries) {
    entries_.push_back(std::move(entry));
  } else {
    ++entries_dropped_;
  }
}

std::vector<TraceEntry> CallTrace::Entries() const {
  std::lock_guard lock(mutex_);
  return entries_;
}

int64_t CallTrace::entries_dropped() const {
  std::lock_guard lock(mutex_);
  return entries_dropped_;
}

TraceSummary CallTrace::Summarize() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<RowKey, int64_t>> rows(rows_.begin(), rows_.end());
  TraceSummary summary;
  summary.calls = calls_;
  summary.denied = denied_;
  if (rows.size() > kMaxSummaryRows) {
    // Keep the most frequent rows; ties go to the smaller key, so the choice
    // is the same on every run with the same calls.
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    summary.rows_dropped = static_cast<int64_t>(rows.size() - kMaxSummaryRows);
    rows.resize(kMaxSummaryRows);
    std::sort(rows.begin(), rows.end());
  }
  for (auto& [key, count] : rows) {
    auto& [method, route, status, allowed, reason] = key;
    summary.rows.push_back({method, route, status, allowed, reason, count});
  }
  return summary;
}

}  // namespace plimsoll::broker
