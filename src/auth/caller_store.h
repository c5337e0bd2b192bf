// The caller store: callers and their token digests in one SQLite file
// (SPEC §4, docs/callers.md).
//
// Tokens are shown once, when created or rotated, and never stored: a row
// keeps the token's SHA-256 and, for an indexed lookup, its first 8 bytes.
// Authenticate() hashes the presented token, fetches the rows with the same
// 8-byte lookup key and compares the full 32-byte digests in constant time
// (CRYPTO_memcmp), so the decision never rests on a variable-time comparison
// of secret-derived bytes.
//
// Every call reads through to the file (no cache), on one connection in WAL
// mode: a rotation or revocation committed by any process (e.g. the
// `plimsoll callers` command while the daemon runs) is seen by the next
// Authenticate() of every handle, without a restart. Writes use synchronous
// FULL so that a revocation survives a power cut.
//
// Usage (daemon):
//
//   auto store = auth::CallerStore::Open(path);          // must exist
//   if (!store.ok()) return store.error();
//   ...per request, from any thread:
//   auto token = auth::BearerTokenFromHeader(request["Authorization"]);
//   if (!token.ok()) return token.error();
//   auto caller = (*store)->Authenticate(*token);         // unauthenticated refusal
//   if (!caller.ok()) return caller.error();
//   PLIMSOLL_RETURN_IF_ERROR(auth::Authorize(*caller, auth::kScopeRuns));
//
// Usage (operator tools):
//
//   auth::StoreOptions options;
//   options.create_if_missing = true;
//   auto store = auth::CallerStore::Open(path, options);
//   auto issued = (*store)->Create({.name = "ci", .scopes = {"runs"}});
//   std::cout << issued->token;                            // the only time it exists
//
// Thread-safety: every method may be called from any number of threads at
// once (calls on one handle are serialised by an internal mutex). Several
// handles and processes may share one file.
#ifndef PLIMSOLL_AUTH_CALLER_STORE_H_
#define PLIMSOLL_AUTH_CALLER_STORE_H_

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/caller.h"
#include "plimsoll/error.h"

namespace plimsoll::auth {

struct StoreOptions {
  // Create the file (mode 0600) and its schema when missing. Off for the
  // daemon: a missing store is a configuration error, not an empty one.
  bool create_if_missing = false;
  // Also create a missing parent directory (mode 0700); for default paths.
  bool create_parent = false;
  // How long a call waits for another process's write lock before failing.
  std::chrono::milliseconds busy_timeout{5000};
  // Unix seconds for created/rotated/revoked stamps; the system clock if empty.
  std::function<int64_t()> now;
};

// What Create() and Rotate() return: the caller and its new token, which
// exists nowhere else. Do not log it.
struct IssuedToken {
  Caller caller;
  std::string token;
};

// A caller to create. Scopes are validated with ParseScope (auth/scope.h);
// limits must be >= 1 when present.
struct NewCaller {
  std::string name{};
  std::vector<std::string> scopes{};
  std::optional<int64_t> max_concurrent{};
  std::optional<int64_t> rate_per_min{};
};

// Caller names: [A-Za-z0-9][A-Za-z0-9._-]{0,63} (they appear in audit logs
// and metric labels). Returns invalid_argument otherwise.
Status ValidateCallerName(std::string_view name);

class CallerStore {
 public:
  // Opens (or, with create_if_missing, creates) the store at `path`; checks
  // the file (auth/store_file.h) and the schema (auth/store_schema.h).
  static Expected<std::unique_ptr<CallerStore>> Open(const std::filesystem::path& path,
                                                     StoreOptions options = {});

  ~CallerStore();
  CallerStore(const CallerStore&) = delete;
  CallerStore& operator=(const CallerStore&) = delete;

  // A new caller with a fresh token. A name in use, even by a revoked caller,
  // is refused (already exists): names stay unambiguous in audit logs.
  Expected<IssuedToken> Create(const NewCaller& caller);

  // Every caller, revoked ones included, by name. Never tokens or digests.
  Expected<std::vector<Caller>> List() const;

  // One caller by name, or not_found.
  Expected<Caller> Get(std::string_view name) const;

  // Replaces the caller's token; the old one fails from the next
  // Authenticate() on. A revoked caller cannot be rotated (failed_precondition).
  Expected<IssuedToken> Rotate(std::string_view name);

  // Revokes the caller; its token fails from the next Authenticate() on.
  // Revoking a revoked caller changes nothing and returns it as it is.
  Expected<Caller> Revoke(std::string_view name);

  // How many callers are not revoked (the daemon refuses to serve a real
  // provider with none, SPEC §4).
  Expected<int64_t> CountActive() const;

  // The caller holding `bearer_token` (the token itself, not the header; see
  // BearerTokenFromHeader). A missing, malformed, unknown or revoked token is
  // an unauthenticated refusal (not dispatched: permission) whose message
  // does not say which, and never contains the token. A store failure is an
  // internal error, still marked not dispatched (permission): no code ran.
  Expected<Caller> Authenticate(std::string_view bearer_token) const;

  const std::filesystem::path& path() const { return path_; }

 private:
  struct Connection;
  CallerStore(std::filesystem::path path, StoreOptions options,
              std::unique_ptr<Connection> connection);
  int64_t Now() const;

  std::filesystem::path path_;
  StoreOptions options_;
  std::unique_ptr<Connection> connection_;
};

}  // namespace plimsoll::auth

#endif  // PLIMSOLL_AUTH_CALLER_STORE_H_
