#include "cli/image_command.h"

#include <CLI/CLI.hpp>

#include "cli/exit_status.h"
#include "image/builder.h"
#include "image/image.h"
#include "plimsoll/request.h"

namespace plimsoll::cli {
namespace {

// Defaults baked in at configure time (src/cli/CMakeLists.txt): the source
// tree's image variants and the preset-independent guest binaries build.
#ifndef PLIMSOLL_IMAGE_VARIANTS
#define PLIMSOLL_IMAGE_VARIANTS "image/variants"
#endif

#ifndef PLIMSOLL_GUEST_BIN_DIR
#define PLIMSOLL_GUEST_BIN_DIR "build/guest/bin"
#endif

constexpr const char* kBaseVariant = "base";

// An installed plimsoll (the Debian package, scripts/make-deb) keeps the
// variants and the guest binaries beside its executable:
// ../share/plimsoll/image/variants and ../lib/plimsoll/guest. Else the
// build tree's, baked in above.
std::filesystem::path InstalledOr(const char* relative, const char* built) {
  std::error_code error;
  std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    std::filesystem::path installed = executable.parent_path() / relative;
    if (std::filesystem::is_directory(installed, error)) return installed.lexically_normal();
  }
  return built;
}

std::filesystem::path VariantsDirectory() {
  return InstalledOr("../share/plimsoll/image/variants", PLIMSOLL_IMAGE_VARIANTS);
}

std::filesystem::path GuestBinDirectory() {
  return InstalledOr("../lib/plimsoll/guest", PLIMSOLL_GUEST_BIN_DIR);
}

// A variant's name is one path component of lowercase letters, digits and '-'; not "current",
// the cache directory of the base image.
bool IsVariantName(const std::string& name) {
  return IsWellFormedImageName(name) && name != "current";
}

int ReportError(const Error& error, std::ostream& err) {
  err << "plimsoll image: " << error.message() << "\n";
  return NotDispatchedReason(error) ? kExitNothingRan : kExitRanFailed;
}

int Build(const ImageOptions& options, std::ostream& out, std::ostream& err) {
  auto cache = image::DefaultCacheDirectory();
  if (!cache.ok()) return ReportError(cache.error(), err);
  std::string variant = options.variant.empty() ? kBaseVariant : options.variant;
  if (!IsVariantName(variant)) {
    err << "plimsoll image: --variant \"" << variant
        << "\" is not a variant name (lowercase letters, digits, '-'; the directories of "
        << VariantsDirectory().string() << ")\n";
    return kExitUsage;
  }
  image::BuildOptions build;
  build.recipe_file = !options.recipe.empty() ? std::filesystem::path(options.recipe)
                                              : VariantsDirectory() / variant / "recipe";
  if (options.recipe.empty() && !std::filesystem::exists(build.recipe_file)) {
    err << "plimsoll image: no variant \"" << variant << "\" (" << build.recipe_file.string()
        << " does not exist)\n";
    return kExitUsage;
  }
  auto default_output = VariantCacheDirectory(variant);
  if (!default_output.ok()) return ReportError(default_output.error(), err);
  build.output = options.output.empty() ? *default_output : std::filesystem::path(options.output);
  build.guest_bin =
      options.guest_bin.empty() ? GuestBinDirectory() : std::filesystem::path(options.guest_bin);
  build.cache = *cache / "image";
  build.require_agent = options.require_agent;
  build.rebuild_base = options.rebuild_base;
  auto builder = image::MakeMmdebstrapBuilder();
  auto result = image::BuildImage(build, *builder, err);
  if (!result.ok()) return ReportError(result.error(), err);
  out << build.output.string() << " " << result->identity << "\n";
  return kExitRanOk;
}

}  // namespace

Expected<std::filesystem::path> VariantCacheDirectory(const std::string& variant) {
  auto cache = image::DefaultCacheDirectory();
  if (!cache.ok()) return cache.error();
  // The base image keeps the cache directory it always had (current); a variant gets its own.
  return *cache / "image" / (variant == kBaseVariant ? std::string("current") : variant);
}

namespace {

int VerifyImage(const ImageOptions& options, std::ostream& out, std::ostream& err) {
  auto opened =
      options.directory.empty() ? image::LocateDefaultImage() : image::OpenImage(options.directory);
  if (!opened.ok()) return ReportError(opened.error(), err);
  Status verified = image::Verify(*opened, options.expect);
  if (!verified.ok()) {
    err << "plimsoll image: MISMATCH: " << verified.error().message() << "\n";
    return kExitRanFailed;
  }
  out << "ok: " << opened->directory.string() << " is " << opened->identity << "\n";
  return kExitRanOk;
}

}  // namespace

CLI::App* AddImageCommand(CLI::App& app, ImageOptions& options) {
  CLI::App* image =
      app.add_subcommand("image", "Build or verify the guest image (docs/guest-images.md).");
  image->require_subcommand(1);
  options.build =
      image->add_subcommand("build", "Build the guest image (the Debian base tree is cached).");
  options.build->add_option(
      "--output", options.output,
      "Image directory (default: ${PLIMSOLL_CACHE:-~/.cache/plimsoll}/image/current, or "
      "image/NAME for --variant NAME).");
  options.build->add_option(
      "--guest-bin", options.guest_bin,
      "Directory holding the static qjs and plimsoll-guest (default: " PLIMSOLL_GUEST_BIN_DIR ").");
  auto* variant = options.build->add_option(
      "--variant", options.variant,
      "Which image: a directory of " PLIMSOLL_IMAGE_VARIANTS
      " (base, data, ...; default: base). "
      "Output default: the cache's image/current for base, image/NAME for the others.");
  options.build
      ->add_option("--recipe", options.recipe,
                   "A recipe file of your own instead of a variant (docs/guest-images.md).")
      ->excludes(variant);
  options.build->add_flag("--require-agent", options.require_agent,
                          "Fail if plimsoll-guest or an exam command (plimsoll-trial, "
                          "plimsoll-cc, plimsoll-wasm-controller, plimsoll-model) is missing.");
  options.build->add_flag("--rebuild-base", options.rebuild_base,
                          "Rebuild the cached Debian base tree.");
  options.verify = image->add_subcommand("verify", "Recompute an image's identity and compare it.");
  options.verify->add_option(
      "directory", options.directory,
      "Image directory (default: $PLIMSOLL_IMAGE, the build tree's, or the cache's).");
  options.verify->add_option("--expect", options.expect, "The identity it must have (sha256:...).");
  return image;
}

int RunImageCommand(const ImageOptions& options, std::ostream& out, std::ostream& err) {
  if (options.build->parsed()) return Build(options, out, err);
  return VerifyImage(options, out, err);
}

}  // namespace plimsoll::cli
