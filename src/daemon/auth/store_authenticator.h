// The caller store behind the daemon's Authenticator seam
// (daemon/authenticator.h, whose Caller is auth::Caller).
//
// Refusals: no Authorization header, a non-Bearer one, or a missing,
// malformed, unknown, rotated-away or revoked token are all unauthenticated
// with the `permission` mark; messages never hold the token. Scopes are
// checked by the caller of the seam (auth::HasScope / auth::Authorize).
//
// Usage (daemon startup):
//
//   auto authenticator = auth::OpenStoreAuthenticator(settings.callers_path);
//   if (!authenticator.ok()) return authenticator.error();   // e.g. no store
//   Server server(settings, sandbox, **authenticator, log);
//
// Thread-safe; each Authenticate() reads the store, so rotation and
// revocation take effect on the next request.
#ifndef PLIMSOLL_DAEMON_AUTH_STORE_AUTHENTICATOR_H_
#define PLIMSOLL_DAEMON_AUTH_STORE_AUTHENTICATOR_H_

#include <filesystem>
#include <memory>

#include "auth/caller_store.h"
#include "daemon/authenticator.h"

namespace plimsoll::auth {

class StoreAuthenticator final : public daemon::Authenticator {
 public:
  explicit StoreAuthenticator(std::unique_ptr<CallerStore> store) : store_(std::move(store)) {}

  Expected<Caller> Authenticate(std::optional<std::string_view> authorization) override;

  // For startup checks (CountActive) and tests.
  const CallerStore& store() const { return *store_; }

 private:
  std::unique_ptr<CallerStore> store_;
};

// Opens an existing store for the daemon: never creates one (not_found when
// missing), and a short busy timeout so that an I/O thread never waits long
// on an operator's write.
Expected<std::unique_ptr<StoreAuthenticator>> OpenStoreAuthenticator(
    const std::filesystem::path& path);

}  // namespace plimsoll::auth

#endif  // PLIMSOLL_DAEMON_AUTH_STORE_AUTHENTICATOR_H_
