#include "attest/bundle.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "attest/dsse.h"
#include "base/unique_fd.h"
#include "record/digest_builder.h"

namespace plimsoll::attest {
namespace {

using Json = nlohmann::ordered_json;

Error Malformed(std::string what) {
  return Error(ErrorCode::kInvalidArgument, "The line " + std::move(what) + ".");
}

// Reads the whole file from offset 0.
Expected<std::string> ReadAll(int fd, const std::string& path) {
  std::string bytes;
  char chunk[65536];
  for (off_t offset = 0;;) {
    const ssize_t got = pread(fd, chunk, sizeof chunk, offset);
    if (got < 0) {
      if (errno == EINTR) continue;
      return SystemError("read " + path, errno);
    }
    if (got == 0) return bytes;
    bytes.append(chunk, static_cast<size_t>(got));
    offset += got;
  }
}

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t wrote = write(fd, bytes.data(), bytes.size());
    if (wrote < 0) {
      if (errno == EINTR) continue;
      return SystemError("write " + path, errno);
    }
    bytes.remove_prefix(static_cast<size_t>(wrote));
  }
  return Status::Ok();
}

Status Lock(int fd, int operation, const std::string& path) {
  while (flock(fd, operation) != 0) {
    if (errno != EINTR) return SystemError("flock " + path, errno);
  }
  return Status::Ok();
}

}  // namespace

std::string_view EntryKindName(EntryKind kind) {
  switch (kind) {
    case EntryKind::kRun:
      return "run";
    case EntryKind::kSessionCall:
      return "session_call";
    case EntryKind::kSessionClose:
      return "session_close";
  }
  return "run";
}

std::string EntryLine(const BundleEntry& entry) {
  const auto object = [](const std::string& json) {
    return Json::parse(json, nullptr, /*allow_exceptions=*/false);
  };
  Json line = Json::object();
  line["index"] = entry.index;
  line["kind"] = EntryKindName(entry.kind);
  if (entry.kind != EntryKind::kRun) line["session_id"] = entry.session_id;
  if (entry.kind == EntryKind::kSessionClose) {
    line["close"] = object(entry.close_json);
  } else {
    line["request"] = object(entry.request_json);
    line["result"] = object(entry.result_json);
  }
  line["envelope"] = object(entry.envelope_json);
  return line.dump();
}

Expected<std::string> SignedEntryLine(BundleEntry entry, std::string_view statement,
                                      const SigningKey& key, const BundleLink& link) {
  Expected<Envelope> envelope = Sign(kPayloadType, statement, key);
  if (!envelope.ok()) return envelope.error();
  Expected<std::string> text = EnvelopeToJsonText(*envelope);
  if (!text.ok()) return text.error();
  entry.index = link.index;
  entry.envelope_json = std::move(*text);
  return EntryLine(entry);
}

Expected<BundleEntry> ParseEntryLine(std::string_view text) {
  const Json line = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (line.is_discarded() || !line.is_object()) return Malformed("is not a JSON object");
  BundleEntry entry;
  const auto index = line.find("index");
  if (index == line.end() || !index->is_number_integer()) {
    return Malformed("has no integer \"index\"");
  }
  entry.index = index->get<int64_t>();
  const auto kind = line.find("kind");
  if (kind == line.end() || !kind->is_string()) return Malformed("has no string \"kind\"");
  const std::string kind_name = kind->get<std::string>();
  if (kind_name == "run") {
    entry.kind = EntryKind::kRun;
  } else if (kind_name == "session_call") {
    entry.kind = EntryKind::kSessionCall;
  } else if (kind_name == "session_close") {
    entry.kind = EntryKind::kSessionClose;
  } else {
    return Malformed("has an unknown kind \"" + kind_name + "\"");
  }
  std::vector<std::string> keys = {"index", "kind", "envelope"};
  if (entry.kind != EntryKind::kRun) keys.push_back("session_id");
  if (entry.kind == EntryKind::kSessionClose) {
    keys.push_back("close");
  } else {
    keys.insert(keys.end(), {"request", "result"});
  }
  for (const auto& [key, value] : line.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      return Malformed("has an unexpected key \"" + key + "\" for a " + kind_name);
    }
  }
  for (const std::string& key : keys) {
    const auto member = line.find(key);
    if (member == line.end()) return Malformed("has no \"" + key + "\"");
    if (key == "session_id") {
      if (!member->is_string()) return Malformed("has a \"session_id\" that is not a string");
      entry.session_id = member->get<std::string>();
    } else if (key != "index" && key != "kind") {
      if (!member->is_object()) return Malformed("has a \"" + key + "\" that is not an object");
      std::string& json = key == "request"  ? entry.request_json
                          : key == "result" ? entry.result_json
                          : key == "close"  ? entry.close_json
                                            : entry.envelope_json;
      json = member->dump();
    }
  }
  return entry;
}

std::string LineDigest(std::string_view line) {
  return record::Sha256Hex(line);
}

Status AppendToBundle(const std::filesystem::path& path,
                      const std::function<Expected<std::string>(const BundleLink&)>& make_line) {
  const std::string name = path.string();
  base::UniqueFd fd(open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return SystemError("open " + name, errno);
  PLIMSOLL_RETURN_IF_ERROR(Lock(fd.get(), LOCK_EX, name));
  Expected<std::string> bytes = ReadAll(fd.get(), name);
  if (!bytes.ok()) return bytes.error();
  if (!bytes->empty() && bytes->back() != '\n') {
    return Error(ErrorCode::kFailedPrecondition,
                 name +
                     " ends in a torn line (no newline after its last bytes); nothing was "
                     "appended. `plimsoll-attest verify` names it.");
  }
  BundleLink link;
  if (!bytes->empty()) {
    const size_t last_start = bytes->rfind('\n', bytes->size() - 2);
    const size_t begin = last_start == std::string::npos ? 0 : last_start + 1;
    link.previous_line_sha256 =
        LineDigest(std::string_view(*bytes).substr(begin, bytes->size() - 1 - begin));
    link.index = static_cast<int64_t>(std::count(bytes->begin(), bytes->end(), '\n'));
  }
  Expected<std::string> line = make_line(link);
  if (!line.ok()) return line.error();
  if (line->find('\n') != std::string::npos || line->size() > kMaxBundleLineBytes) {
    return Error(ErrorCode::kInternal, "A bundle line must be one line of at most 64 MiB.");
  }
  const off_t before = static_cast<off_t>(bytes->size());
  Status written = Status::Ok();
  if (lseek(fd.get(), before, SEEK_SET) < 0) {
    written = SystemError("seek " + name, errno);
  } else {
    written = WriteAll(fd.get(), *line + "\n", name);
    if (written.ok() && fsync(fd.get()) != 0) written = SystemError("fsync " + name, errno);
  }
  if (!written.ok()) {
    // Back to the bundle as it was: no half line, no line unsynced.
    if (ftruncate(fd.get(), before) == 0) (void)fsync(fd.get());
    return written;
  }
  return Status::Ok();
}

Expected<BundleFile> ReadBundle(const std::filesystem::path& path) {
  const std::string name = path.string();
  base::UniqueFd fd(open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return SystemError("open " + name, errno);
  PLIMSOLL_RETURN_IF_ERROR(Lock(fd.get(), LOCK_SH, name));
  Expected<std::string> bytes = ReadAll(fd.get(), name);
  if (!bytes.ok()) return bytes.error();
  BundleFile bundle;
  std::string_view rest = *bytes;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    if (end == std::string_view::npos) {
      bundle.truncated_tail = true;
      break;
    }
    if (end > kMaxBundleLineBytes) {
      return Error(ErrorCode::kInvalidArgument, name + " has a line over 64 MiB (line " +
                                                    std::to_string(bundle.lines.size()) + ").");
    }
    bundle.lines.emplace_back(rest.substr(0, end));
    rest.remove_prefix(end + 1);
  }
  return bundle;
}

}  // namespace plimsoll::attest
