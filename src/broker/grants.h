// The grants file: which upstream APIs agent code may call, and how (SPEC §8,
// docs/grants.md).
//
// A grants file, in YAML or JSON, names grant profiles. Each profile is one
// upstream origin, the routes agent code may call on it, who may use it and
// where the broker finds the credential it attaches. ParseGrants reads the
// whole file and either returns Grants or ONE error listing every problem it
// found, each as "<source>:<line>: <profile>.<field>: <what is wrong>",
// sorted by line, so an operator fixes the file in one pass.
//
// Callers choose a profile by name only. ForCaller answers null both for a
// profile that does not exist and for one the caller may not use: the two
// must look the same from outside.
//
// Usage:
//
//   auto grants = ParseGrants(file_text, "/etc/plimsoll/grants.yaml");
//   if (!grants.ok()) return grants.error();  // every problem, one per line
//   for (const auto& warning : grants->Warnings()) log.Warn(warning);
//   const Profile* profile = grants->ForCaller(request.grant, caller.name);
//   if (profile == nullptr) return Refusal(NotDispatched::kPermission, ...);
//
// ParseGrants never throws (yaml-cpp's exceptions are caught inside). Grants
// is an immutable value: thread-safe to share once parsed.
#ifndef PLIMSOLL_BROKER_GRANTS_H_
#define PLIMSOLL_BROKER_GRANTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "broker/origin.h"
#include "broker/route.h"
#include "plimsoll/error.h"

namespace plimsoll::broker {

inline constexpr int64_t kDefaultMaxCalls = 256;
inline constexpr int64_t kMaxMaxCalls = 100000;
inline constexpr int64_t kDefaultJwtTtlSeconds = 300;
inline constexpr int64_t kMaxJwtTtlSeconds = 3600;

// `token: {source: static, env: VAR}`: the credential is the value of VAR in
// the daemon's environment, sent as "Authorization: Bearer <value>".
struct StaticTokenSource {
  std::string env;
  friend bool operator==(const StaticTokenSource&, const StaticTokenSource&) = default;
};

// `token: {source: jwt, secret_env: VAR, audience: STR, ttl_seconds: N}`: an
// HS256 JWT minted once per run (jwt.h), keyed by the value of VAR.
struct JwtTokenSource {
  std::string secret_env;
  std::string audience;
  int64_t ttl_seconds = kDefaultJwtTtlSeconds;
  friend bool operator==(const JwtTokenSource&, const JwtTokenSource&) = default;
};

using TokenSource = std::variant<StaticTokenSource, JwtTokenSource>;

struct Profile {
  std::string name;
  Origin base_url;
  std::vector<RouteTemplate> allow;  // in file order, never empty
  std::vector<std::string> scopes;
  // Empty when any_caller ("*").
  std::vector<std::string> allowed_callers;
  bool any_caller = false;
  TokenSource token;
  int64_t max_calls = kDefaultMaxCalls;
  // Allow entry text ("GET /items/*") -> its own cap.
  std::map<std::string, int64_t> route_max_calls;
  bool allow_in_sessions = false;
  // Per-item allow entry ("GET /items/*") -> the collection entry that
  // returns them all ("GET /items"); both are in `allow`.
  std::map<std::string, std::string> batch_of;
  std::optional<RouteTemplate> health_check;

  bool AllowsCaller(std::string_view caller) const;
};

class Grants {
 public:
  Grants() = default;  // no profiles

  // The profile named `profile` if `caller` may use it; null when it does not
  // exist OR the caller may not use it (indistinguishable on purpose). The
  // pointer lives as long as this Grants.
  const Profile* ForCaller(std::string_view profile, std::string_view caller) const;

  // The names of the profiles `caller` may use, sorted (what `describe`
  // shows: names only, nothing more).
  std::vector<std::string> ProfilesFor(std::string_view caller) const;

  // Things an operator should know at startup but that are not errors, e.g.
  // a profile every caller may use. Whole sentences, stable order.
  std::vector<std::string> Warnings() const { return warnings_; }

  // Every profile by name, for the daemon's own checks at startup (for
  // example that each token's environment variable is set).
  const std::map<std::string, Profile, std::less<>>& profiles() const { return profiles_; }

 private:
  friend Expected<Grants> ParseGrants(std::string_view text, std::string_view source_name);
  std::map<std::string, Profile, std::less<>> profiles_;
  std::vector<std::string> warnings_;
};

// Parses a grants file. `source_name` (usually the path) prefixes every
// problem. Errors: Failure(kInvalidArgument, "The grants file <source> has N
// problem(s):\n<problem>\n<problem>...").
Expected<Grants> ParseGrants(std::string_view text, std::string_view source_name);

// [a-z0-9][a-z0-9._-]{0,63}
bool IsValidProfileName(std::string_view name);

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_GRANTS_H_
