// Building a guest image: a cached Debian base tree plus our own binaries.
//
//   recipe --(BaseTreeBuilder: mmdebstrap, ~40 s)--> CACHE/base-<key>/rootfs
//   base  --(hardlink copy, cp -al)--> OUTPUT/rootfs.partial
//         + GUEST_BIN/{plimsoll-guest,qjs} --> /usr/local/bin (static only)
//         --rename--> OUTPUT/rootfs; manifest; identity (written last)
//
// A rebuild never deletes the tree it replaces while it may be in use: the
// identity goes first, the old OUTPUT/rootfs is renamed to
// OUTPUT/rootfs.retired-<...>, and a retired tree is removed only once no
// provider holds it (HoldImage's shared flock, held_image.h); one still held
// is left for a later build to remove. A provider that prepared the old tree
// keeps running it under its own identity until its next smoke test.
//
// The base tree is keyed by RecipeCacheKey (the recipe, its hooks, the tool
// version): an unchanged recipe never reruns mmdebstrap. The assembly is
// skipped too when OUTPUT/inputs already names the same base and binaries.
// Concurrent builds of the same key serialise on CACHE/base-<key>.lock.
//
// Usage:
//   image::BuildOptions options{.recipe_file = "image/variants/base/recipe", .output =
//   "build/image",
//                               .guest_bin = "build/guest/bin", .cache = cache / "image"};
//   auto mmdebstrap = image::MakeMmdebstrapBuilder();
//   auto built = image::BuildImage(options, *mmdebstrap, std::cerr);
//
// Files in OUTPUT/rootfs share inodes with the cached base: treat both as
// read-only (`plimsoll image verify` detects changes made to either).
#ifndef PLIMSOLL_IMAGE_BUILDER_H_
#define PLIMSOLL_IMAGE_BUILDER_H_

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include "image/recipe.h"
#include "plimsoll/error.h"

namespace plimsoll::image {

// Makes the base tree from a recipe. Injectable so tests run without
// mmdebstrap or a network.
class BaseTreeBuilder {
 public:
  virtual ~BaseTreeBuilder() = default;
  // Part of the cache key: a new tool version makes a new base tree.
  virtual Expected<std::string> ToolVersion() = 0;
  // Populates `root` (which does not exist yet); progress goes to the
  // process's stderr or to `progress`.
  virtual Status Build(const Recipe& recipe, const std::filesystem::path& root,
                       std::ostream& progress) = 0;
};

// Runs mmdebstrap (SOURCE_DATE_EPOCH from the recipe). Needs root, or an
// unprivileged user namespace with subuids (mmdebstrap's own mode choice).
std::unique_ptr<BaseTreeBuilder> MakeMmdebstrapBuilder();

struct BuildOptions {
  std::filesystem::path recipe_file;
  std::filesystem::path output;     // the image directory (image/image.h)
  std::filesystem::path guest_bin;  // qjs, plimsoll-guest and the exam commands (docs/guest-images.md)
  std::filesystem::path cache;      // base trees live here (…/plimsoll/image)
  bool require_agent = false;  // fail, rather than warn, without any of our binaries but qjs
  bool rebuild_base = false;   // ignore a cached base tree
};

struct BuildResult {
  std::string identity;
  std::filesystem::path base;  // CACHE/base-<key>
  bool base_was_cached = false;
  bool unchanged = false;  // OUTPUT already held this exact assembly
  bool has_agent = false;
};

Expected<BuildResult> BuildImage(const BuildOptions& options, BaseTreeBuilder& base_builder,
                                 std::ostream& progress);

// Whether `file` is an ELF executable without a program interpreter (static
// or static-pie): it runs in any tree, whatever libraries that tree has.
Expected<bool> IsStaticElf(const std::filesystem::path& file);

}  // namespace plimsoll::image

#endif  // PLIMSOLL_IMAGE_BUILDER_H_
