// The guest image as the providers see it: a root tree and its identity.
//
// An image directory (built by `plimsoll image build`, docs/guest-images.md)
// holds:
//   DIR/rootfs/    the tree the OS-level providers mount read-only
//   DIR/manifest   the tree's manifest (image/manifest.h)
//   DIR/identity   "sha256:<hex>\n": SHA-256 of DIR/manifest; written last,
//                  so a directory without it is an incomplete build
//   DIR/inputs     what the tree was assembled from (for the no-op rebuild)
//
// Usage (a provider at startup):
//   auto located = image::LocateDefaultImage();      // $PLIMSOLL_IMAGE, ...
//   if (!located.ok()) return located.error();       // refusal: environment
//   PLIMSOLL_RETURN_IF_ERROR(image::CheckPinned(*located, config.pinned));
//   result.environment = located->identity;
//
// OpenImage is cheap (no hashing); Verify re-reads every file (seconds for a
// few hundred MB) and is meant for `plimsoll image verify` and for daemons
// that want the stronger check at startup.
// Errors are refusals with NotDispatched::kEnvironment (SPEC §3: nothing ran
// because the environment is unavailable or not the required one).
#ifndef PLIMSOLL_IMAGE_IMAGE_H_
#define PLIMSOLL_IMAGE_IMAGE_H_

#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>

#include "plimsoll/error.h"

namespace plimsoll::image {

struct Image {
  std::filesystem::path directory;  // DIR
  std::filesystem::path rootfs;     // DIR/rootfs
  std::string identity;             // "sha256:<64 hex>", as recorded
};

// Names inside an image directory.
inline constexpr const char* kRootfsName = "rootfs";
inline constexpr const char* kManifestName = "manifest";
inline constexpr const char* kIdentityName = "identity";
inline constexpr const char* kInputsName = "inputs";

// Opens an image directory after a cheap check: DIR/rootfs is a directory
// and DIR/identity holds a well-formed identity. Does not hash the tree.
Expected<Image> OpenImage(const std::filesystem::path& directory);

// Builds the manifest of `rootfs` and returns its identity (reads every file).
Expected<std::string> ComputeIdentity(const std::filesystem::path& rootfs);

// Recomputes the identity of the image's tree and checks that it equals the
// recorded one and, when `expected` is not empty, `expected` too. The error
// names the first differing entries when the recorded manifest is present.
Status Verify(const Image& image, std::string_view expected = {});

// Refuses (kEnvironment) when `expected` is not empty and differs from the
// image's recorded identity; a malformed `expected` is refused as well.
Status CheckPinned(const Image& image, std::string_view expected);

// The image the providers use when none is configured:
//   1. $PLIMSOLL_IMAGE (a directory), when set (no fallback if it is bad);
//   2. the build tree's image (configured at build time), if it exists;
//   3. DefaultCacheDirectory()/image/current.
Expected<Image> LocateDefaultImage();

// The image a provider was configured with: OpenImage(directory), or
// LocateDefaultImage() when `directory` is empty.
Expected<Image> LocateImage(const std::filesystem::path& directory);

// LocateImage, then checks that the tree holds each of `executables`
// (absolute paths inside it) as an executable regular file: what an OS-level
// provider needs before it builds a wall (e.g. the agent and qjs). A missing
// one is a refusal naming it.
Expected<Image> LocateImageWith(const std::filesystem::path& directory,
                                std::initializer_list<const char*> executables);
Expected<Image> LocateDefaultImageWith(std::initializer_list<const char*> executables);

// The image directory of a built variant (image/variants/NAME), for a local
// run's --image NAME: "" for base (LocateDefaultImage's choice); else this
// build tree's image directory with "-NAME" appended (`make` builds
// build/<preset>/image-data), if it exists; else the cache's image/NAME
// (`plimsoll image build --variant NAME`). Neither: a refusal
// (kEnvironment) saying how to build it.
Expected<std::filesystem::path> VariantImageDirectory(std::string_view variant);

// ${PLIMSOLL_CACHE}, else $HOME/.cache/plimsoll.
Expected<std::filesystem::path> DefaultCacheDirectory();

}  // namespace plimsoll::image

#endif  // PLIMSOLL_IMAGE_IMAGE_H_
