// A file or tree that a provider holds open, bound at a path of its own.
//
// Runtimes and VMMs name what they run by path: runc, crun and runsc take a
// bundle's root as a path (runc refuses a symlink or /proc/self/fd/N), QEMU
// opens its kernel, initramfs and disk by path. The paths a build writes are
// swapped under them (`plimsoll image build` renames a new tree in; the
// microvm build replaces its artifact directory). So what one configuration
// generation verified and holds open (image/held_image.h, descriptors of the
// artifacts) is bind-mounted at <dir>/<owner tag>-<serial>[.<name>], and
// everything of that generation names the bind: a later rename or removal
// of the build's path cannot change what they see. The bind lives in the
// host's mount namespace (runtimes start there), is read-only and private
// (no propagation), and goes with the generation; a crashed owner's binds are
// removed by RemoveLeftoverBinds (owner tags, owner.h).
//
// Usage:
//   auto bind = os::HeldBind::Make(state_dir + "/roots", held->TreePath(),
//                                             HeldBind::Kind::kDirectory);
//   config.rootfs = (*bind)->path();
//
// Thread-safety: Make and RemoveLeftoverBinds may be called from any thread;
// a HeldBind is immutable.
#ifndef PLIMSOLL_OS_HELD_BIND_H_
#define PLIMSOLL_OS_HELD_BIND_H_

#include <memory>
#include <string>
#include <string_view>

#include "plimsoll/error.h"

namespace plimsoll::os {

class HeldBind {
 public:
  enum class Kind { kDirectory, kFile };

  // Binds `source` (e.g. "/proc/self/fd/7") at a new path under `dir`
  // (created 0711: traversable by a sandbox's user namespace), ending in ".<name>" when `name` is
  // given (QEMU's messages then still say which artifact is which). Failures are environment
  // refusals.
  static Expected<std::unique_ptr<HeldBind>> Make(const std::string& dir, const std::string& source,
                                                  Kind kind, std::string_view name = {});
  HeldBind(const HeldBind&) = delete;
  HeldBind& operator=(const HeldBind&) = delete;
  // Detaches the bind (a sandbox still running keeps its own mounts) and
  // removes its mount point.
  ~HeldBind();

  const std::string& path() const { return path_; }

 private:
  explicit HeldBind(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Unmounts and removes the binds under `dir` whose owner is gone.
Status RemoveLeftoverBinds(const std::string& dir);

// Where the linux and oci providers bind the image trees they hold: outside
// any private state directory, since a container's init in a user namespace
// (runc, crun, the linux provider's child) must reach it. Shared by every
// daemon on the host; owner tags keep each one's own.
inline constexpr const char* kImageBindsDirectory = "/run/plimsoll/image-binds";

}  // namespace plimsoll::os

#endif  // PLIMSOLL_OS_HELD_BIND_H_
