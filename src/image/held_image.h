// A guest image held open for one prepared configuration: the tree a
// provider mounts is the tree whose identity it reports, whatever is renamed
// into the image's path afterwards (`plimsoll image build` swaps a new tree
// in under the same name).
//
// HoldImage(image):
//   1. reads the identity file;
//   2. opens the rootfs tree (one descriptor, kept) and takes a shared flock
//      on it: the builder never deletes a retired tree that someone holds
//      (builder.h), so the held tree stays whole;
//   3. reads the recorded manifest and checks that its SHA-256 is the
//      identity (the identity names exactly that manifest);
//   4. reads the identity again: the builder removes it before it touches
//      the tree and writes it last, so an unchanged identity brackets a tree
//      that belongs to it. Anything else is an `environment` refusal (a
//      build under way: try again when it is done).
// Providers mount TreePath() ("/proc/self/fd/N": the held tree itself, never
// what now has its old name) and compare Key()s to notice a changed image.
// It does not hash the tree's files (image::Verify does, in seconds).
//
// Usage:
//   auto image = image::LocateDefaultImageWith({guest::kAgentPath});
//   auto held = image::HoldImage(*image);            // refusal: environment
//   config.rootfs_source = (*held)->TreePath();       // mount from this
//   result.environment = (*held)->identity();
//
// Thread-safety: const methods may be called from any thread. The
// descriptor is O_CLOEXEC: a child that needs it must use it before exec.
#ifndef PLIMSOLL_IMAGE_HELD_IMAGE_H_
#define PLIMSOLL_IMAGE_HELD_IMAGE_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/unique_fd.h"
#include "image/image.h"
#include "plimsoll/error.h"

namespace plimsoll::image {

class HeldImage {
 public:
  HeldImage(Image image, base::UniqueFd tree, dev_t device, ino_t inode);
  HeldImage(const HeldImage&) = delete;
  HeldImage& operator=(const HeldImage&) = delete;

  // The image as found (directory, rootfs path, identity).
  const Image& image() const { return image_; }
  const std::string& identity() const { return image_.identity; }
  // The held tree's descriptor (O_RDONLY | O_DIRECTORY, flock'ed shared).
  int tree_fd() const { return tree_.get(); }
  // "/proc/self/fd/<tree_fd>": a path naming the held tree in this process.
  std::string TreePath() const;
  // The identity and the tree's device and inode: equal keys, same image.
  std::string Key() const;
  // Whether the held tree has been removed from the host (no name links to
  // it any more). The kernel cannot bind a removed tree again, so new
  // sandboxes of this configuration cannot be built: callers refuse
  // `environment` until the next smoke test prepares the image now there.
  bool Removed() const;

 private:
  Image image_;
  base::UniqueFd tree_;
  dev_t device_;
  ino_t inode_;
};

Expected<std::shared_ptr<const HeldImage>> HoldImage(const Image& image);

// The flock a held tree carries, for the builder: whether someone holds
// `tree` (a directory) open through HoldImage. Takes an exclusive lock
// without waiting and returns the descriptor holding it (invalid when held
// elsewhere or not openable); the caller removes the tree while it keeps
// the returned descriptor.
base::UniqueFd LockTreeForRemoval(const std::filesystem::path& tree);

}  // namespace plimsoll::image

#endif  // PLIMSOLL_IMAGE_HELD_IMAGE_H_
