#include "image/image_contents.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <tuple>

#include "base/unique_fd.h"

namespace plimsoll::image {
namespace {

namespace fs = std::filesystem;

constexpr size_t kStatusCap = size_t{64} << 20;
constexpr size_t kFileCap = size_t{1} << 20;

// The image tree, read through descriptors: every path is walked one
// component at a time from the root with O_NOFOLLOW, so no symbolic link
// anywhere in a path is followed and nothing outside the tree is opened.
class Tree {
 public:
  explicit Tree(base::UniqueFd root) : root_(std::move(root)) {}

  // The directory at `relative` ("" = the root), or an invalid fd.
  base::UniqueFd OpenDirectory(const fs::path& relative) const {
    base::UniqueFd current(::fcntl(root_.get(), F_DUPFD_CLOEXEC, 0));
    for (const fs::path& part : relative) {
      if (!current.valid()) break;
      if (part.empty() || part == "." || part == "..") return base::UniqueFd();
      current = base::UniqueFd(::openat(current.get(), part.c_str(),
                                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    }
    return current;
  }

  // The whole of the regular file at `relative`, or nullopt when it is
  // missing, not a regular file (a link included), or above `cap` bytes.
  std::optional<std::string> Read(const fs::path& relative, size_t cap) const {
    base::UniqueFd parent = OpenDirectory(relative.parent_path());
    if (!parent.valid()) return std::nullopt;
    base::UniqueFd fd(::openat(parent.get(), relative.filename().c_str(),
                               O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) return std::nullopt;
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
    if (static_cast<uint64_t>(info.st_size) > cap) return std::nullopt;
    std::string content;
    char buffer[65536];
    while (true) {
      ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return std::nullopt;
      if (got == 0) break;
      if (content.size() + static_cast<size_t>(got) > cap) return std::nullopt;
      content.append(buffer, static_cast<size_t>(got));
    }
    return content;
  }

  // Whether `relative` names a regular file or a symbolic link (python3 and
  // node are links in Debian: python3 -> python3.11), not followed.
  bool HasProgram(const fs::path& relative) const {
    base::UniqueFd parent = OpenDirectory(relative.parent_path());
    struct stat info {};
    return parent.valid() &&
           ::fstatat(parent.get(), relative.filename().c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
           (S_ISREG(info.st_mode) || S_ISLNK(info.st_mode));
  }

  // The names of the real directories (not links) in `relative`, sorted.
  std::vector<std::string> Subdirectories(const fs::path& relative) const {
    std::vector<std::string> out;
    base::UniqueFd fd = OpenDirectory(relative);
    if (!fd.valid()) return out;
    DIR* directory = ::fdopendir(fd.Release());
    if (directory == nullptr) return out;
    while (const dirent* entry = ::readdir(directory)) {
      std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      struct stat info {};
      if (::fstatat(::dirfd(directory), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISDIR(info.st_mode)) {
        out.emplace_back(name);
      }
    }
    ::closedir(directory);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  base::UniqueFd root_;
};

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// Calls `field(name, value)` for each "Name: value" line of one RFC 822
// style paragraph at a time; `end()` after each paragraph (a blank line or
// the end). Continuation lines (starting with a space) are ignored.
template <typename Field, typename End>
void ForEachHeader(std::string_view text, Field field, End end) {
  bool any = false;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (Trim(line).empty()) {
      if (any) end();
      any = false;
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    any = true;
    field(line.substr(0, colon), Trim(line.substr(colon + 1)));
  }
  if (any) end();
}

void ReadDebian(const Tree& tree, std::vector<ImagePackage>& out) {
  std::optional<std::string> status = tree.Read("var/lib/dpkg/status", kStatusCap);
  if (!status) return;
  std::string name, version, state;
  ForEachHeader(
      *status,
      [&](std::string_view key, std::string_view value) {
        if (key == "Package") name = value;
        if (key == "Version") version = value;
        if (key == "Status") state = value;
      },
      [&] {
        if (!name.empty() && !version.empty() && state == "install ok installed") {
          out.push_back({name, version, "debian"});
        }
        name.clear();
        version.clear();
        state.clear();
      });
}

// Name and Version from the metadata headers (only the first paragraph: the
// body after it is the package's description).
void ReadPythonMetadata(const Tree& tree, const fs::path& file, std::vector<ImagePackage>& out) {
  std::optional<std::string> text = tree.Read(file, kFileCap);
  if (!text) return;
  std::string name, version;
  bool done = false;
  ForEachHeader(
      *text,
      [&](std::string_view key, std::string_view value) {
        if (done) return;
        if (key == "Name" && name.empty()) name = value;
        if (key == "Version" && version.empty()) version = value;
      },
      [&] { done = true; });
  if (!name.empty() && !version.empty()) out.push_back({name, version, "python"});
}

void ReadPythonDirectory(const Tree& tree, const fs::path& site,
                         std::vector<ImagePackage>& out) {
  for (const std::string& entry : tree.Subdirectories(site)) {
    const std::string extension = fs::path(entry).extension().string();
    if (extension == ".dist-info") ReadPythonMetadata(tree, site / entry / "METADATA", out);
    if (extension == ".egg-info") ReadPythonMetadata(tree, site / entry / "PKG-INFO", out);
  }
}

void ReadPython(const Tree& tree, std::vector<ImagePackage>& out) {
  ReadPythonDirectory(tree, "usr/lib/python3/dist-packages", out);
  for (const std::string& version : tree.Subdirectories("usr/local/lib")) {
    if (version.rfind("python3", 0) == 0) {
      ReadPythonDirectory(tree, fs::path("usr/local/lib") / version / "dist-packages", out);
    }
  }
}

void ReadNpmPackage(const Tree& tree, const fs::path& directory,
                    std::vector<ImagePackage>& out) {
  std::optional<std::string> text = tree.Read(directory / "package.json", kFileCap);
  if (!text) return;
  nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return;
  auto name = json.find("name");
  auto version = json.find("version");
  if (name == json.end() || version == json.end() || !name->is_string() ||
      !version->is_string()) {
    return;
  }
  out.push_back({name->get<std::string>(), version->get<std::string>(), "npm"});
}

void ReadNpm(const Tree& tree, std::vector<ImagePackage>& out) {
  const fs::path modules = "usr/share/nodejs";
  for (const std::string& entry : tree.Subdirectories(modules)) {
    if (entry.front() == '@') {
      for (const std::string& scoped : tree.Subdirectories(modules / entry)) {
        ReadNpmPackage(tree, modules / entry / scoped, out);
      }
    } else {
      ReadNpmPackage(tree, modules / entry, out);
    }
  }
}

}  // namespace

Expected<ImageContents> ReadImageContents(const fs::path& rootfs) {
  base::UniqueFd root(::open(rootfs.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root.valid()) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "The image tree " + rootfs.string() + " is not a directory.");
  }
  const Tree tree(std::move(root));
  ImageContents contents;
  if (tree.HasProgram("usr/local/bin/qjs")) contents.languages.push_back("javascript");
  if (tree.HasProgram("usr/bin/python3")) contents.languages.push_back("python");
  if (tree.HasProgram("usr/bin/node")) contents.languages.push_back("node");
  ReadDebian(tree, contents.packages);
  ReadPython(tree, contents.packages);
  ReadNpm(tree, contents.packages);
  std::sort(contents.packages.begin(), contents.packages.end(),
            [](const ImagePackage& a, const ImagePackage& b) {
              return std::tie(a.source, a.name, a.version) < std::tie(b.source, b.name, b.version);
            });
  return contents;
}

}  // namespace plimsoll::image
