#include "daemon/server/open_images.h"

#include <algorithm>

#include "image/image.h"
#include "image/image_contents.h"

namespace plimsoll::daemon {

ImageContents ContentsOf(Sandbox& sandbox, const std::string& directory) {
  const Description description = sandbox.Describe();
  if (auto located = image::LocateImage(directory);
      located.ok() && !description.environment.empty() &&
      located->identity == description.environment) {
    if (auto contents = image::ReadImageContents(located->rootfs); contents.ok()) {
      return std::move(*contents);
    }
  }
  ImageContents contents;
  const auto& payloads = description.capabilities.payloads;
  for (PayloadKind kind : {PayloadKind::kJavascript, PayloadKind::kPython}) {
    if (std::find(payloads.begin(), payloads.end(), kind) != payloads.end()) {
      contents.languages.emplace_back(PayloadKindName(kind));
    }
  }
  return contents;
}

Expected<OpenedImages> OpenImages(const Settings& settings, const Limits& limits) {
  const bool named = !settings.images.empty();
  std::vector<ImageSetting> wanted = settings.images;
  if (!named) wanted.push_back({"default", ""});
  OpenedImages opened;
  for (const ImageSetting& image : wanted) {
    auto sandbox = Sandbox::Open(settings.provider, limits, {.image_directory = image.directory});
    if (!sandbox.ok()) {
      return named ? sandbox.error().WithContext("--image " + image.name + "=" + image.directory)
                   : sandbox.error();
    }
    auto owned = std::make_unique<Sandbox>(std::move(*sandbox));
    owned->NameImage(image.name);
    ImageContents contents = ContentsOf(*owned, image.directory);
    opened.images.push_back({image.name, owned.get(), std::move(contents)});
    opened.sandboxes.push_back(std::move(owned));
  }
  return opened;
}

}  // namespace plimsoll::daemon
