// Installing a recipe's PyPI wheels and npm projects into a bootstrapped tree.
//
// Both run on the build host, which has the network, at image-build time; the guest never does
// (SPEC §7), so nothing is installed at run time.
//
//   pip_requirements FILE  host `python3 -m pip install --require-hashes --no-deps
//                          --only-binary=:all:` for the tree's Python (its version read from the
//                          tree's /usr/bin/python3 link, platform manylinux x86_64) into
//                          /usr/local/lib/python3.X/dist-packages, then compiled to .pyc by the
//                          tree's own python3 (chroot, unchecked-hash pycs: no timestamps);
//                          console scripts go to /usr/local/bin, "#!/usr/bin/python3". A
//                          package the tree already has there is an error, not an overwrite.
//   npm_project DIR        host `npm ci --omit=dev --ignore-scripts` of DIR's package.json and
//                          package-lock.json in a staging directory; each top-level package of
//                          its node_modules goes to /usr/share/nodejs (on Debian node's global
//                          path, so `require(name)` works from any directory). A package the tree
//                          already has there is an error, not an overwrite.
//   python_site FILE       copied (mode 0644) into the same dist-packages as the wheels, then
//                          compiled like them; a name the tree has there already is an error.
//
// Usage (MmdebstrapBuilder does this after mmdebstrap):
//   PLIMSOLL_RETURN_IF_ERROR(image::InstallPythonRequirements(recipe, root, progress));
//   PLIMSOLL_RETURN_IF_ERROR(image::InstallPythonSiteFiles(recipe, root, progress));
//   PLIMSOLL_RETURN_IF_ERROR(image::InstallNpmProjects(recipe, root, progress));
#ifndef PLIMSOLL_IMAGE_LANGUAGE_PACKAGES_H_
#define PLIMSOLL_IMAGE_LANGUAGE_PACKAGES_H_

#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "image/recipe.h"
#include "plimsoll/error.h"

namespace plimsoll::image {

// "3.11" from the tree's /usr/bin/python3 (a link to python3.11); an error when the tree has no
// such interpreter.
Expected<std::string> TreePythonVersion(const std::filesystem::path& root);

// Checks a requirements file before pip sees it: every requirement line is `name==version`
// with at least one `--hash=sha256:<64 hex>`; no options other than --hash (no index URLs, no
// -e, no -r of other files), so the file alone says what lands in the image.
Status CheckPinnedRequirements(std::string_view text);

// pip's argv to install `requirements` into `target` for Python `version` ("3.11") on a tree
// whose glibc is 2.`glibc_minor` (every manylinux tag it can run, and pure wheels).
std::vector<std::string> PipInstallArguments(const std::filesystem::path& requirements,
                                             const std::filesystem::path& target,
                                             std::string_view version, int glibc_minor);

Status InstallPythonRequirements(const Recipe& recipe, const std::filesystem::path& root,
                                 std::ostream& progress);
Status InstallPythonSiteFiles(const Recipe& recipe, const std::filesystem::path& root,
                              std::ostream& progress);
Status InstallNpmProjects(const Recipe& recipe, const std::filesystem::path& root,
                          std::ostream& progress);

}  // namespace plimsoll::image

#endif  // PLIMSOLL_IMAGE_LANGUAGE_PACKAGES_H_
