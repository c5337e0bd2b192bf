#include "image/language_packages.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "image/image_files.h"
#include "image/process.h"

namespace plimsoll::image {
namespace {

namespace fs = std::filesystem;

constexpr int kOldestManylinuxGlibc = 17;  // manylinux_2_17 is manylinux2014

Error Bad(const fs::path& file, int line, std::string message) {
  return Failure(ErrorCode::kInvalidArgument,
                 file.string() + " line " + std::to_string(line) + ": " + std::move(message));
}

Expected<std::string> ReadText(const fs::path& file) {
  std::optional<std::string> text = internal::ReadSmallFile(file);
  if (!text) return Failure(ErrorCode::kNotFound, "Cannot read " + file.string() + ".");
  return std::move(*text);
}

bool IsHex(std::string_view text) {
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// The glibc minor version of the tree ("release version 2.36" in its libc.so.6).
Expected<int> TreeGlibcMinor(const fs::path& root) {
  for (const char* candidate :
       {"usr/lib/x86_64-linux-gnu/libc.so.6", "lib/x86_64-linux-gnu/libc.so.6"}) {
    auto bytes = ReadText(root / candidate);
    if (!bytes.ok()) continue;
    constexpr std::string_view kMarker = "release version 2.";
    size_t at = bytes->find(kMarker);
    if (at == std::string::npos) continue;
    int minor = std::atoi(bytes->c_str() + at + kMarker.size());
    if (minor >= kOldestManylinuxGlibc) return minor;
  }
  return Failure(ErrorCode::kFailedPrecondition,
                 "Cannot tell the glibc version of " + root.string() +
                     " (no x86_64 libc.so.6 naming it): pip_requirements needs it to pick wheels.");
}

Status RunIn(const std::vector<std::string>& argv, const fs::path& directory) {
  // RunProcess has no working-directory option; `env -C` gives one without a shell.
  std::vector<std::string> in_directory = {"env", "-C", directory.string()};
  in_directory.insert(in_directory.end(), argv.begin(), argv.end());
  return RunProcess(in_directory, {"LC_ALL=C.UTF-8"});
}

// Gives a host-made file tree the owner and modes of the rest of the image (root, no
// group- or world-writable bits), whatever the host's umask and user were.
Status NormaliseOwnership(const fs::path& top) {
  std::error_code error;
  auto fix = [](const fs::path& path) -> Status {
    struct stat info {};
    if (lstat(path.c_str(), &info) != 0) return SystemError("lstat " + path.string(), errno);
    if (geteuid() == 0 && lchown(path.c_str(), 0, 0) != 0)
      return SystemError("chown " + path.string(), errno);
    if (!S_ISLNK(info.st_mode) &&
        chmod(path.c_str(), info.st_mode & 07755 & ~S_ISUID & ~S_ISGID) != 0)
      return SystemError("chmod " + path.string(), errno);
    return Status::Ok();
  };
  PLIMSOLL_RETURN_IF_ERROR(fix(top));
  for (auto it = fs::recursive_directory_iterator(top, error); !error && it != fs::end(it);
       it.increment(error)) {
    PLIMSOLL_RETURN_IF_ERROR(fix(it->path()));
  }
  if (error) return SystemError("list " + top.string(), error.value());
  return Status::Ok();
}

// Moves the console scripts pip wrote (TARGET/bin) to the tree's /usr/local/bin, their
// "#!<the build host's python>" line made "#!/usr/bin/python3" (the tree's). A name the tree
// has already is an error.
Status InstallScripts(const fs::path& from, const fs::path& to) {
  std::error_code error;
  if (!fs::exists(from, error)) return Status::Ok();
  fs::create_directories(to, error);
  if (error) return SystemError("mkdir " + to.string(), error.value());
  for (const auto& entry : fs::directory_iterator(from, error)) {
    fs::path destination = to / entry.path().filename();
    if (fs::exists(fs::symlink_status(destination))) {
      return Failure(ErrorCode::kFailedPrecondition,
                     "A wheel's script " + destination.string() + " is there already.");
    }
    auto text = ReadText(entry.path());
    if (!text.ok()) return text.error();
    if (text->rfind("#!", 0) == 0 &&
        text->substr(0, text->find('\n')).find("python") != std::string::npos) {
      *text = "#!/usr/bin/python3" + text->substr(text->find('\n'));
    }
    std::ofstream out(destination, std::ios::binary | std::ios::trunc);
    out.write(text->data(), static_cast<std::streamsize>(text->size()));
    out.close();
    if (!out) return Failure(ErrorCode::kInternal, "Cannot write " + destination.string() + ".");
    if (chmod(destination.c_str(), 0755) != 0)
      return SystemError("chmod " + destination.string(), errno);
    if (geteuid() == 0 && chown(destination.c_str(), 0, 0) != 0)
      return SystemError("chown " + destination.string(), errno);
  }
  if (error) return SystemError("list " + from.string(), error.value());
  fs::remove_all(from, error);
  return Status::Ok();
}

}  // namespace

Expected<std::string> TreePythonVersion(const fs::path& root) {
  std::error_code error;
  fs::path link = fs::read_symlink(root / "usr/bin/python3", error);
  std::string name = link.filename().string();
  if (error || name.rfind("python3.", 0) != 0 ||
      name.find_first_not_of("0123456789", 8) != std::string::npos || name.size() == 8) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "The tree " + root.string() +
                       " has no /usr/bin/python3 linked to python3.N: pip_requirements needs the "
                       "image's Python (add python3-minimal to packages).");
  }
  return name.substr(6);
}

Status CheckPinnedRequirements(std::string_view text) {
  // Joins backslash continuations, as pip does, then checks each logical line.
  std::string joined;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      joined += ' ';
      continue;
    }
    joined += text[i];
  }
  std::istringstream lines(joined);
  int number = 0;
  int requirements = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (size_t hash = line.find(" #"); hash != std::string::npos) line.resize(hash);
    if (!line.empty() && line.front() == '#') continue;
    std::istringstream words(line);
    std::string requirement;
    if (!(words >> requirement)) continue;
    if (requirement.front() == '-') {
      return Bad("requirements", number,
                 "\"" + requirement +
                     "\": only `name==version --hash=sha256:...` lines are "
                     "allowed (no options, indexes or other files).");
    }
    size_t equals = requirement.find("==");
    if (equals == std::string::npos || equals == 0 || equals + 2 == requirement.size() ||
        requirement.find_first_of("<>!~;@[", 0) != std::string::npos) {
      return Bad("requirements", number, "\"" + requirement + "\" is not pinned as name==version.");
    }
    int hashes = 0;
    for (std::string option; words >> option;) {
      constexpr std::string_view kHash = "--hash=sha256:";
      if (option.rfind(kHash, 0) != 0 || option.size() != kHash.size() + 64 ||
          !IsHex(std::string_view(option).substr(kHash.size()))) {
        return Bad("requirements", number,
                   "\"" + option + "\": expected --hash=sha256: and 64 lowercase hex digits.");
      }
      ++hashes;
    }
    if (hashes == 0) {
      return Bad("requirements", number, "\"" + requirement + "\" has no --hash=sha256:.");
    }
    ++requirements;
  }
  if (requirements == 0) {
    return Failure(ErrorCode::kInvalidArgument, "The requirements file names no package.");
  }
  return Status::Ok();
}

std::vector<std::string> PipInstallArguments(const fs::path& requirements, const fs::path& target,
                                             std::string_view version, int glibc_minor) {
  std::string abi = "cp";
  for (char c : version)
    if (c != '.') abi += c;
  std::vector<std::string> argv = {"python3",
                                   "-m",
                                   "pip",
                                   "install",
                                   "--disable-pip-version-check",
                                   "--no-input",
                                   "--no-cache-dir",
                                   "--root-user-action=ignore",
                                   "--require-hashes",
                                   "--no-deps",
                                   "--only-binary=:all:",
                                   "--no-compile",
                                   "--implementation",
                                   "cp",
                                   "--python-version",
                                   std::string(version),
                                   "--abi",
                                   abi};
  // pip takes the platforms literally: list every manylinux tag the tree's glibc can run.
  for (int minor = glibc_minor; minor >= kOldestManylinuxGlibc; --minor) {
    argv.push_back("--platform");
    argv.push_back("manylinux_2_" + std::to_string(minor) + "_x86_64");
  }
  for (const char* legacy : {"manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"}) {
    argv.push_back("--platform");
    argv.push_back(legacy);
  }
  argv.insert(argv.end(), {"--target", target.string(), "-r", requirements.string()});
  return argv;
}

namespace {

// The tree's own interpreter writes the .pyc files of `paths` (files or directories; its magic
// number, its paths), with hashes instead of timestamps, so two builds give the same bytes. The
// guest's / is read-only, so without them every import would compile again.
Status CompileInTree(const Recipe& recipe, const fs::path& root,
                     const std::vector<std::string>& paths) {
  std::vector<std::string> argv = {
      "chroot", root.string(),         "/usr/bin/python3", "-m", "compileall", "-q", "-j",
      "1",      "--invalidation-mode", "unchecked-hash"};
  argv.insert(argv.end(), paths.begin(), paths.end());
  return RunProcess(
      argv,
      {"PYTHONHASHSEED=0", "LC_ALL=C.UTF-8",
       "SOURCE_DATE_EPOCH=" + (recipe.source_date_epoch.empty() ? "0" : recipe.source_date_epoch)});
}

}  // namespace

Status InstallPythonRequirements(const Recipe& recipe, const fs::path& root,
                                 std::ostream& progress) {
  if (recipe.pip_requirements.empty()) return Status::Ok();
  auto version = TreePythonVersion(root);
  if (!version.ok()) return version.error();
  auto glibc = TreeGlibcMinor(root);
  if (!glibc.ok()) return glibc.error();
  std::string site = "usr/local/lib/python" + *version + "/dist-packages";
  fs::path staging = root.parent_path() / "pip-staging";
  std::error_code error;
  for (const fs::path& requirements : recipe.pip_requirements) {
    auto text = ReadText(requirements);
    if (!text.ok()) return text.error();
    Status pinned = CheckPinnedRequirements(*text);
    if (!pinned.ok()) return pinned.error().WithContext(requirements.string());
    progress << "image: pip: wheels from " << requirements.string() << " (hashes required) for "
             << "Python " << *version << ", glibc 2." << *glibc << std::endl;
    // Into a staging directory first: pip --target would replace a package of the tree's
    // dist-packages silently; here a clash is an error.
    fs::remove_all(staging, error);
    PLIMSOLL_RETURN_IF_ERROR(
        RunProcess(PipInstallArguments(requirements, staging, *version, *glibc), {}));
    PLIMSOLL_RETURN_IF_ERROR(InstallScripts(staging / "bin", root / "usr/local/bin"));
    fs::create_directories(root / site, error);
    if (error) return SystemError("mkdir " + (root / site).string(), error.value());
    for (const auto& entry : fs::directory_iterator(staging, error)) {
      fs::path destination = root / site / entry.path().filename();
      if (fs::exists(fs::symlink_status(destination))) {
        return Failure(ErrorCode::kFailedPrecondition, requirements.string() + ": /" + site + "/" +
                                                           entry.path().filename().string() +
                                                           " is there already.");
      }
      fs::rename(entry.path(), destination, error);
      if (error) return SystemError("rename into " + destination.string(), error.value());
    }
    if (error) return SystemError("list " + staging.string(), error.value());
    fs::remove_all(staging, error);
  }
  PLIMSOLL_RETURN_IF_ERROR(NormaliseOwnership(root / site));
  progress << "image: pip: compiling /" << site << " with the tree's python3" << std::endl;
  return CompileInTree(recipe, root, {"/" + site});
}

Status InstallPythonSiteFiles(const Recipe& recipe, const fs::path& root, std::ostream& progress) {
  if (recipe.python_site.empty()) return Status::Ok();
  auto version = TreePythonVersion(root);
  if (!version.ok()) return version.error();
  std::string site = "usr/local/lib/python" + *version + "/dist-packages";
  std::error_code error;
  fs::create_directories(root / site, error);
  if (error) return SystemError("mkdir " + (root / site).string(), error.value());
  std::vector<std::string> compile;
  for (const fs::path& file : recipe.python_site) {
    fs::path destination = root / site / file.filename();
    if (fs::exists(fs::symlink_status(destination))) {
      return Failure(ErrorCode::kFailedPrecondition, "python_site " + file.string() + ": /" + site +
                                                         "/" + file.filename().string() +
                                                         " is there already.");
    }
    fs::copy_file(file, destination, error);
    if (error) return SystemError("copy " + file.string(), error.value());
    fs::permissions(destination, fs::perms(0644), error);
    if (error) return SystemError("chmod " + destination.string(), error.value());
    if (file.extension() == ".py") compile.push_back("/" + site + "/" + file.filename().string());
  }
  PLIMSOLL_RETURN_IF_ERROR(NormaliseOwnership(root / site));
  progress << "image: python_site: " << recipe.python_site.size() << " files into /" << site
           << std::endl;
  if (compile.empty()) return Status::Ok();
  return CompileInTree(recipe, root, compile);
}

Status InstallNpmProjects(const Recipe& recipe, const fs::path& root, std::ostream& progress) {
  constexpr const char* kGlobalModules = "usr/share/nodejs";  // on Debian node's global path
  std::error_code error;
  for (const fs::path& project : recipe.npm_projects) {
    fs::path staging = root.parent_path() / "npm-staging";
    fs::remove_all(staging, error);
    fs::create_directories(staging, error);
    if (error) return SystemError("mkdir " + staging.string(), error.value());
    for (const char* name : {"package.json", "package-lock.json"}) {
      fs::copy_file(project / name, staging / name, error);
      if (error) {
        return Failure(ErrorCode::kNotFound, "npm_project " + project.string() + " needs " + name +
                                                 " (" + error.message() + ").");
      }
    }
    progress << "image: npm: npm ci of " << project.string() << " (lockfile integrity, no "
             << "install scripts)" << std::endl;
    PLIMSOLL_RETURN_IF_ERROR(RunIn({"npm", "ci", "--omit=dev", "--ignore-scripts", "--no-audit",
                                    "--no-fund", "--loglevel=error"},
                                   staging));
    fs::create_directories(root / kGlobalModules, error);
    if (error) return SystemError("mkdir " + (root / kGlobalModules).string(), error.value());
    std::vector<fs::path> packages;
    for (const auto& entry : fs::directory_iterator(staging / "node_modules", error)) {
      std::string name = entry.path().filename().string();
      if (name.front() == '.') continue;  // .bin (links to host paths), .package-lock.json
      if (name.front() == '@') {          // a scope: its packages one by one
        for (const auto& scoped : fs::directory_iterator(entry.path(), error))
          packages.push_back(fs::path(name) / scoped.path().filename());
      } else {
        packages.push_back(name);
      }
    }
    if (error) return SystemError("list " + (staging / "node_modules").string(), error.value());
    for (const fs::path& package : packages) {
      fs::path destination = root / kGlobalModules / package;
      if (fs::exists(fs::symlink_status(destination))) {
        return Failure(ErrorCode::kFailedPrecondition,
                       "npm_project " + project.string() + ": /" + kGlobalModules + "/" +
                           package.string() + " is there already (a Debian node-* package?).");
      }
      fs::create_directories(destination.parent_path(), error);
      fs::rename(staging / "node_modules" / package, destination, error);
      if (error) return SystemError("rename into " + destination.string(), error.value());
      PLIMSOLL_RETURN_IF_ERROR(NormaliseOwnership(destination));
    }
    fs::remove_all(staging, error);
  }
  return Status::Ok();
}

}  // namespace plimsoll::image
