// The images plimsolld serves (SPEC §7; --image NAME=PATH, settings.h): one
// Sandbox per image, each with its own provider instance (so its own warm
// pool and evidence), named for the requests that select it, with what
// describe lists of it (languages and packages, read once here).
//
// Without --image, the provider's own default image is served under the name
// "default". Providers that run no guest image (disabled, embedded) and
// microvm (its boot artifacts are built from one image) refuse --image: the
// start stops with the provider's reason.
//
// Usage (DaemonMain):
//   auto opened = OpenImages(settings, limits);
//   if (!opened.ok()) ...                       // kExitBadSettings
//   Server server(settings, opened->images, authenticator, log);
#ifndef PLIMSOLL_DAEMON_SERVER_OPEN_IMAGES_H_
#define PLIMSOLL_DAEMON_SERVER_OPEN_IMAGES_H_

#include <memory>
#include <vector>

#include "daemon/server/server.h"
#include "daemon/server/settings.h"
#include "plimsoll/sandbox.h"

namespace plimsoll::daemon {

struct OpenedImages {
  std::vector<std::unique_ptr<Sandbox>> sandboxes;  // owned here, in `images`' order
  std::vector<ImageToServe> images;                 // the default first
};

// Opens settings.images (or the default) with `limits`. An error names the
// image that could not be opened.
Expected<OpenedImages> OpenImages(const Settings& settings, const Limits& limits);

// What describe lists of `sandbox`'s image: read from the image tree at
// `directory` ("" = the default image) when the sandbox's environment is
// that tree's identity; else (an engine, not an image: embedded) the
// languages its payloads name and no packages.
ImageContents ContentsOf(Sandbox& sandbox, const std::string& directory);

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_OPEN_IMAGES_H_
