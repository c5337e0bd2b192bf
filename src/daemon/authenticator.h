// The authentication seam of the daemon (SPEC §4 "Callers").
//
// The HTTP layer hands every /v1/* request's `Authorization` header to an
// Authenticator before it reads the body. The caller store (src/auth/,
// SQLite, bearer tokens stored as SHA-256 and compared in constant time)
// plugs in through auth::StoreAuthenticator (daemon/auth/store_authenticator.h),
// which plimsolld uses when the store has an active caller. Besides it the
// daemon has two built-in ones:
//   - DevAuthenticator: `--dev` only (loopback listeners only, with a warning
//     banner at startup): every request is the caller "dev" with scope admin.
//   - NoCallersAuthenticator: no callers and no --dev: every request is
//     refused `unauthenticated` (nothing ran); used with the disabled provider.
//
// Contract for implementations:
//   - Authenticate is called on an I/O thread for every request: it must be
//     fast and non-blocking (no network; a local store lookup is fine) and
//     thread-safe. Revocation must take effect on the next call.
//   - A missing, malformed or unknown token is Refusal(kPermission,
//     kUnauthenticated, ...); a known caller lacking a scope is
//     Refusal(kPermission, kPermissionDenied, ...). Messages never echo the
//     token.
//
// Usage:
//   auto caller = authenticator.Authenticate(header_value_or_nullopt);
//   if (!caller.ok()) return http::ErrorAnswer(caller.error(), request_id, log);
//   if (!auth::HasScope(*caller, auth::kScopeRun)) ...   (the Router does this)
#ifndef PLIMSOLL_DAEMON_AUTHENTICATOR_H_
#define PLIMSOLL_DAEMON_AUTHENTICATOR_H_

#include <memory>
#include <optional>
#include <string_view>

#include "auth/caller.h"
#include "plimsoll/error.h"

namespace plimsoll::daemon {

using Caller = auth::Caller;

class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // `authorization` is the value of the one Authorization header, or nullopt
  // when there is none (several Authorization headers are refused by the HTTP
  // layer before this is called).
  virtual Expected<Caller> Authenticate(std::optional<std::string_view> authorization) = 0;
};

// --dev: everyone is "dev" with every scope. Only for loopback listeners.
std::unique_ptr<Authenticator> MakeDevAuthenticator();

// No callers configured: everyone is refused `unauthenticated`.
std::unique_ptr<Authenticator> MakeNoCallersAuthenticator();

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_AUTHENTICATOR_H_
