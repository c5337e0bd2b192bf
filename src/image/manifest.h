// The manifest of a directory tree and the identity derived from it.
//
// A manifest lists every entry under a root, one line per entry, sorted by
// path; its SHA-256 is the tree's identity ("sha256:<64 hex>"), the
// `environment` of every result run in a guest image (SPEC §6). The exact
// format is specified in docs/guest-images.md ("The identity"):
//
//   plimsoll-manifest-v1
//   / d 0755 0 0
//   /etc d 0755 0 0
//   /etc/hostname f 0644 0 0 8 <sha256 of the content>
//   /bin l 0777 0 0 usr/bin
//
// Usage:
//   auto manifest = image::BuildManifest("/path/to/rootfs");
//   if (!manifest.ok()) return manifest.error();
//   std::string identity = image::IdentityOfManifest(*manifest);
//
// Thread-safety: the functions are reentrant; the tree must not change while
// it is read (nothing here can tell a concurrent change from a real one).
#ifndef PLIMSOLL_IMAGE_MANIFEST_H_
#define PLIMSOLL_IMAGE_MANIFEST_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::image {

// The first line of every manifest; a new format gets a new version line, so
// it can never collide with an identity of the old one.
inline constexpr std::string_view kManifestHeader = "plimsoll-manifest-v1";
inline constexpr std::string_view kIdentityPrefix = "sha256:";

// Walks `root` (without following symbolic links, including the root itself
// as "/") and returns its manifest. Fails on entries it cannot read.
Expected<std::string> BuildManifest(const std::filesystem::path& root);

// "sha256:" + lowercase hex SHA-256 of the manifest's bytes.
std::string IdentityOfManifest(std::string_view manifest);

// Whether `text` is "sha256:" followed by exactly 64 lowercase hex digits.
bool IsWellFormedIdentity(std::string_view text);

// Escapes a path or link target for a manifest line: bytes 0x21..0x7e other
// than '\' stand for themselves, every other byte is "\xHH".
std::string EscapeManifestField(std::string_view raw);

// Up to `limit` human-readable differences between two manifests, e.g.
// "/usr/bin/node: recorded f 0755 0 0 ..., now f 0755 0 0 ...",
// "/etc/extra: not recorded", "/etc/gone: missing".
std::vector<std::string> DescribeManifestDifferences(std::string_view recorded,
                                                     std::string_view current, size_t limit);

// Lowercase hex SHA-256 of a byte string / of a file's content.
std::string Sha256Hex(std::string_view bytes);
Expected<std::string> Sha256OfFile(const std::filesystem::path& file);

}  // namespace plimsoll::image

#endif  // PLIMSOLL_IMAGE_MANIFEST_H_
