#include "cli/callers_command.h"

#include <CLI/CLI.hpp>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/exit_status.h"
#include "auth/caller_store.h"
#include "auth/scope.h"
#include "auth/store_file.h"

namespace plimsoll::cli {
namespace {

int ReportError(const Error& error, std::ostream& err) {
  err << "plimsoll callers: " << error.message() << "\n";
  return error.code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitRanFailed;
}

// "2026-11-29T09:24:00Z"
std::string FormatTime(int64_t unix_seconds) {
  std::time_t time = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string FormatOptional(const std::optional<int64_t>& value, bool time) {
  if (!value) return "-";
  return time ? FormatTime(*value) : std::to_string(*value);
}

std::string JoinScopes(const std::vector<std::string>& scopes) {
  std::string text;
  for (const std::string& scope : scopes) text += (text.empty() ? "" : ",") + scope;
  return text.empty() ? "(none)" : text;
}

std::string Describe(const auth::Caller& caller) {
  std::string text = "scopes " + JoinScopes(caller.scopes);
  text += caller.max_concurrent
              ? "; at most " + std::to_string(*caller.max_concurrent) + " concurrent runs"
              : "; no own concurrency limit";
  text += caller.rate_per_min ? "; " + std::to_string(*caller.rate_per_min) + " runs per minute"
                              : "; no rate limit";
  return text;
}

Expected<std::unique_ptr<auth::CallerStore>> OpenStore(const CallersOptions& options, bool create) {
  auth::StoreOptions store_options;
  std::filesystem::path path = options.store;
  if (path.empty()) {
    auto default_path = auth::DefaultCallerStorePath();
    if (!default_path.ok()) return default_path.error();
    path = *default_path;
    store_options.create_parent = create;  // only ever for the documented default
  }
  store_options.create_if_missing = create;
  return auth::CallerStore::Open(path, store_options);
}

int Create(const CallersOptions& options, std::ostream& out, std::ostream& err) {
  auth::NewCaller request;
  request.name = options.name;
  request.scopes = options.scopes.empty() ? auth::DefaultScopes() : options.scopes;
  if (options.max_concurrent_option->count() > 0) request.max_concurrent = options.max_concurrent;
  if (options.rate_per_min_option->count() > 0) request.rate_per_min = options.rate_per_min;
  // Check what we can before creating a store file for nothing.
  Status name = auth::ValidateCallerName(request.name);
  if (!name.ok()) return ReportError(name.error(), err);
  auto scopes = auth::ParseScopes(request.scopes);
  if (!scopes.ok()) return ReportError(scopes.error(), err);

  auto store = OpenStore(options, /*create=*/true);
  if (!store.ok()) return ReportError(store.error(), err);
  auto issued = (*store)->Create(request);
  if (!issued.ok()) return ReportError(issued.error(), err);
  out << issued->token << "\n";
  err << "Created caller \"" << issued->caller.name << "\" (" << Describe(issued->caller) << ") in "
      << (*store)->path().string() << ".\n"
      << "The token above is shown only this once and is stored nowhere: keep it in a secret "
         "store now. If it is lost, run \"plimsoll callers rotate "
      << issued->caller.name << "\".\n";
  return kExitRanOk;
}

int List(const CallersOptions& options, std::ostream& out, std::ostream& err) {
  auto store = OpenStore(options, /*create=*/false);
  if (!store.ok()) return ReportError(store.error(), err);
  auto callers = (*store)->List();
  if (!callers.ok()) return ReportError(callers.error(), err);

  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    auto optional = [](const std::optional<int64_t>& value, bool time) -> nlohmann::json {
      if (!value) return nullptr;
      if (time) return FormatTime(*value);
      return *value;
    };
    for (const auth::Caller& caller : *callers) {
      list.push_back({{"name", caller.name},
                      {"scopes", caller.scopes},
                      {"max_concurrent", optional(caller.max_concurrent, false)},
                      {"rate_per_min", optional(caller.rate_per_min, false)},
                      {"revoked", caller.revoked()},
                      {"created_at", FormatTime(caller.created_at)},
                      {"rotated_at", optional(caller.rotated_at, true)},
                      {"revoked_at", optional(caller.revoked_at, true)}});
    }
    out << list.dump(2) << "\n";
    return kExitRanOk;
  }

  if (callers->empty()) {
    out << "No callers in " << (*store)->path().string() << ".\n";
    return kExitRanOk;
  }
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "STATE", "SCOPES", "MAX_CONCURRENT", "RATE_PER_MIN", "CREATED", "ROTATED"}};
  for (const auth::Caller& caller : *callers) {
    rows.push_back({caller.name,
                    caller.revoked() ? "revoked " + FormatTime(*caller.revoked_at) : "active",
                    JoinScopes(caller.scopes), FormatOptional(caller.max_concurrent, false),
                    FormatOptional(caller.rate_per_min, false), FormatTime(caller.created_at),
                    FormatOptional(caller.rotated_at, true)});
  }
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
  return kExitRanOk;
}

int Rotate(const CallersOptions& options, std::ostream& out, std::ostream& err) {
  auto store = OpenStore(options, /*create=*/false);
  if (!store.ok()) return ReportError(store.error(), err);
  auto issued = (*store)->Rotate(options.name);
  if (!issued.ok()) return ReportError(issued.error(), err);
  out << issued->token << "\n";
  err << "Rotated the token of caller \"" << issued->caller.name
      << "\": the old token stopped working now, and the daemon refuses it from its next "
         "request on.\nThe token above is shown only this once: keep it in a secret store now.\n";
  return kExitRanOk;
}

int Revoke(const CallersOptions& options, std::ostream& out, std::ostream& err) {
  auto store = OpenStore(options, /*create=*/false);
  if (!store.ok()) return ReportError(store.error(), err);
  auto before = (*store)->Get(options.name);
  if (!before.ok()) return ReportError(before.error(), err);
  auto caller = (*store)->Revoke(options.name);
  if (!caller.ok()) return ReportError(caller.error(), err);
  if (before->revoked()) {
    out << "Caller \"" << caller->name << "\" was already revoked at "
        << FormatTime(*caller->revoked_at) << ".\n";
  } else {
    out << "Revoked caller \"" << caller->name
        << "\": the daemon refuses its token from its next request on.\n";
  }
  return kExitRanOk;
}

void AddStoreOption(CLI::App* command, CallersOptions& options) {
  command->add_option("--store", options.store,
                      "Caller store file (default: $PLIMSOLL_CALLERS, else "
                      "/var/lib/plimsoll/callers.db for root, else "
                      "~/.local/share/plimsoll/callers.db).");
}

}  // namespace

CLI::App* AddCallersCommand(CLI::App& app, CallersOptions& options) {
  CLI::App* callers =
      app.add_subcommand("callers", "Manage the daemon's callers and tokens (docs/callers.md).");
  callers->require_subcommand(1);

  options.create = callers->add_subcommand("create", "Add a caller; prints its token once.");
  options.create->add_option("name", options.name, "Caller name ([A-Za-z0-9][A-Za-z0-9._-]*).")
      ->required();
  options.create
      ->add_option(
          "--scope", options.scopes,
          "Scope, repeatable or comma-separated: runs, describe, sessions, admin, grants:PROFILE, "
          "grants:* (default: runs,describe).")
      ->allow_extra_args(false);  // one value per --scope, so `--scope runs NAME` works
  options.max_concurrent_option = options.create->add_option(
      "--max-concurrent", options.max_concurrent, "At most N runs of this caller at once.");
  options.rate_per_min_option = options.create->add_option("--rate-per-min", options.rate_per_min,
                                                           "At most N runs per minute (burst N).");
  AddStoreOption(options.create, options);

  options.list = callers->add_subcommand("list", "List callers (never tokens).");
  options.list->add_flag("--json", options.json, "Print a JSON array.");
  AddStoreOption(options.list, options);

  options.rotate = callers->add_subcommand(
      "rotate", "Replace a caller's token; prints the new one once; the old one stops working.");
  options.rotate->add_option("name", options.name, "Caller name.")->required();
  AddStoreOption(options.rotate, options);

  options.revoke =
      callers->add_subcommand("revoke", "Revoke a caller; its token stops working at once.");
  options.revoke->add_option("name", options.name, "Caller name.")->required();
  AddStoreOption(options.revoke, options);
  return callers;
}

int RunCallersCommand(const CallersOptions& options, std::ostream& out, std::ostream& err) {
  if (options.create->parsed()) return Create(options, out, err);
  if (options.list->parsed()) return List(options, out, err);
  if (options.rotate->parsed()) return Rotate(options, out, err);
  return Revoke(options, out, err);
}

}  // namespace plimsoll::cli
