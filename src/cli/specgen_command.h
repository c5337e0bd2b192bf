// `plimsoll specgen`: a grant profile and an agent's preamble from an OpenAPI
// 3.0/3.1 document (docs/specgen.md).
//
//   plimsoll specgen OPENAPI [--only TAG|PATH ...] [--methods GET,HEAD] [--profile NAME]
//                    [--base-url URL] [--json] [--preamble-only | --no-preamble]
//
// stdout: the grants file (YAML, or JSON with --json), a line `---`, then the
// preamble as `# ` comment lines; with --preamble-only the preamble alone,
// plain. stderr: one warning per route left out or value guessed.
// Exit statuses: 0 written, 1 the document cannot be read or selects
// nothing, 2 bad command line.
//
// Usage (in cli.cc):
//   SpecgenOptions specgen;
//   CLI::App* specgen_command = AddSpecgenCommand(app, specgen);
//   ...
//   if (specgen_command->parsed()) return RunSpecgenCommand(specgen, in, out, err);
#ifndef PLIMSOLL_CLI_SPECGEN_COMMAND_H_
#define PLIMSOLL_CLI_SPECGEN_COMMAND_H_

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace plimsoll::cli {

struct SpecgenOptions {
  std::string document;  // a path, or "-" for stdin
  std::vector<std::string> only;
  std::vector<std::string> methods;
  std::string profile;
  std::string base_url;
  bool json = false;
  bool preamble_only = false;
  bool no_preamble = false;
};

CLI::App* AddSpecgenCommand(CLI::App& app, SpecgenOptions& options);

// Runs the parsed subcommand (`in` is read when the document is "-");
// returns the exit status.
int RunSpecgenCommand(const SpecgenOptions& options, std::istream& in, std::ostream& out,
                      std::ostream& err);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_SPECGEN_COMMAND_H_
