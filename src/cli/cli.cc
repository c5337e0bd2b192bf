#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iterator>
#include <optional>

#include "cli/argv_split.h"
#include "cli/callers_command.h"
#include "cli/exit_status.h"
#include "cli/human_output.h"
#include "cli/image_command.h"
#include "cli/project_loader.h"
#include "plimsoll/sandbox.h"
#include "plimsoll/wire.h"

namespace plimsoll::cli {
namespace {

constexpr std::string_view kVersion = "0.1.0";

struct RunOptions {
  std::string provider;
  std::string floor;
  int64_t timeout_ms = 0;
  std::string lang = "javascript";
  std::string code;
  std::string file;
  std::string project_dir;
  std::vector<std::string> steps;
  std::vector<std::string> artifacts;
  std::string trace_id;
  std::string grant_profile;
  std::string environment;
  bool json = false;
};

std::string ChosenProvider(const std::string& flag) {
  return flag.empty() ? ProviderNameFromEnvironment() : flag;
}

// Prints an error the way the caller asked for it and returns the status.
int Fail(const Error& error, bool json, std::ostream& out, std::ostream& err) {
  if (json) {
    out << ErrorToJson(error, "") << "\n";
  } else {
    PrintError(error, err);
  }
  return NotDispatchedReason(error) ? kExitNothingRan : kExitMayHaveRun;
}

Expected<Request> BuildRequest(const RunOptions& options, const Limits& limits) {
  Request request;
  request.minimum_isolation = options.floor;
  request.timeout_ms = options.timeout_ms;
  request.trace_id = options.trace_id;
  request.grant_profile = options.grant_profile;
  request.environment = options.environment;

  if (!options.project_dir.empty()) {
    if (!options.code.empty() || !options.file.empty()) {
      return Refusal(NotDispatched::kRequest,
                     "Give --project or a snippet (-e CODE or FILE), not both.");
    }
    auto files = LoadProjectFiles(options.project_dir, limits);
    if (!files.ok()) return files.error();
    ProjectPayload project;
    project.files = std::move(*files);
    for (const std::string& step : options.steps) {
      auto argv = SplitArgv(step);
      if (!argv.ok()) return argv.error();
      project.steps.push_back(std::move(*argv));
    }
    project.artifacts = options.artifacts;
    request.project = std::move(project);
    return request;
  }
  if (!options.steps.empty() || !options.artifacts.empty()) {
    return Refusal(NotDispatched::kRequest, "--step and --artifact need --project DIR.");
  }

  std::string code = options.code;
  if (!options.file.empty()) {
    if (!code.empty()) return Refusal(NotDispatched::kRequest, "Give -e CODE or FILE, not both.");
    std::ifstream in(options.file, std::ios::binary);
    if (!in) return Refusal(NotDispatched::kRequest, "Cannot open " + options.file + ".");
    code.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else if (code.empty()) {
    return Refusal(NotDispatched::kRequest,
                   "Nothing to run: give -e CODE, a FILE or --project DIR.");
  }
  if (options.lang == "javascript" || options.lang == "js") {
    request.javascript = JavascriptPayload{std::move(code)};
  } else if (options.lang == "python" || options.lang == "py") {
    request.python = PythonPayload{std::move(code)};
  } else {
    return Refusal(NotDispatched::kRequest,
                   "--lang must be javascript or python, not \"" + options.lang + "\".");
  }
  return request;
}

int RunCommand(const RunOptions& options, std::ostream& out, std::ostream& err) {
  auto sandbox = Sandbox::Open(ChosenProvider(options.provider));
  if (!sandbox.ok()) return Fail(sandbox.error(), options.json, out, err);
  auto request = BuildRequest(options, sandbox->Describe().limits);
  if (!request.ok()) return Fail(request.error(), options.json, out, err);
  auto result = sandbox->Run(*request);
  if (!result.ok()) return Fail(result.error(), options.json, out, err);
  if (options.json) {
    out << ResultToJson(*result) << "\n";
  } else {
    PrintResult(*result, out);
    if (result->isolation == Tier::kProcess) {
      err << "warning: isolation is process: this is no wall for hostile code.\n";
    }
  }
  return (result->exit_code == 0 && !result->timed_out) ? kExitRanOk : kExitRanFailed;
}

int DescribeCommand(const std::string& provider_flag, std::ostream& out, std::ostream& err) {
  auto sandbox = Sandbox::Open(ChosenProvider(provider_flag));
  if (!sandbox.ok()) return Fail(sandbox.error(), false, out, err);
  auto evidence = sandbox->CollectEvidence();
  std::optional<Error> failure;
  if (!evidence.ok()) failure = evidence.error();
  PrintDescription(sandbox->Describe(), sandbox->evidence(), failure, out);
  return kExitRanOk;
}

}  // namespace

int Main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"plimsoll: run untrusted code in a sandbox that states its strength.", "plimsoll"};
  app.require_subcommand(1);

  RunOptions run;
  CLI::App* run_command = app.add_subcommand("run", "Run a snippet or a project.");
  run_command->add_option("--provider", run.provider,
                          "Provider (default: $SANDBOX_PROVIDER, else disabled).");
  run_command->add_option("--floor", run.floor,
                          "Minimum isolation: process, container, kernel or vm.");
  run_command->add_option("--timeout", run.timeout_ms, "Timeout in ms (<= 0: provider default).");
  run_command->add_option("--lang", run.lang, "Snippet language: javascript or python.");
  run_command->add_option("-e,--eval", run.code, "The snippet to run.");
  run_command->add_option("file", run.file, "A file holding the snippet.");
  run_command->add_option("--project", run.project_dir, "Run the files of DIR as a project.");
  run_command->add_option("--step", run.steps, "A project step as argv words or a JSON array.");
  run_command->add_option("--artifact", run.artifacts, "A project path to bring back.");
  run_command->add_option("--trace-id", run.trace_id, "A trace ID [A-Za-z0-9._:-]{1,64}.");
  run_command->add_option("--grant", run.grant_profile, "A grant profile name.");
  run_command->add_option("--environment", run.environment, "Require this environment identity.");
  run_command->add_flag("--json", run.json, "Print the result as the API's JSON object.");

  std::string describe_provider;
  CLI::App* describe_command =
      app.add_subcommand("describe", "Show a provider, its tier and evidence.");
  describe_command->add_option("--provider", describe_provider, "Provider to describe.");

  ImageOptions image_options;
  CLI::App* image_command = AddImageCommand(app, image_options);

  CallersOptions callers_options;
  CLI::App* callers_command = AddCallersCommand(app, callers_options);

  app.add_subcommand("version", "Print the version.");

  std::vector<std::string> reversed(args.rbegin(), args.rend() - (args.empty() ? 0 : 1));
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kExitRanOk;
  } catch (const CLI::ParseError& error) {
    err << "plimsoll: " << error.what() << "\n"
        << "Run 'plimsoll --help' for usage.\n";
    return kExitUsage;
  }

  if (run_command->parsed()) return RunCommand(run, out, err);
  if (describe_command->parsed()) return DescribeCommand(describe_provider, out, err);
  if (image_command->parsed()) return RunImageCommand(image_options, out, err);
  if (callers_command->parsed()) return RunCallersCommand(callers_options, out, err);
  out << "plimsoll " << kVersion << " (protocol " << kProtocol << ")\n";
  return kExitRanOk;
}

}  // namespace plimsoll::cli
