#include "image/image.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "image/image_files.h"
#include "image/manifest.h"

namespace plimsoll::image {
using internal::EnvironmentRefusal;
using internal::ReadSmallFile;
using internal::Trimmed;

Expected<Image> OpenImage(const std::filesystem::path& given) {
  // Sandboxes bind the rootfs from another working directory: always absolute.
  std::error_code error;
  std::filesystem::path directory = std::filesystem::absolute(given, error);
  if (error) directory = given;
  struct stat info {};
  if (stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return EnvironmentRefusal("The guest image " + directory.string() +
                              " does not exist; build it with `plimsoll image build --output " +
                              directory.string() + "`.");
  }
  Image image{directory, directory / kRootfsName, {}};
  auto identity = ReadSmallFile(directory / kIdentityName);
  if (!identity) {
    return EnvironmentRefusal("The guest image " + directory.string() +
                              " is incomplete (no identity file): an interrupted build? Rebuild it "
                              "with `plimsoll image build`.");
  }
  image.identity = Trimmed(*identity);
  if (!IsWellFormedIdentity(image.identity)) {
    return EnvironmentRefusal("The identity file of the guest image " + directory.string() +
                              " does not hold \"sha256:<64 hex digits>\".");
  }
  struct stat tree {};
  if (lstat(image.rootfs.c_str(), &tree) != 0 || !S_ISDIR(tree.st_mode)) {
    return EnvironmentRefusal("The guest image " + directory.string() + " has an identity but no " +
                              kRootfsName + " tree.");
  }
  return image;
}

Expected<std::string> ComputeIdentity(const std::filesystem::path& rootfs) {
  auto manifest = BuildManifest(rootfs);
  if (!manifest.ok()) return manifest.error().WithContext("Cannot read the guest tree");
  return IdentityOfManifest(*manifest);
}

Status Verify(const Image& image, std::string_view expected) {
  if (!expected.empty() && !IsWellFormedIdentity(expected)) {
    return Refusal(NotDispatched::kRequest, "The expected identity \"" + std::string(expected) +
                                                "\" is not \"sha256:<64 hex digits>\".");
  }
  auto manifest = BuildManifest(image.rootfs);
  if (!manifest.ok()) {
    return Refusal(NotDispatched::kEnvironment,
                   manifest.error().WithContext("Cannot read the guest tree").message());
  }
  std::string identity = IdentityOfManifest(*manifest);
  if (identity != image.identity) {
    std::string message = "The guest image " + image.directory.string() + " was recorded as " +
                          image.identity + " but its tree is now " + identity + ".";
    if (auto recorded = ReadSmallFile(image.directory / kManifestName)) {
      if (IdentityOfManifest(*recorded) == image.identity) {
        auto differences = DescribeManifestDifferences(*recorded, *manifest, 5);
        message += " Changed entries:";
        for (const std::string& difference : differences) message += "\n  " + difference;
      } else {
        message += " (The recorded manifest does not match the recorded identity either.)";
      }
    }
    return EnvironmentRefusal(std::move(message));
  }
  if (!expected.empty() && identity != expected) {
    return EnvironmentRefusal("The guest image " + image.directory.string() + " is " + identity +
                              ", not the expected " + std::string(expected) + ".");
  }
  return Status::Ok();
}

Status CheckPinned(const Image& image, std::string_view expected) {
  if (expected.empty()) return Status::Ok();
  if (!IsWellFormedIdentity(expected)) {
    return Refusal(NotDispatched::kRequest, "The pinned image identity \"" + std::string(expected) +
                                                "\" is not \"sha256:<64 hex digits>\".");
  }
  if (image.identity != expected) {
    return EnvironmentRefusal("The guest image " + image.directory.string() + " is " +
                              image.identity + ", but this daemon is pinned to " +
                              std::string(expected) + ".");
  }
  return Status::Ok();
}

Expected<std::filesystem::path> DefaultCacheDirectory() {
  if (const char* cache = std::getenv("PLIMSOLL_CACHE"); cache && *cache)
    return std::filesystem::path(cache);
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".cache" / "plimsoll";
  }
  return EnvironmentRefusal("Neither PLIMSOLL_CACHE nor HOME is set: no cache directory.");
}

Expected<Image> LocateImage(const std::filesystem::path& directory) {
  if (directory.empty()) return LocateDefaultImage();
  return OpenImage(directory);
}

Expected<Image> LocateDefaultImageWith(std::initializer_list<const char*> executables) {
  return LocateImageWith({}, executables);
}

Expected<Image> LocateImageWith(const std::filesystem::path& directory,
                                std::initializer_list<const char*> executables) {
  auto image = LocateImage(directory);
  if (!image.ok()) return image.error();
  for (const char* executable : executables) {
    std::string path = image->rootfs.string() + executable;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0) {
      return EnvironmentRefusal("The guest image at " + image->directory.string() +
                                " has no executable " + executable + ".");
    }
  }
  return image;
}

Expected<Image> LocateDefaultImage() {
  if (const char* configured = std::getenv("PLIMSOLL_IMAGE"); configured && *configured) {
    auto image = OpenImage(configured);
    if (!image.ok()) return image.error().WithContext("PLIMSOLL_IMAGE");
    return image;
  }
  std::string tried;
#ifdef PLIMSOLL_BUILD_TREE_IMAGE
  {
    std::filesystem::path built(PLIMSOLL_BUILD_TREE_IMAGE);
    std::error_code ignored;
    if (std::filesystem::is_directory(built, ignored)) return OpenImage(built);
    tried = built.string() + ", ";
  }
#endif
  auto cache = DefaultCacheDirectory();
  if (!cache.ok()) return cache.error();
  std::filesystem::path current = *cache / "image" / "current";
  std::error_code ignored;
  if (!std::filesystem::is_directory(current, ignored)) {
    return EnvironmentRefusal("No guest image: PLIMSOLL_IMAGE is not set and none was found at " +
                              tried + current.string() +
                              ". Build one with `plimsoll image build` or set PLIMSOLL_IMAGE.");
  }
  return OpenImage(current);
}

Expected<std::filesystem::path> VariantImageDirectory(std::string_view variant) {
  if (variant == "base") return std::filesystem::path();
  std::string tried;
#ifdef PLIMSOLL_BUILD_TREE_IMAGE
  {
    std::filesystem::path built(std::string(PLIMSOLL_BUILD_TREE_IMAGE) + "-" +
                                std::string(variant));
    std::error_code ignored;
    if (std::filesystem::is_directory(built, ignored)) return built;
    tried = built.string() + ", ";
  }
#endif
  auto cache = DefaultCacheDirectory();
  if (!cache.ok()) return cache.error();
  std::filesystem::path cached = *cache / "image" / std::string(variant);
  std::error_code ignored;
  if (!std::filesystem::is_directory(cached, ignored)) {
    return EnvironmentRefusal("No image of the variant " + std::string(variant) +
                              ": none was found at " + tried + cached.string() +
                              ". Build it with `plimsoll image build --variant " +
                              std::string(variant) + "`.");
  }
  return cached;
}

}  // namespace plimsoll::image
