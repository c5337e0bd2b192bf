// A bundle (docs/attest.md): one JSON object per line, appended by
// `plimsoll-attest run` and read by `verify` and `replay`.
//
//   {"index": 0, "kind": "run", "request": {...}, "result": {...}, "envelope": {...}}
//   {"index": 1, "kind": "session_call", "session_id": "...", "request": {...}, "result": {...},
//    "envelope": {...}}
//   {"index": 2, "kind": "session_close", "session_id": "...", "close": {...}, "envelope": {...}}
//
// `request` and `result` are the exchange as the wire carries it
// (RequestToJson, ResultToJson), so a verifier recomputes every digest from
// them; `close` is SessionCloseToJson. `envelope` is the DSSE envelope
// (dsse.h) of the entry's statement (statement.h), whose "bundle" link names
// this line's index and the previous line's SHA-256.
//
// Appending (AppendToBundle) holds an exclusive flock on the file for the
// whole read-link-sign-write, so concurrent writers take turns and each new
// line links to the one before it; the line is written and fsynced, and any
// failure truncates the file back to its size before, so a bundle is never
// left with half a line. A new bundle is created mode 0600.
//
// Usage:
//   PLIMSOLL_RETURN_IF_ERROR(AppendToBundle(path, [&](const BundleLink& link) {
//     return EntryLine(...signed with link...);
//   }));
//   Expected<BundleFile> bundle = ReadBundle(path);
#ifndef PLIMSOLL_ATTEST_BUNDLE_H_
#define PLIMSOLL_ATTEST_BUNDLE_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attest/keys.h"
#include "attest/statement.h"
#include "plimsoll/error.h"

namespace plimsoll::attest {

// The largest bundle line read or written (a result carries at most a few
// MiB of output and artifacts, base64 on the wire).
inline constexpr size_t kMaxBundleLineBytes = 64u << 20;

enum class EntryKind { kRun, kSessionCall, kSessionClose };
std::string_view EntryKindName(EntryKind kind);

struct BundleEntry {
  int64_t index = 0;
  EntryKind kind = EntryKind::kRun;
  std::string session_id;     // session calls and closes
  std::string request_json;   // runs and calls: RequestToJson
  std::string result_json;    // runs and calls: ResultToJson
  std::string close_json;     // closes: SessionCloseToJson
  std::string envelope_json;  // EnvelopeToJson
};

// The entry as one line of compact JSON (no newline), keys in the order
// above. The JSON members are embedded as objects, not strings.
std::string EntryLine(const BundleEntry& entry);

// `entry` at `link`, its envelope signing `statement` with `key` (DSSE,
// kPayloadType), as one line: what AppendToBundle's make_line answers.
Expected<std::string> SignedEntryLine(BundleEntry entry, std::string_view statement,
                                      const SigningKey& key, const BundleLink& link);

// Parses one line. Errors (kInvalidArgument, one sentence naming the
// field): not a JSON object, an unknown or missing key, a wrong type.
Expected<BundleEntry> ParseEntryLine(std::string_view line);

// Lowercase hex SHA-256 of `line` (no newline): what the next line links to.
std::string LineDigest(std::string_view line);

// Appends one line built by `make_line` from the link the new line must
// carry (the file's line count and its last line's digest), as described
// above. Errors: the file cannot be opened, locked, read, written or
// synced (the file is then as it was), a last line without its newline (a
// torn bundle: refused, nothing appended), or make_line's own error.
Status AppendToBundle(const std::filesystem::path& path,
                      const std::function<Expected<std::string>(const BundleLink&)>& make_line);

struct BundleFile {
  std::vector<std::string> lines;  // without their newlines
  bool truncated_tail = false;     // bytes after the last newline (a torn last line)
};

// Reads a bundle (under a shared flock). Errors: unreadable, or a line
// over kMaxBundleLineBytes.
Expected<BundleFile> ReadBundle(const std::filesystem::path& path);

}  // namespace plimsoll::attest

#endif  // PLIMSOLL_ATTEST_BUNDLE_H_
