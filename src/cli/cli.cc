#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "broker/broker_file.h"
#include "cli/callers_command.h"
#include "cli/daemon_command.h"
#include "cli/exit_status.h"
#include "cli/human_output.h"
#include "cli/image_command.h"
#include "cli/repl_command.h"
#include "cli/run_report.h"
#include "cli/run_request.h"
#include "cli/session_command.h"
#include "cli/specgen_command.h"
#include "image/image.h"
#include "plimsoll/sandbox.h"

namespace plimsoll::cli {
namespace {

constexpr std::string_view kVersion = "0.1.0";

// --provider (else $SANDBOX_PROVIDER), with --runtime naming the oci
// provider's runtime ("oci" + "runsc" -> "oci:runsc").
Expected<std::string> ChosenProvider(const std::string& flag, const std::string& runtime) {
  std::string provider = flag.empty() ? ProviderNameFromEnvironment() : flag;
  if (runtime.empty()) return provider;
  if (provider != "oci") {
    return Refusal(
        NotDispatched::kRequest, ErrorCode::kInvalidArgument,
        "--runtime applies to the oci provider only (the provider is \"" + provider + "\").");
  }
  return provider + ":" + runtime;
}

// One command, one run: a warm pool would start containers or boot VMs
// only to destroy them at exit (a microvm pool's boot would also compete
// with the run for the CPU), so the CLI turns the linux, oci and microvm pools
// off unless the environment sets a size.
void NoWarmPoolUnlessAsked() {
  setenv("SANDBOX_LINUX_POOL_SIZE", "0", /*overwrite=*/0);
  setenv("SANDBOX_OCI_POOL_SIZE", "0", /*overwrite=*/0);
  setenv("SANDBOX_MICROVM_POOL_SIZE", "0", /*overwrite=*/0);
}

// The caller a local run's grant is opened for: a grant profile must list
// it (or "*") in allowed_callers to be used by `plimsoll run`.
constexpr std::string_view kLocalCaller = "local";

// The broker's grant for a local run naming --grant (null when it names
// none): the grants file of --grants, else $PLIMSOLL_GRANTS. The broker lives
// as long as its grant (RunGrant keeps what it needs).
Expected<std::unique_ptr<broker::RunGrant>> OpenLocalGrant(const RunOptions& options,
                                                           const Request& request,
                                                           const Limits& limits) {
  if (request.grant_profile.empty()) return std::unique_ptr<broker::RunGrant>();
  std::string path = options.grants_path;
  if (path.empty()) {
    if (const char* variable = std::getenv("PLIMSOLL_GRANTS")) path = variable;
  }
  if (path.empty()) {
    return Refusal(NotDispatched::kPermission, ErrorCode::kPermissionDenied,
                   "--grant needs a grants file: give --grants PATH or set PLIMSOLL_GRANTS.");
  }
  std::vector<std::string> warnings;
  auto broker = broker::OpenBrokerFile(path, broker::ProcessEnvironment(), warnings);
  if (!broker.ok()) {
    return Refusal(NotDispatched::kRequest, broker.error().WithContext("--grants").message());
  }
  return broker->Open(request.grant_profile, kLocalCaller,
                      std::chrono::milliseconds(ResolvedTimeoutMs(request, limits)),
                      /*in_session=*/false);
}

int RunCommand(const RunOptions& options, const std::string& runtime, std::ostream& out,
               std::ostream& err) {
  auto provider = ChosenProvider(options.provider, runtime);
  if (!provider.ok()) return ReportError(provider.error(), options.json, out, err);
  NoWarmPoolUnlessAsked();
  ProviderOptions provider_options;
  if (!options.image.empty()) {
    if (!IsWellFormedImageName(options.image)) {
      return ReportError(Refusal(NotDispatched::kRequest,
                                 "--image \"" + options.image +
                                     "\" is not an image name (lowercase letters, digits, '-')."),
                         options.json, out, err);
    }
    auto directory = image::VariantImageDirectory(options.image);
    if (!directory.ok()) return ReportError(directory.error(), options.json, out, err);
    provider_options.image_directory = directory->string();
  }
  auto sandbox = Sandbox::Open(*provider, Limits{}, provider_options);
  if (!sandbox.ok()) return ReportError(sandbox.error(), options.json, out, err);
  if (!options.image.empty()) sandbox->NameImage(options.image);
  auto request = BuildRequest(options, sandbox->Describe().limits);
  if (!request.ok()) return ReportError(request.error(), options.json, out, err);
  auto grant = OpenLocalGrant(options, *request, sandbox->Describe().limits);
  if (!grant.ok()) return ReportError(grant.error(), options.json, out, err);
  auto result = sandbox->Run(*request, grant->get());
  if (!result.ok()) return ReportError(result.error(), options.json, out, err);
  // The run's tier never exceeds the evidence's, which says why.
  std::optional<Evidence> evidence = sandbox->evidence();
  return ReportResultAndSave(*result, options.json, options.save_displays, out, err,
                             evidence ? evidence->summary : "");
}

int DescribeCommand(const std::string& provider_flag, const std::string& runtime, std::ostream& out,
                    std::ostream& err) {
  auto provider = ChosenProvider(provider_flag, runtime);
  if (!provider.ok()) return ReportError(provider.error(), false, out, err);
  NoWarmPoolUnlessAsked();
  auto sandbox = Sandbox::Open(*provider);
  if (!sandbox.ok()) return ReportError(sandbox.error(), false, out, err);
  auto evidence = sandbox->CollectEvidence();
  std::optional<Error> failure;
  if (!evidence.ok()) failure = evidence.error();
  PrintDescription(sandbox->Describe(), sandbox->evidence(), failure, out);
  return kExitRanOk;
}

// --daemon URL, --token-file PATH, --allow-cleartext (docs/cli.md). The token
// is never a flag's value: command lines are visible to every user.
CLI::Option* AddDaemonFlags(CLI::App& command, DaemonFlags& flags, CLI::Option* provider) {
  CLI::Option* daemon =
      command
          .add_option("--daemon", flags.url,
                      "Send it to the plimsolld at URL: http://HOST:PORT, https://HOST:PORT or "
                      "unix:/PATH.")
          ->excludes(provider);
  command
      .add_option("--token-file", flags.token_file,
                  "Read the daemon's bearer token from PATH (default: $PLIMSOLL_TOKEN).")
      ->needs(daemon);
  command
      .add_flag("--allow-cleartext", flags.allow_cleartext,
                "Allow http:// to a daemon that is not on loopback (the token and code travel "
                "unencrypted).")
      ->needs(daemon);
  return daemon;
}

}  // namespace

int Main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return Main(args, std::cin, out, err);
}

int Main(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
         std::ostream& err) {
  CLI::App app{"plimsoll: run untrusted code in a sandbox that states its strength.", "plimsoll"};
  app.require_subcommand(1);

  RunOptions run;
  CLI::App* run_command = app.add_subcommand("run", "Run a snippet or a project.");
  CLI::Option* run_provider = run_command->add_option(
      "--provider", run.provider, "Provider (default: $SANDBOX_PROVIDER, else disabled).");
  std::string run_runtime;
  CLI::Option* run_runtime_option =
      run_command->add_option("--runtime", run_runtime,
                              "With --provider oci: runc, crun or runsc (default: "
                              "$SANDBOX_OCI_RUNTIME, else runc).");
  run_command->add_option("--floor", run.floor,
                          "Minimum isolation: process, container, kernel or vm.");
  run_command->add_option("--timeout", run.timeout_ms, "Timeout in ms (<= 0: provider default).");
  run_command->add_option("--lang", run.lang, "Snippet language: javascript or python.");
  run_command->add_option("-e,--eval", run.code, "The snippet to run.");
  run_command->add_option("file", run.file, "A file holding the snippet.");
  run_command->add_option("--project", run.project_dir, "Run the files of DIR as a project.");
  // One value per occurrence, taken whole: CLI11 would otherwise split a
  // value written "[a,b]" (a JSON step) into several steps.
  run_command->add_option("--step", run.steps, "A project step as argv words or a JSON array.")
      ->allow_extra_args(false);
  run_command->add_option("--module", run.module,
                          "A module run: the model (plant) to evaluate per row (docs/exams.md).");
  run_command->add_option("--rows", run.rows_path, "--module: the rows, CSV, one per line.");
  run_command->add_option("--end-time", run.end_time, "--module: seconds of model time.");
  run_command->add_option("--tick", run.step,
                          "--module: the model's tick in seconds (the payload's step).");
  run_command->add_option("--artifact", run.artifacts, "A project path to bring back.")
      ->allow_extra_args(false);
  run_command->add_option("--trace-id", run.trace_id, "A trace ID [A-Za-z0-9._:-]{1,64}.");
  run_command->add_option("--grant", run.grant_profile,
                          "A grant profile name (of --grants; the run's caller is \"local\").");
  run_command->add_option("--grants", run.grants_path,
                          "The grants file (default: $PLIMSOLL_GRANTS; docs/grants.md).");
  run_command->add_option("--environment", run.environment, "Require this environment identity.");
  run_command->add_option("--image", run.image,
                          "Run on the image NAME: the daemon's (with --daemon), else the "
                          "variant's (this build tree's image-NAME, else the cache's).");
  run_command->add_flag("--json", run.json, "Print the result as the API's JSON object.");
  run_command->add_option("--save-displays", run.save_displays,
                          "Write the result's displays (figures, tables) into DIR.");
  DaemonFlags run_daemon;
  CLI::Option* run_daemon_option = AddDaemonFlags(*run_command, run_daemon, run_provider);
  run_daemon_option->excludes(run_runtime_option);

  std::string describe_provider;
  CLI::App* describe_command =
      app.add_subcommand("describe", "Show a provider, its tier and evidence.");
  CLI::Option* describe_provider_option =
      describe_command->add_option("--provider", describe_provider, "Provider to describe.");
  std::string describe_runtime;
  CLI::Option* describe_runtime_option = describe_command->add_option(
      "--runtime", describe_runtime, "With --provider oci: runc, crun or runsc.");
  DaemonFlags describe_daemon;
  CLI::Option* describe_daemon_option =
      AddDaemonFlags(*describe_command, describe_daemon, describe_provider_option);
  describe_daemon_option->excludes(describe_runtime_option);

  ImageOptions image_options;
  CLI::App* image_command = AddImageCommand(app, image_options);

  CallersOptions callers_options;
  CLI::App* callers_command = AddCallersCommand(app, callers_options);

  SpecgenOptions specgen_options;
  CLI::App* specgen_command = AddSpecgenCommand(app, specgen_options);

  ReplOptions repl;
  CLI::App* repl_command =
      app.add_subcommand("repl", "An interactive prompt backed by a session (Ctrl-D closes it).");
  CLI::Option* repl_provider = repl_command->add_option(
      "--provider", repl.provider, "Provider (default: $SANDBOX_PROVIDER, else disabled).");
  CLI::Option* repl_runtime = repl_command->add_option("--runtime", repl.runtime,
                                                       "With --provider oci: runc, crun or runsc.");
  repl_command->add_option("--lang", repl.lang, "javascript (default) or python.");
  repl_command->add_option("--floor", repl.floor, "The session's minimum isolation.");
  repl_command->add_option("--timeout", repl.timeout_ms, "Per cell, in ms (<= 0: default).");
  CLI::Option* repl_daemon_option = AddDaemonFlags(*repl_command, repl.daemon, repl_provider);
  repl_daemon_option->excludes(repl_runtime);

  SessionCommandOptions session_options;
  CLI::App* session_command =
      app.add_subcommand("session", "A daemon's session, one command at a time (for scripts).");
  session_command->require_subcommand(1);
  for (const char* action : {"open", "run", "close", "list"}) {
    const std::string name = action;
    CLI::App* sub = session_command->add_subcommand(
        name, name == "open"    ? "Open a session; prints its ID."
              : name == "run"   ? "Run a cell in session ID."
              : name == "close" ? "Close session ID."
                                : "The sessions this CLI opened and did not close.");
    sub->callback([&session_options, name] { session_options.action = name; });
    sub->add_option("--state-dir", session_options.state_dir,
                    "Where the chains of records are kept (default: $PLIMSOLL_STATE_DIR, else "
                    "$XDG_STATE_HOME/plimsoll, else ~/.local/state/plimsoll).");
    if (name == "list") continue;
    CLI::Option* url =
        sub->add_option("--daemon", session_options.daemon.url, "The plimsolld URL.");
    sub->add_option("--token-file", session_options.daemon.token_file,
                    "Read the daemon's bearer token from PATH (default: $PLIMSOLL_TOKEN).")
        ->needs(url);
    sub->add_flag("--allow-cleartext", session_options.daemon.allow_cleartext,
                  "Allow http:// to a daemon that is not on loopback.")
        ->needs(url);
    if (name == "open") {
      sub->add_option("--floor", session_options.floor, "The session's minimum isolation.");
      sub->add_option("--image", session_options.image, "One of the daemon's images, by name.");
      sub->add_option("--lifetime-ms", session_options.lifetime_ms,
                      "At most 12 h (default 30 min).");
      sub->add_option("--idle-timeout-ms", session_options.idle_timeout_ms, "Default 5 min.");
      continue;
    }
    sub->add_option("id", session_options.id, "The session ID `open` printed.")->required();
    if (name == "run") {
      sub->add_option("--lang", session_options.lang, "javascript (default) or python.");
      sub->add_option("-e,--eval", session_options.code, "The cell.");
      sub->add_option("file", session_options.file, "A file holding the cell.");
      sub->add_option("--timeout", session_options.timeout_ms, "In ms (<= 0: default).");
      sub->add_flag("--json", session_options.json, "Print the result as the API's JSON object.");
    }
  }

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

  if (run_command->parsed()) {
    if (run_daemon_option->count() > 0) return RunOnDaemon(run, run_daemon, out, err);
    return RunCommand(run, run_runtime, out, err);
  }
  if (describe_command->parsed()) {
    if (describe_daemon_option->count() > 0) return DescribeOnDaemon(describe_daemon, out, err);
    return DescribeCommand(describe_provider, describe_runtime, out, err);
  }
  if (repl_command->parsed()) {
    if (repl.daemon.url.empty()) NoWarmPoolUnlessAsked();
    return RunRepl(repl, in, out, err);
  }
  if (session_command->parsed()) return RunSessionCommand(session_options, out, err);
  if (image_command->parsed()) return RunImageCommand(image_options, out, err);
  if (callers_command->parsed()) return RunCallersCommand(callers_options, out, err);
  if (specgen_command->parsed()) return RunSpecgenCommand(specgen_options, in, out, err);
  out << "plimsoll " << kVersion << " (protocol " << kProtocol << ")\n";
  return kExitRanOk;
}

}  // namespace plimsoll::cli
