// `plimsoll image build|verify`: the guest image from the command line
// (docs/guest-images.md).
//
//   plimsoll image build [--variant NAME | --recipe FILE] [--output DIR] [--guest-bin DIR]
//                        [--require-agent] [--rebuild-base]
//   plimsoll image verify [DIR] [--expect sha256:...]
//
// Usage (in cli.cc):
//   ImageOptions image;
//   CLI::App* image_command = AddImageCommand(app, image);
//   ...
//   if (image_command->parsed()) return RunImageCommand(image, out, err);
#ifndef PLIMSOLL_CLI_IMAGE_COMMAND_H_
#define PLIMSOLL_CLI_IMAGE_COMMAND_H_

#include <filesystem>
#include <ostream>
#include <string>

#include "plimsoll/error.h"

namespace CLI {
class App;
}

namespace plimsoll::cli {

struct ImageOptions {
  CLI::App* build = nullptr;
  CLI::App* verify = nullptr;
  std::string output;     // build: the image directory
  std::string guest_bin;  // build: where qjs and plimsoll-guest are
  std::string variant;    // build: image/variants/NAME/recipe (default: base)
  std::string recipe;     // build: a recipe file of one's own (instead of a variant)
  bool require_agent = false;
  bool rebuild_base = false;
  std::string directory;  // verify: the image directory
  std::string expect;     // verify: the identity it must have
};

// Adds the `image` subcommand (with `build` and `verify`) to `app`.
CLI::App* AddImageCommand(CLI::App& app, ImageOptions& options);

// Runs the parsed subcommand; returns the exit status (cli/exit_status.h).
int RunImageCommand(const ImageOptions& options, std::ostream& out, std::ostream& err);

// Where `plimsoll image build --variant NAME` puts the image by default: the
// cache's image/current for base, image/NAME for any other variant.
Expected<std::filesystem::path> VariantCacheDirectory(const std::string& variant);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_IMAGE_COMMAND_H_
