// The authenticators the daemon has before the caller store: dev and none.
#include "auth/scope.h"
#include "daemon/authenticator.h"

namespace plimsoll::daemon {
namespace {

class DevAuthenticator final : public Authenticator {
 public:
  Expected<Caller> Authenticate(std::optional<std::string_view> /*authorization*/) override {
    return Caller{.name = "dev", .scopes = {std::string(auth::kScopeAdmin)}};
  }
};

class NoCallersAuthenticator final : public Authenticator {
 public:
  Expected<Caller> Authenticate(std::optional<std::string_view> /*authorization*/) override {
    return Refusal(NotDispatched::kPermission, ErrorCode::kUnauthenticated,
                   "This daemon has no callers configured, so no request can be authenticated. "
                   "Create a caller (plimsoll callers create NAME) or, for local development, "
                   "start plimsolld with --dev.");
  }
};

}  // namespace

std::unique_ptr<Authenticator> MakeDevAuthenticator() {
  return std::make_unique<DevAuthenticator>();
}

std::unique_ptr<Authenticator> MakeNoCallersAuthenticator() {
  return std::make_unique<NoCallersAuthenticator>();
}

}  // namespace plimsoll::daemon
