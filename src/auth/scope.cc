#include "auth/scope.h"

#include <algorithm>

namespace plimsoll::auth {
namespace {

constexpr std::string_view kValidScopes =
    "runs, describe, sessions, admin, grants:PROFILE, grants:*";

// Grant profile names as the broker names them: [A-Za-z0-9._-]{1,64}.
bool IsProfileName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

}  // namespace

std::string GrantScope(std::string_view profile) {
  std::string scope(kGrantScopePrefix);
  scope += profile;
  return scope;
}

Expected<std::string> ParseScope(std::string_view text) {
  if (text == kScopeRuns || text == kScopeDescribe || text == kScopeSessions ||
      text == kScopeAdmin) {
    return std::string(text);
  }
  if (text.starts_with(kGrantScopePrefix)) {
    std::string_view profile = text.substr(kGrantScopePrefix.size());
    if (profile == kAnyGrantProfile || IsProfileName(profile)) return std::string(text);
    return Failure(ErrorCode::kInvalidArgument,
                   "The scope \"" + std::string(text) +
                       "\" names no valid grant profile: use grants:* or grants:NAME with NAME "
                       "matching [A-Za-z0-9._-]{1,64}.");
  }
  return Failure(ErrorCode::kInvalidArgument,
                 "Unknown scope \"" + std::string(text) +
                     "\"; valid scopes are: " + std::string(kValidScopes) + ".");
}

Expected<std::vector<std::string>> ParseScopes(const std::vector<std::string>& words) {
  std::vector<std::string> scopes;
  for (const std::string& word : words) {
    std::string_view rest = word;
    while (true) {
      std::size_t comma = rest.find(',');
      std::string_view piece = rest.substr(0, comma);
      while (!piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
      while (!piece.empty() && piece.back() == ' ') piece.remove_suffix(1);
      if (!piece.empty()) {
        auto scope = ParseScope(piece);
        if (!scope.ok()) return scope.error();
        scopes.push_back(std::move(*scope));
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  std::sort(scopes.begin(), scopes.end());
  scopes.erase(std::unique(scopes.begin(), scopes.end()), scopes.end());
  return scopes;
}

bool HasScope(const Caller& caller, std::string_view required) {
  for (const std::string& held : caller.scopes) {
    if (held == required || held == kScopeAdmin) return true;
    if (required.starts_with(kGrantScopePrefix) && held == GrantScope(kAnyGrantProfile))
      return true;
  }
  return false;
}

Status Authorize(const Caller& caller, std::string_view required) {
  if (HasScope(caller, required)) return Status::Ok();
  return Refusal(NotDispatched::kPermission, ErrorCode::kPermissionDenied,
                 "The caller \"" + caller.name + "\" lacks the scope \"" + std::string(required) +
                     "\" this needs.");
}

}  // namespace plimsoll::auth
