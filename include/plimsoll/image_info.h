// What `describe` says about one image a daemon serves (SPEC §7): its name,
// identity, languages and the packages in it.
#ifndef PLIMSOLL_IMAGE_INFO_H_
#define PLIMSOLL_IMAGE_INFO_H_

#include <string>
#include <vector>

#include "plimsoll/tier.h"

namespace plimsoll {

// One installed package. `source` says which package manager's records it
// was read from: "debian" (dpkg's status), "python" (a *.dist-info or
// *.egg-info directory) or "npm" (a package.json under /usr/share/nodejs).
// A Debian package of a Python module is listed under both sources.
struct ImagePackage {
  std::string name;
  std::string version;
  std::string source;
  friend bool operator==(const ImagePackage&, const ImagePackage&) = default;
};

// What an image holds, read from its tree (image/image_contents.h).
struct ImageContents {
  // The languages it runs, of "javascript" (the image's QuickJS, or the
  // embedded engine), "python" (python3) and "node" (Node.js, for projects).
  std::vector<std::string> languages;
  // Sorted by source, then name, then version.
  std::vector<ImagePackage> packages;
  friend bool operator==(const ImageContents&, const ImageContents&) = default;
};

// One entry of describe's `images` (api/openapi.yaml `Image`).
struct ImageInfo {
  std::string name;         // what a request's `image` names
  bool is_default = false;  // what a request naming no image runs on
  std::string environment;  // the identity ("sha256:…")
  Tier tier = Tier::kUnknown;  // what its evidence proves now
  bool confirmed = false;      // its evidence monitor's state
  ImageContents contents;
  friend bool operator==(const ImageInfo&, const ImageInfo&) = default;
};

}  // namespace plimsoll

#endif  // PLIMSOLL_IMAGE_INFO_H_
