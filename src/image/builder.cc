#include "image/builder.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "image/held_image.h"
#include "image/image.h"
#include "image/image_files.h"
#include "image/language_packages.h"
#include "image/manifest.h"
#include "image/process.h"

namespace plimsoll::image {
namespace {

namespace fs = std::filesystem;

constexpr const char* kAgentName = "plimsoll-guest";
constexpr const char* kQjsName = "qjs";
constexpr const char* kTrialName = "plimsoll-trial";  // the exam runner (docs/exams.md)
constexpr const char* kCcName = "plimsoll-cc";        // C controllers (docs/exams.md)
constexpr const char* kWasmControllerName = "plimsoll-wasm-controller";
constexpr const char* kModelName = "plimsoll-model";       // module runs (docs/exams.md)
constexpr const char* kBinaryDirectory = "usr/local/bin";  // protocol.h kAgentPath, kQjsPath
constexpr const char* kCompleteMarker = "complete";
constexpr const char* kRetiredSuffix = ".retired-";

Status RemoveTree(const fs::path& path);

class MmdebstrapBuilder final : public BaseTreeBuilder {
 public:
  Expected<std::string> ToolVersion() override {
    auto output = CaptureOutput({"mmdebstrap", "--version"});
    if (!output.ok()) {
      return output.error().WithContext(
          "mmdebstrap is needed to build the guest image (scripts/bootstrap installs it)");
    }
    std::string version = *output;
    while (!version.empty() && version.back() == '\n') version.pop_back();
    return version;
  }

  Status Build(const Recipe& recipe, const fs::path& root, std::ostream& progress) override {
    std::vector<std::string> environment;
    if (!recipe.source_date_epoch.empty()) {
      environment.push_back("SOURCE_DATE_EPOCH=" + recipe.source_date_epoch);
    }
    // Fixed locale and umask-independent output: the hooks and dpkg see the
    // same environment on every machine.
    environment.push_back("LC_ALL=C.UTF-8");
    progress << "image: running mmdebstrap (" << recipe.suite << ", " << recipe.variant
             << "); its progress follows" << std::endl;
    mode_t old_mask = umask(022);
    Status status = RunProcess(MmdebstrapArguments(recipe, root), environment);
    if (status.ok()) status = InstallPythonRequirements(recipe, root, progress);
    if (status.ok()) status = InstallPythonSiteFiles(recipe, root, progress);
    if (status.ok()) status = InstallNpmProjects(recipe, root, progress);
    umask(old_mask);
    if (!status.ok()) return status;
    return EmptyDeviceDirectory(root);
  }

 private:
  // mmdebstrap leaves device nodes in /dev (made with mknod as root, absent
  // in its unshare mode). Every provider mounts its own /dev, so the image
  // keeps an empty directory: no device nodes in a shared tree, and the same
  // tree whichever mode built it. (Not done in a customize hook: /dev is
  // partly bind-mounted from the host while hooks run.)
  static Status EmptyDeviceDirectory(const fs::path& root) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(root / "dev", error)) {
      PLIMSOLL_RETURN_IF_ERROR(RemoveTree(entry.path()));
    }
    if (error) return SystemError("list " + (root / "dev").string(), error.value());
    return Status::Ok();
  }
};

// Holds an exclusive flock on a file for its lifetime.
class FileLock {
 public:
  static Expected<FileLock> Acquire(const fs::path& file, std::ostream& progress) {
    int fd = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return SystemError("open " + file.string(), errno);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      progress << "image: waiting for another build holding " << file.string() << std::endl;
      while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
          int saved = errno;
          close(fd);
          return SystemError("flock " + file.string(), saved);
        }
      }
    }
    return FileLock(fd);
  }
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

// Removes a tree, but never one with something mounted inside it (a crashed
// mmdebstrap may leave the host's /dev or /proc mounted in its target).
Status RemoveTree(const fs::path& path) {
  std::error_code error;
  if (!fs::exists(fs::symlink_status(path, error))) return Status::Ok();
  fs::path absolute = fs::absolute(path, error).lexically_normal();
  std::ifstream mounts("/proc/self/mountinfo");
  for (std::string line; std::getline(mounts, line);) {
    // Field 5 is the mount point (octal escapes for spaces; fine for ours).
    size_t position = 0;
    for (int field = 0; field < 4 && position != std::string::npos; ++field) {
      position = line.find(' ', position);
      if (position != std::string::npos) ++position;
    }
    if (position == std::string::npos) continue;
    std::string mount_point = line.substr(position, line.find(' ', position) - position);
    std::string prefix = absolute.string();
    if (mount_point == prefix || mount_point.rfind(prefix + "/", 0) == 0) {
      return Failure(
          ErrorCode::kFailedPrecondition,
          "Refusing to remove " + prefix + ": " + mount_point +
              " is mounted inside it (left by an interrupted mmdebstrap?). Unmount it first.");
    }
  }
  fs::remove_all(path, error);
  if (error) return SystemError("remove " + path.string(), error.value());
  return Status::Ok();
}

Status WriteFileAtomically(const fs::path& file, std::string_view content) {
  fs::path temporary = file;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) return Failure(ErrorCode::kInternal, "Cannot write " + temporary.string() + ".");
  }
  std::error_code error;
  fs::rename(temporary, file, error);
  if (error) return SystemError("rename " + temporary.string(), error.value());
  return Status::Ok();
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", seconds);
  return text;
}

// Ensures CACHE/base-<key> holds a complete base tree; returns its path.
Expected<fs::path> EnsureBase(const Recipe& recipe, const std::string& key,
                              const BuildOptions& options, BaseTreeBuilder& base_builder,
                              std::ostream& progress, bool& was_cached) {
  std::error_code error;
  fs::create_directories(options.cache, error);
  if (error) return SystemError("mkdir " + options.cache.string(), error.value());
  std::string name = "base-" + key.substr(0, 16);
  fs::path base = options.cache / name;
  auto lock = FileLock::Acquire(options.cache / (name + ".lock"), progress);
  if (!lock.ok()) return lock.error();

  if (!options.rebuild_base && fs::exists(base / kCompleteMarker, error)) {
    was_cached = true;
    progress << "image: base tree " << base.string() << " is cached" << std::endl;
    return base;
  }
  was_cached = false;
  fs::path partial = options.cache / (name + ".partial");
  PLIMSOLL_RETURN_IF_ERROR(RemoveTree(partial));
  fs::create_directories(partial, error);
  if (error) return SystemError("mkdir " + partial.string(), error.value());
  auto start = std::chrono::steady_clock::now();
  Status built = base_builder.Build(recipe, partial / kRootfsName, progress);
  if (!built.ok()) return built.error().WithContext("Building the base tree failed");
  auto canonical = CanonicalRecipe(recipe);
  if (!canonical.ok()) return canonical.error();
  PLIMSOLL_RETURN_IF_ERROR(WriteFileAtomically(partial / "recipe", *canonical));
  PLIMSOLL_RETURN_IF_ERROR(WriteFileAtomically(partial / kCompleteMarker, key + "\n"));
  PLIMSOLL_RETURN_IF_ERROR(RemoveTree(base));
  fs::rename(partial, base, error);
  if (error) return SystemError("rename " + partial.string(), error.value());
  progress << "image: base tree built in " << Seconds(SecondsSince(start)) << " -> "
           << base.string() << std::endl;
  return base;
}

Status InstallBinary(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
  if (error) return SystemError("copy " + from.string() + " to " + to.string(), error.value());
  if (chmod(to.c_str(), 0755) != 0) return SystemError("chmod " + to.string(), errno);
  // Everything else in the tree belongs to root; so do ours, when we can.
  if (geteuid() == 0 && chown(to.c_str(), 0, 0) != 0)
    return SystemError("chown " + to.string(), errno);
  return Status::Ok();
}

bool SameDevice(const fs::path& a, const fs::path& b) {
  struct stat first {
  }, second{};
  return stat(a.c_str(), &first) == 0 && stat(b.c_str(), &second) == 0 &&
         first.st_dev == second.st_dev;
}

// Renames OUTPUT/rootfs out of the way (OUTPUT/rootfs.retired-<pid>-<ns>),
// then removes every retired tree nobody holds (see builder.h).
Status RetireTree(const fs::path& output, std::ostream& progress) {
  std::error_code error;
  fs::path current = output / kRootfsName;
  if (fs::exists(fs::symlink_status(current, error))) {
    auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    fs::path retired = output / (std::string(kRootfsName) + kRetiredSuffix +
                                 std::to_string(getpid()) + "-" + std::to_string(now));
    fs::rename(current, retired, error);
    if (error) return SystemError("rename " + current.string(), error.value());
  }
  size_t kept = 0;
  for (const auto& entry : fs::directory_iterator(output, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(std::string(kRootfsName) + kRetiredSuffix, 0) != 0) continue;
    base::UniqueFd lock = LockTreeForRemoval(entry.path());
    if (!lock.valid()) {
      ++kept;
      continue;
    }
    PLIMSOLL_RETURN_IF_ERROR(RemoveTree(entry.path()));
  }
  if (kept > 0) {
    progress << "image: kept " << kept << " retired tree(s) still held by a running provider; "
             << "a later build removes them" << std::endl;
  }
  return Status::Ok();
}

}  // namespace

std::unique_ptr<BaseTreeBuilder> MakeMmdebstrapBuilder() {
  return std::make_unique<MmdebstrapBuilder>();
}

Expected<bool> IsStaticElf(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Failure(ErrorCode::kNotFound, "Cannot read " + file.string() + ".");
  Elf64_Ehdr header{};
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  if (!in || std::string_view(reinterpret_cast<const char*>(header.e_ident), SELFMAG) != ELFMAG ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr)) {
    return Failure(ErrorCode::kInvalidArgument, file.string() + " is not a 64-bit ELF executable.");
  }
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr program{};
    in.seekg(static_cast<std::streamoff>(header.e_phoff + i * sizeof program));
    in.read(reinterpret_cast<char*>(&program), sizeof program);
    if (!in)
      return Failure(ErrorCode::kInvalidArgument,
                     file.string() + " has a truncated program header.");
    if (program.p_type == PT_INTERP) return false;
  }
  return true;
}

Expected<BuildResult> BuildImage(const BuildOptions& options, BaseTreeBuilder& base_builder,
                                 std::ostream& progress) {
  auto start = std::chrono::steady_clock::now();
  auto recipe = LoadRecipe(options.recipe_file);
  if (!recipe.ok()) return recipe.error();

  // Our binaries first: a missing one should fail before a 40 s bootstrap.
  struct Binary {
    const char* name;
    bool required;
    const char* without;  // what an image without it cannot do
    std::string digest;   // empty when absent
  };
  std::vector<Binary> binaries = {
      {kAgentName, options.require_agent, "the OS-level providers cannot run without it", {}},
      {kQjsName, true, "", {}},
      {kTrialName, options.require_agent, "exams cannot run in it", {}},
      {kCcName, options.require_agent, "C controllers cannot be compiled in it", {}},
      {kWasmControllerName, options.require_agent, "C controllers cannot run in it", {}},
      {kModelName, options.require_agent, "module runs cannot run in it", {}}};
  for (Binary& binary : binaries) {
    fs::path path = options.guest_bin / binary.name;
    std::error_code error;
    if (!fs::exists(path, error)) {
      if (binary.required) {
        return Failure(ErrorCode::kNotFound,
                       path.string() +
                           " does not exist: build the guest binaries "
                           "first (CMake target guest_binaries) or pass --guest-bin.");
      }
      progress << "image: WARNING: " << path.string() << " does not exist; the image will have no "
               << binary.name << " (" << binary.without << ")" << std::endl;
      continue;
    }
    auto is_static = IsStaticElf(path);
    if (!is_static.ok()) return is_static.error();
    if (!*is_static) {
      return Failure(ErrorCode::kFailedPrecondition,
                     path.string() +
                         " is dynamically linked; the image takes static binaries only "
                         "(build them with cmake/GuestBinaries.cmake).");
    }
    auto digest = Sha256OfFile(path);
    if (!digest.ok()) return digest.error();
    binary.digest = *digest;
  }

  auto tool_version = base_builder.ToolVersion();
  if (!tool_version.ok()) return tool_version.error();
  auto key = RecipeCacheKey(*recipe, *tool_version);
  if (!key.ok()) return key.error();

  BuildResult result;
  result.has_agent = !binaries[0].digest.empty();
  auto base = EnsureBase(*recipe, *key, options, base_builder, progress, result.base_was_cached);
  if (!base.ok()) return base.error();
  result.base = *base;

  std::string inputs = "base " + *key + "\n";
  for (const Binary& binary : binaries) {
    inputs +=
        std::string(binary.name) + " " + (binary.digest.empty() ? "absent" : binary.digest) + "\n";
  }
  inputs += "owner " + std::to_string(geteuid()) + "\n";

  std::error_code error;
  fs::create_directories(options.output, error);
  if (error) return SystemError("mkdir " + options.output.string(), error.value());
  if (internal::ReadSmallFile(options.output / kInputsName) == inputs) {
    if (auto existing = OpenImage(options.output); existing.ok()) {
      result.identity = existing->identity;
      result.unchanged = true;
      progress << "image: " << options.output.string() << " is up to date (" << result.identity
               << ")" << std::endl;
      return result;
    }
  }

  // Invalidate first (the identity goes first, so an interrupted assembly
  // is never mistaken for an image), then assemble beside the old tree.
  for (const char* name : {kIdentityName, kManifestName, kInputsName})
    fs::remove(options.output / name, error);
  fs::path partial = options.output / "rootfs.partial";
  PLIMSOLL_RETURN_IF_ERROR(RemoveTree(partial));
  PLIMSOLL_RETURN_IF_ERROR(RetireTree(options.output, progress));
  auto assembly_start = std::chrono::steady_clock::now();
  bool link = SameDevice(*base, options.output);
  progress << "image: assembling " << options.output.string() << " ("
           << (link ? "hardlink copy of the base" : "full copy: the cache is on another filesystem")
           << ")" << std::endl;
  PLIMSOLL_RETURN_IF_ERROR(RunProcess(
      {"cp", link ? "-al" : "-a", (*base / kRootfsName).string(), partial.string()}, {}));
  fs::create_directories(partial / kBinaryDirectory, error);
  if (error) return SystemError("mkdir " + (partial / kBinaryDirectory).string(), error.value());
  for (const Binary& binary : binaries) {
    if (binary.digest.empty()) continue;
    PLIMSOLL_RETURN_IF_ERROR(
        InstallBinary(options.guest_bin / binary.name, partial / kBinaryDirectory / binary.name));
  }
  fs::rename(partial, options.output / kRootfsName, error);
  if (error) return SystemError("rename " + partial.string(), error.value());

  auto manifest_start = std::chrono::steady_clock::now();
  auto manifest = BuildManifest(options.output / kRootfsName);
  if (!manifest.ok()) return manifest.error().WithContext("Cannot read the assembled tree");
  result.identity = IdentityOfManifest(*manifest);
  PLIMSOLL_RETURN_IF_ERROR(WriteFileAtomically(options.output / kManifestName, *manifest));
  PLIMSOLL_RETURN_IF_ERROR(WriteFileAtomically(options.output / kInputsName, inputs));
  PLIMSOLL_RETURN_IF_ERROR(
      WriteFileAtomically(options.output / kIdentityName, result.identity + "\n"));
  progress << "image: assembled in " << Seconds(SecondsSince(assembly_start)) << " (manifest "
           << Seconds(SecondsSince(manifest_start)) << "), total " << Seconds(SecondsSince(start))
           << std::endl;
  progress << "image: " << options.output.string() << " is " << result.identity << std::endl;
  return result;
}

}  // namespace plimsoll::image
