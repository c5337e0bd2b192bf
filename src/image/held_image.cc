#include "image/held_image.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "image/image_files.h"
#include "image/manifest.h"

namespace plimsoll::image {
using internal::EnvironmentRefusal;
using internal::ReadSmallFile;
using internal::Trimmed;

HeldImage::HeldImage(Image image, base::UniqueFd tree, dev_t device, ino_t inode)
    : image_(std::move(image)), tree_(std::move(tree)), device_(device), inode_(inode) {}

std::string HeldImage::TreePath() const {
  return "/proc/self/fd/" + std::to_string(tree_.get());
}

bool HeldImage::Removed() const {
  struct stat info {};
  return fstat(tree_.get(), &info) != 0 || info.st_nlink == 0;
}

std::string HeldImage::Key() const {
  return image_.identity + " " + std::to_string(device_) + ":" + std::to_string(inode_);
}

Expected<std::shared_ptr<const HeldImage>> HoldImage(const Image& image) {
  const std::string where = image.directory.string();
  auto busy = [&where](const std::string& why) {
    return EnvironmentRefusal("The guest image " + where + " changed while it was being opened (" +
                              why + "): a build under way? Try again when it is done.");
  };
  auto identity = ReadSmallFile(image.directory / kIdentityName);
  if (!identity || Trimmed(*identity) != image.identity) {
    return busy("its identity file is gone or changed");
  }
  base::UniqueFd tree(open(image.rootfs.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!tree.valid()) {
    return EnvironmentRefusal("The guest image tree " + image.rootfs.string() +
                              " cannot be opened: " + std::strerror(errno) + ".");
  }
  if (flock(tree.get(), LOCK_SH) != 0) {
    return EnvironmentRefusal("The guest image tree " + image.rootfs.string() +
                              " cannot be locked: " + std::strerror(errno) + ".");
  }
  struct stat info {};
  if (fstat(tree.get(), &info) != 0) {
    return EnvironmentRefusal("The guest image tree " + image.rootfs.string() +
                              " cannot be examined: " + std::strerror(errno) + ".");
  }
  auto manifest = ReadSmallFile(image.directory / kManifestName);
  if (!manifest) {
    return EnvironmentRefusal("The guest image " + where +
                              " has no manifest: rebuild it with `plimsoll image build`.");
  }
  if (IdentityOfManifest(*manifest) != image.identity) {
    return EnvironmentRefusal("The guest image " + where + " is recorded as " + image.identity +
                              ", but its manifest is " + IdentityOfManifest(*manifest) +
                              ": the image directory is inconsistent; rebuild it.");
  }
  auto again = ReadSmallFile(image.directory / kIdentityName);
  if (!again || Trimmed(*again) != image.identity) {
    return busy("its identity changed while the tree was opened");
  }
  return std::shared_ptr<const HeldImage>(
      std::make_shared<HeldImage>(image, std::move(tree), info.st_dev, info.st_ino));
}

base::UniqueFd LockTreeForRemoval(const std::filesystem::path& tree) {
  base::UniqueFd fd(open(tree.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return fd;
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return base::UniqueFd();
  return fd;
}

}  // namespace plimsoll::image
