#include "daemon/auth/store_authenticator.h"

#include "auth/token.h"

namespace plimsoll::auth {

Expected<Caller> StoreAuthenticator::Authenticate(std::optional<std::string_view> authorization) {
  auto token = BearerTokenFromHeader(authorization.value_or(std::string_view()));
  if (!token.ok()) return token.error();
  return store_->Authenticate(*token);
}

Expected<std::unique_ptr<StoreAuthenticator>> OpenStoreAuthenticator(
    const std::filesystem::path& path) {
  StoreOptions options;
  options.busy_timeout = std::chrono::milliseconds(250);
  auto store = CallerStore::Open(path, options);
  if (!store.ok()) return store.error();
  return std::make_unique<StoreAuthenticator>(std::move(*store));
}

}  // namespace plimsoll::auth
