#include "cli/daemon_command.h"

#include <cstdlib>
#include <optional>

#include "cli/exit_status.h"
#include "cli/human_output.h"
#include "cli/run_report.h"
#include "cli/token_source.h"
#include "plimsoll/client.h"

namespace plimsoll::cli {

Expected<Client> OpenDaemonClient(const DaemonFlags& daemon) {
  Expected<std::string> token = ReadBearerToken(daemon.token_file, std::getenv(kTokenVariable));
  if (!token.ok()) return token.error();
  ClientOptions options;
  options.bearer_token = std::move(*token);
  options.allow_cleartext = daemon.allow_cleartext;
  return Client::Open(daemon.url, std::move(options));
}

int RunOnDaemon(const RunOptions& options, const DaemonFlags& daemon, std::ostream& out,
                std::ostream& err) {
  Expected<Client> client = OpenDaemonClient(daemon);
  if (!client.ok()) return ReportError(client.error(), options.json, out, err);
  // Projects are read within the SPEC's bounds (Limits{}); the daemon checks
  // the request against its own limits again.
  Expected<Request> request = BuildRequest(options, Limits{});
  if (!request.ok()) return ReportError(request.error(), options.json, out, err);
  Expected<Result> result = client->Run(*request);
  if (!result.ok()) return ReportError(result.error(), options.json, out, err);
  return ReportResultAndSave(*result, options.json, options.save_displays, out, err);
}

int DescribeOnDaemon(const DaemonFlags& daemon, std::ostream& out, std::ostream& err) {
  Expected<Client> client = OpenDaemonClient(daemon);
  if (!client.ok()) return ReportError(client.error(), false, out, err);
  Expected<DaemonDescription> described = client->Describe();
  if (!described.ok()) return ReportError(described.error(), false, out, err);
  // The isolation line shows the tier a run gets now, as the daemon states
  // it (the evidence's, never above the claim).
  std::optional<Evidence> evidence = described->evidence;
  if (evidence) evidence->tier = described->tier;
  out << "daemon:       " << daemon.url << "\n";
  PrintDescription(described->description, evidence, std::nullopt, out);
  return kExitRanOk;
}

}  // namespace plimsoll::cli
