#include "cli/specgen_command.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iterator>
#include <sstream>

#include "cli/exit_status.h"
#include "specgen/specgen.h"

namespace plimsoll::cli {
namespace {

// Larger than any real API description (GitHub's is about 10 MiB as JSON).
constexpr std::streamsize kMaxDocumentBytes = 64 << 20;

bool ReadDocument(const std::string& path, std::istream& standard_input, std::string& text,
                  std::ostream& err) {
  std::ifstream file;
  std::istream* in = &standard_input;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) {
      err << "plimsoll specgen: cannot read " << path << "\n";
      return false;
    }
    in = &file;
  }
  std::ostringstream buffer;
  std::vector<char> chunk(1 << 16);
  std::streamsize total = 0;
  while (in->read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in->gcount() > 0) {
    total += in->gcount();
    if (total > kMaxDocumentBytes) {
      err << "plimsoll specgen: " << path << " is larger than 64 MiB\n";
      return false;
    }
    buffer.write(chunk.data(), in->gcount());
  }
  if (in->bad()) {
    err << "plimsoll specgen: cannot read " << path << "\n";
    return false;
  }
  text = std::move(buffer).str();
  return true;
}

}  // namespace

CLI::App* AddSpecgenCommand(CLI::App& app, SpecgenOptions& options) {
  CLI::App* command =
      app.add_subcommand("specgen",
                         "Print a grant profile and an agent's preamble for an OpenAPI 3 document "
                         "(docs/specgen.md).");
  command
      ->add_option("openapi", options.document,
                   "The OpenAPI 3.0/3.1 document (YAML or JSON; - reads stdin).")
      ->required();
  command
      ->add_option(
          "--only", options.only,
          "Keep operations with this tag, or with exactly this path template (repeatable).")
      ->allow_extra_args(false);
  command
      ->add_option("--methods", options.methods,
                   "HTTP methods to grant, comma-separated (default: GET,HEAD).")
      ->delimiter(',')
      ->allow_extra_args(false);
  command->add_option("--profile", options.profile,
                      "The profile's name (default: from info.title).");
  command->add_option("--base-url", options.base_url,
                      "The API's URL: its origin is base_url, its path goes before every route "
                      "(default: the document's first server).");
  command->add_flag("--json", options.json, "Print the grants file as JSON.");
  CLI::Option* preamble_only = command->add_flag("--preamble-only", options.preamble_only,
                                                 "Print only the preamble, as plain lines.");
  command->add_flag("--no-preamble", options.no_preamble, "Print only the grants file.")
      ->excludes(preamble_only);
  return command;
}

int RunSpecgenCommand(const SpecgenOptions& options, std::istream& in, std::ostream& out,
                      std::ostream& err) {
  specgen::Options generate;
  generate.only = options.only;
  generate.methods = options.methods;
  generate.profile = options.profile;
  generate.base_url = options.base_url;
  if (Status checked = specgen::CheckOptions(generate); !checked.ok()) {
    err << "plimsoll specgen: " << checked.error().message() << "\n";
    return kExitUsage;
  }
  std::string text;
  if (!ReadDocument(options.document, in, text, err)) return kExitRanFailed;
  auto spec = specgen::Generate(text, generate);
  if (!spec.ok()) {
    err << "plimsoll specgen: " << options.document << ": " << spec.error().message() << "\n";
    return kExitRanFailed;
  }
  for (const std::string& warning : spec->warnings) {
    err << "plimsoll specgen: warning: " << warning << "\n";
  }
  if (options.preamble_only) {
    out << specgen::RenderPreamble(*spec, /*as_comment=*/false);
    return kExitRanOk;
  }
  out << (options.json ? specgen::RenderProfileJson(*spec) : specgen::RenderProfileYaml(*spec));
  if (!options.no_preamble) {
    out << "---\n" << specgen::RenderPreamble(*spec, /*as_comment=*/true);
  }
  return kExitRanOk;
}

}  // namespace plimsoll::cli
