// For provider tests: a private copy of a real guest image whose tree can be
// swapped for another at the same path, the way `plimsoll image build`
// swaps a new tree in (issue 13: the image a result names is the image the
// code ran in).
//
// The copy is a hardlink copy (cp -al: seconds, no extra space) of the real
// image's tree plus a marker file /etc/plimsoll-tree holding the tree's
// name; its manifest is the real one plus a line naming the tree, so each
// tree has an identity of its own. Point PLIMSOLL_IMAGE at directory().
//
// Usage:
//   auto image = image::testing::SwappableImage::Make(*image::LocateDefaultImage(), dir);
//   setenv("PLIMSOLL_IMAGE", image->directory().c_str(), 1);
//   ... run `cat /etc/plimsoll-tree` -> "A", environment image->identity("A") ...
//   image->SwapIn("B");   // renames tree A away, B in, B's manifest and identity
#ifndef PLIMSOLL_IMAGE_SWAP_FOR_TESTS_H_
#define PLIMSOLL_IMAGE_SWAP_FOR_TESTS_H_

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include "image/image.h"
#include "image/manifest.h"

namespace plimsoll::image::testing {

class SwappableImage {
 public:
  // Copies `real` under `parent` (which must be on the same filesystem as
  // the real tree for hardlinks; else cp copies) with tree "A" in place.
  static std::optional<SwappableImage> Make(const Image& real,
                                            const std::filesystem::path& parent) {
    SwappableImage image(real, parent / "swappable-image");
    std::error_code error;
    std::filesystem::remove_all(image.directory_, error);
    std::filesystem::create_directories(image.directory_, error);
    if (error || !image.Prepare("A")) return std::nullopt;
    if (!image.Install("A")) return std::nullopt;
    return image;
  }

  const std::filesystem::path& directory() const { return directory_; }
  std::string identity(const std::string& tree) const { return identities_.at(tree); }

  // Prepares tree `name` beside the current one, then swaps it in: the old
  // tree is renamed to rootfs.old-<name> (never deleted: a provider may hold
  // it), then the new tree, manifest and identity take the image's names.
  bool SwapIn(const std::string& name) {
    if (!Prepare(name)) return false;
    return Install(name);
  }

 private:
  SwappableImage(Image real, std::filesystem::path directory)
      : real_(std::move(real)), directory_(std::move(directory)) {}

  static std::string ReadAll(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  bool Prepare(const std::string& name) {
    std::filesystem::path tree = directory_ / ("tree-" + name);
    pid_t child = fork();
    if (child == 0) {
      execl("/bin/cp", "cp", "-al", real_.rootfs.c_str(), tree.c_str(), nullptr);
      _exit(127);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      return false;
    }
    // A new file in the copy's own /etc directory: the real tree is untouched.
    std::ofstream(tree / "etc" / "plimsoll-tree") << name << "\n";
    std::string manifest = ReadAll(real_.directory / kManifestName) + "# test tree " + name + "\n";
    std::ofstream(directory_ / ("manifest-" + name), std::ios::binary) << manifest;
    identities_[name] = IdentityOfManifest(manifest);
    return true;
  }

  bool Install(const std::string& name) {
    std::error_code error;
    std::filesystem::remove(directory_ / kIdentityName, error);  // first, as the builder does
    if (std::filesystem::exists(directory_ / kRootfsName)) {
      std::filesystem::rename(directory_ / kRootfsName, directory_ / ("rootfs.old-" + name), error);
      if (error) return false;
    }
    std::filesystem::rename(directory_ / ("tree-" + name), directory_ / kRootfsName, error);
    if (error) return false;
    std::filesystem::copy_file(directory_ / ("manifest-" + name), directory_ / kManifestName,
                               std::filesystem::copy_options::overwrite_existing, error);
    if (error) return false;
    std::ofstream(directory_ / kIdentityName) << identities_[name] << "\n";
    return true;
  }

  Image real_;
  std::filesystem::path directory_;
  std::map<std::string, std::string> identities_;
};

}  // namespace plimsoll::image::testing

#endif  // PLIMSOLL_IMAGE_SWAP_FOR_TESTS_H_
