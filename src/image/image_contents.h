// Reads what an image tree holds for `describe` (SPEC §7): the languages it
// runs and its packages, from the package managers' own records:
//   debian  ROOT/var/lib/dpkg/status, paragraphs whose Status is
//           "install ok installed" (Package, Version);
//   python  ROOT/usr/lib/python3/dist-packages and
//           ROOT/usr/local/lib/python3.*/dist-packages: each *.dist-info's
//           METADATA, each *.egg-info's PKG-INFO (Name, Version);
//   npm     ROOT/usr/share/nodejs/NAME/package.json and
//           ROOT/usr/share/nodejs/@SCOPE/NAME/package.json (name, version).
// Languages: "javascript" when ROOT/usr/local/bin/qjs is there, "python" for
// ROOT/usr/bin/python3, "node" for ROOT/usr/bin/node.
//
// The tree is read as data: symbolic links are not followed (a link cannot
// make the reader open a file outside the tree), each file read is capped
// (dpkg's status at 64 MiB, every other file at 1 MiB; a larger one is
// skipped), and a record that does not parse is skipped, never fatal. A
// missing record is an empty list; the only error is a ROOT that is not a
// directory.
//
// Usage:
//   auto contents = image::ReadImageContents(image.rootfs);
#ifndef PLIMSOLL_IMAGE_IMAGE_CONTENTS_H_
#define PLIMSOLL_IMAGE_IMAGE_CONTENTS_H_

#include <filesystem>

#include "plimsoll/error.h"
#include "plimsoll/image_info.h"

namespace plimsoll::image {

Expected<ImageContents> ReadImageContents(const std::filesystem::path& rootfs);

}  // namespace plimsoll::image

#endif  // PLIMSOLL_IMAGE_IMAGE_CONTENTS_H_
