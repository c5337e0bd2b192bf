#include "image/manifest.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <map>
#include <memory>

namespace plimsoll::image {
namespace {

struct Entry {
  std::string path;  // raw bytes, "/" for the root, "/a/b" below it
  std::string line;  // the manifest line without the newline
};

std::string Hex(const unsigned char* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    hex.push_back(kDigits[bytes[i] >> 4]);
    hex.push_back(kDigits[bytes[i] & 0xf]);
  }
  return hex;
}

struct DigestContextDeleter {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using DigestContext = std::unique_ptr<EVP_MD_CTX, DigestContextDeleter>;

// Closes a descriptor on scope exit.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

struct DirectoryCloser {
  void operator()(DIR* directory) const { closedir(directory); }
};

char TypeLetter(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR:
      return 'd';
    case S_IFREG:
      return 'f';
    case S_IFLNK:
      return 'l';
    case S_IFCHR:
      return 'c';
    case S_IFBLK:
      return 'b';
    case S_IFIFO:
      return 'p';
    case S_IFSOCK:
      return 's';
    default:
      return '?';
  }
}

std::string ModeOctal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

Expected<std::string> ReadLinkTarget(const std::string& path, off_t size_hint) {
  std::string target(static_cast<size_t>(size_hint > 0 ? size_hint : 256), '\0');
  for (;;) {
    ssize_t length = readlink(path.c_str(), target.data(), target.size());
    if (length < 0) return SystemError("readlink " + path, errno);
    if (static_cast<size_t>(length) < target.size()) {
      target.resize(static_cast<size_t>(length));
      return target;
    }
    target.resize(target.size() * 2);
  }
}

Expected<Entry> DescribeEntry(const std::string& full_path, std::string relative,
                              const struct stat& info) {
  std::string line = EscapeManifestField(relative);
  line += ' ';
  line += TypeLetter(info.st_mode);
  line += ' ' + ModeOctal(info.st_mode) + ' ' + std::to_string(info.st_uid) + ' ' +
          std::to_string(info.st_gid);
  switch (info.st_mode & S_IFMT) {
    case S_IFREG: {
      auto digest = Sha256OfFile(full_path);
      if (!digest.ok()) return digest.error();
      line += ' ' + std::to_string(info.st_size) + ' ' + *digest;
      break;
    }
    case S_IFLNK: {
      auto target = ReadLinkTarget(full_path, info.st_size);
      if (!target.ok()) return target.error();
      line += ' ' + EscapeManifestField(*target);
      break;
    }
    case S_IFCHR:
    case S_IFBLK:
      line += ' ' + std::to_string(major(info.st_rdev)) + ':' + std::to_string(minor(info.st_rdev));
      break;
    default:
      break;
  }
  return Entry{std::move(relative), std::move(line)};
}

// Appends the entries below `full_path` (a directory) to `entries`.
Status Walk(const std::string& full_path, const std::string& relative,
            std::vector<Entry>& entries) {
  std::unique_ptr<DIR, DirectoryCloser> directory(opendir(full_path.c_str()));
  if (!directory) return SystemError("opendir " + full_path, errno);
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* item = readdir(directory.get())) {
    std::string_view name = item->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  if (errno != 0) return SystemError("readdir " + full_path, errno);
  directory.reset();
  for (const std::string& name : names) {
    std::string child_full = full_path + "/" + name;
    std::string child_relative = (relative == "/" ? "" : relative) + "/" + name;
    struct stat info {};
    if (lstat(child_full.c_str(), &info) != 0) return SystemError("lstat " + child_full, errno);
    auto entry = DescribeEntry(child_full, child_relative, info);
    if (!entry.ok()) return entry.error();
    entries.push_back(std::move(*entry));
    if (S_ISDIR(info.st_mode)) PLIMSOLL_RETURN_IF_ERROR(Walk(child_full, child_relative, entries));
  }
  return Status::Ok();
}

// Splits a manifest into path -> line (the path is the first field).
std::map<std::string_view, std::string_view> IndexManifest(std::string_view manifest) {
  std::map<std::string_view, std::string_view> lines;
  while (!manifest.empty()) {
    size_t end = manifest.find('\n');
    std::string_view line = manifest.substr(0, end);
    manifest.remove_prefix(end == std::string_view::npos ? manifest.size() : end + 1);
    if (line.empty() || line == kManifestHeader) continue;
    lines.emplace(line.substr(0, line.find(' ')), line);
  }
  return lines;
}

}  // namespace

std::string EscapeManifestField(std::string_view raw) {
  std::string escaped;
  escaped.reserve(raw.size());
  for (char c : raw) {
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x21 && byte <= 0x7e && byte != '\\') {
      escaped.push_back(c);
    } else {
      char text[5];
      std::snprintf(text, sizeof text, "\\x%02x", byte);
      escaped += text;
    }
  }
  return escaped;
}

std::string Sha256Hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr);
  return Hex(digest.data(), size);
}

Expected<std::string> Sha256OfFile(const std::filesystem::path& file) {
  ScopedFd fd(open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return SystemError("open " + file.string(), errno);
  DigestContext context(EVP_MD_CTX_new());
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    return Failure(ErrorCode::kInternal, "OpenSSL could not start a SHA-256 digest.");
  }
  // One buffer per thread: allocating (and zeroing) it per file cost more
  // than the hashing on a tree of small files.
  static thread_local std::vector<char> buffer(1 << 20);
  for (;;) {
    ssize_t got = read(fd.get(), buffer.data(), buffer.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      return SystemError("read " + file.string(), errno);
    }
    if (got == 0) break;
    EVP_DigestUpdate(context.get(), buffer.data(), static_cast<size_t>(got));
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(context.get(), digest.data(), &size);
  return Hex(digest.data(), size);
}

Expected<std::string> BuildManifest(const std::filesystem::path& root) {
  const std::string root_path = root.string();
  struct stat info {};
  if (lstat(root_path.c_str(), &info) != 0) return SystemError("lstat " + root_path, errno);
  if (!S_ISDIR(info.st_mode)) {
    return Failure(ErrorCode::kInvalidArgument, root_path + " is not a directory.");
  }
  std::vector<Entry> entries;
  auto top = DescribeEntry(root_path, "/", info);
  if (!top.ok()) return top.error();
  entries.push_back(std::move(*top));
  PLIMSOLL_RETURN_IF_ERROR(Walk(root_path, "/", entries));
  // std::string compares like memcmp: by unsigned bytes.
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.path < b.path; });
  std::string manifest(kManifestHeader);
  manifest += '\n';
  for (const Entry& entry : entries) {
    manifest += entry.line;
    manifest += '\n';
  }
  return manifest;
}

std::string IdentityOfManifest(std::string_view manifest) {
  return std::string(kIdentityPrefix) + Sha256Hex(manifest);
}

bool IsWellFormedIdentity(std::string_view text) {
  if (text.substr(0, kIdentityPrefix.size()) != kIdentityPrefix) return false;
  std::string_view hex = text.substr(kIdentityPrefix.size());
  return hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::vector<std::string> DescribeManifestDifferences(std::string_view recorded,
                                                     std::string_view current, size_t limit) {
  std::vector<std::string> differences;
  auto add = [&](std::string text) {
    if (differences.size() < limit) differences.push_back(std::move(text));
  };
  if (recorded.substr(0, recorded.find('\n')) != current.substr(0, current.find('\n'))) {
    add("the manifest format differs");
  }
  auto before = IndexManifest(recorded);
  auto after = IndexManifest(current);
  for (const auto& [path, line] : before) {
    auto found = after.find(path);
    if (found == after.end()) {
      add(std::string(path) + ": missing (recorded as \"" + std::string(line) + "\")");
    } else if (found->second != line) {
      add(std::string(path) + ": recorded \"" + std::string(line) + "\", now \"" +
          std::string(found->second) + "\"");
    }
  }
  for (const auto& [path, line] : after) {
    if (!before.contains(path))
      add(std::string(path) + ": not recorded (now \"" + std::string(line) + "\")");
  }
  return differences;
}

}  // namespace plimsoll::image
