#include "cli/repl_command.h"

#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>

#include "cli/exit_status.h"
#include "cli/repl_input.h"
#include "cli/run_report.h"
#include "plimsoll/client.h"
#include "plimsoll/sandbox.h"

namespace plimsoll::cli {
namespace {

// A session seen from the prompt: in-process or on a daemon.
struct ReplSession {
  std::string provider;
  Tier tier = Tier::kUnknown;
  std::function<Expected<Result>(const Request&)> run;
  std::function<Expected<SessionClose>()> close;
};

Expected<ReplSession> OpenInProcess(const ReplOptions& options,
                                    std::shared_ptr<Sandbox>& sandbox) {
  std::string provider = options.provider.empty() ? ProviderNameFromEnvironment() : options.provider;
  if (!options.runtime.empty()) provider += ":" + options.runtime;
  auto opened = Sandbox::Open(provider);
  if (!opened.ok()) return opened.error();
  sandbox = std::make_shared<Sandbox>(std::move(*opened));
  SessionOptions session_options;
  session_options.minimum_isolation = options.floor;
  auto session = sandbox->OpenSession(session_options);
  if (!session.ok()) return session.error();
  std::shared_ptr<Session> kept = std::move(*session);
  ReplSession repl;
  repl.provider = provider;
  repl.tier = kept->Info().isolation;
  repl.run = [kept](const Request& request) { return kept->Run(request); };
  repl.close = [kept]() -> Expected<SessionClose> { return kept->Close(); };
  return repl;
}

Expected<ReplSession> OpenOnDaemon(const ReplOptions& options) {
  auto client = OpenDaemonClient(options.daemon);
  if (!client.ok()) return client.error();
  auto shared = std::make_shared<Client>(std::move(*client));
  SessionOpenRequest open;
  open.options.minimum_isolation = options.floor;
  auto info = shared->OpenSession(open);
  if (!info.ok()) return info.error();
  auto chain = std::make_shared<ChainState>();
  ReplSession repl;
  repl.provider = info->provider + " at " + options.daemon.url;
  repl.tier = info->isolation;
  const std::string id = info->id;
  repl.run = [shared, chain, id](const Request& request) {
    return shared->RunInSession(id, request, *chain);
  };
  repl.close = [shared, chain, id] { return shared->CloseSession(id, *chain); };
  return repl;
}

void ShowCell(const Result& result, std::ostream& out, std::ostream& err) {
  out << result.stdout_bytes;
  if (result.stdout_truncated) out << "\n[stdout cut at the output cap]\n";
  err << result.stderr_bytes;
  if (result.stderr_truncated) err << "\n[stderr cut at the output cap]\n";
  out.flush();
  err.flush();
  if (result.timed_out) {
    err << "[timed out: the interpreter was stopped; the next cell starts a fresh one]\n";
  } else if (result.exit_code == 137) {
    err << "[out of memory: the interpreter was stopped; the next cell starts a fresh one]\n";
  }
  if (result.cell && result.cell->value) {
    out << *result.cell->value << (result.cell->value_truncated ? " [cut]" : "") << "\n";
  }
  out.flush();
}

}  // namespace

int RunRepl(const ReplOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  if (options.lang != "javascript" && options.lang != "python") {
    err << "plimsoll: --lang must be javascript or python.\n";
    return kExitUsage;
  }
  std::shared_ptr<Sandbox> sandbox;  // in-process: outlives the session's functions
  Expected<ReplSession> session =
      options.daemon.url.empty() ? OpenInProcess(options, sandbox) : OpenOnDaemon(options);
  if (!session.ok()) return ReportError(session.error(), false, out, err);
  err << "plimsoll repl: " << options.lang << " on " << session->provider << ", tier "
      << TierName(session->tier) << ". A session keeps what each cell leaves; Ctrl-D closes it.\n";
  const std::string prompt = options.lang == "python" ? ">>> " : "> ";
  bool seen_fresh = false;
  std::string cell;
  for (;;) {
    err << (cell.empty() ? prompt : "... ") << std::flush;
    std::string line;
    if (!std::getline(in, line)) break;
    cell += cell.empty() ? line : "\n" + line;
    if (CellNeedsMoreInput(cell, options.lang)) continue;
    if (cell.find_first_not_of(" \t\r\n") == std::string::npos) {
      cell.clear();
      continue;
    }
    Request request;
    request.timeout_ms = options.timeout_ms;
    request.cell = CellPayload{options.lang, cell};
    cell.clear();
    Expected<Result> result = session->run(request);
    if (!result.ok()) {
      err << "error" << (NotDispatchedReason(result.error()) ? " (nothing ran)" : "") << ": "
          << result.error().ToString() << "\n";
      if (result.error().code() == ErrorCode::kNotFound ||
          result.error().code() == ErrorCode::kDataLoss) {
        break;  // the session is gone, or its answers cannot be believed
      }
      continue;
    }
    if (result->cell && result->cell->interpreter_started && seen_fresh) {
      err << "[a fresh interpreter ran this cell: what earlier cells defined is gone]\n";
    }
    seen_fresh = true;
    ShowCell(*result, out, err);
  }
  err << "\n";
  Expected<SessionClose> closed = session->close();
  if (!closed.ok()) {
    if (closed.error().code() == ErrorCode::kNotFound) {
      err << "plimsoll repl: the session had already ended.\n";
      return kExitRanOk;
    }
    return ReportError(closed.error(), false, out, err);
  }
  err << "plimsoll repl: session " << SessionEndReasonName(closed->ended) << " after "
      << closed->calls << " call(s)"
      << (closed->last_record_sha256.empty() ? "" : "; last record " + closed->last_record_sha256)
      << ".\n";
  return kExitRanOk;
}

}  // namespace plimsoll::cli
