// Scopes: what a caller may do (docs/callers.md has the table).
//
//   runs            POST /v1/runs
//   describe        GET /v1/describe
//   sessions        the /v1/sessions routes
//   grants:PROFILE  use grant profile PROFILE in a request; `grants:*` any profile
//   admin           every scope above, and any administrative route to come
//
// Scopes are plain strings so that a store written by a newer plimsoll with
// a new scope still loads; ParseScope decides which strings may be issued.
//
// Usage:
//
//   auto scopes = auth::ParseScopes({"runs,describe", "grants:github"});
//   ...
//   PLIMSOLL_RETURN_IF_ERROR(auth::Authorize(caller, auth::kScopeRuns));
//   if (!request.grant_profile.empty())
//     PLIMSOLL_RETURN_IF_ERROR(auth::Authorize(caller, auth::GrantScope(request.grant_profile)));
//
// Thread-safe (pure functions).
#ifndef PLIMSOLL_AUTH_SCOPE_H_
#define PLIMSOLL_AUTH_SCOPE_H_

#include <string>
#include <string_view>
#include <vector>

#include "auth/caller.h"
#include "plimsoll/error.h"

namespace plimsoll::auth {

inline constexpr std::string_view kScopeRuns = "runs";
inline constexpr std::string_view kScopeDescribe = "describe";
inline constexpr std::string_view kScopeSessions = "sessions";
inline constexpr std::string_view kScopeAdmin = "admin";
inline constexpr std::string_view kGrantScopePrefix = "grants:";
inline constexpr std::string_view kAnyGrantProfile = "*";

// What `plimsoll callers create` gives when no --scope is named.
inline const std::vector<std::string>& DefaultScopes() {
  static const std::vector<std::string> scopes = {"describe", "runs"};
  return scopes;
}

// "grants:" + profile.
std::string GrantScope(std::string_view profile);

// Validates one scope ("runs", "grants:github", "grants:*", ...). Unknown names
// and malformed profiles are invalid_argument errors naming the valid set.
Expected<std::string> ParseScope(std::string_view text);

// Parses words that each hold one or more comma-separated scopes; returns
// them sorted and without duplicates. An empty list is valid (a caller that
// may do nothing until given scopes is pointless but harmless).
Expected<std::vector<std::string>> ParseScopes(const std::vector<std::string>& words);

// Whether `caller` holds `required` (directly, through `grants:*` for a grant
// scope, or through `admin`).
bool HasScope(const Caller& caller, std::string_view required);

// OK, or a permission_denied refusal (not dispatched: permission) naming the
// caller and the missing scope.
Status Authorize(const Caller& caller, std::string_view required);

}  // namespace plimsoll::auth

#endif  // PLIMSOLL_AUTH_SCOPE_H_
