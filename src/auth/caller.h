// A caller: a named holder of a bearer token, with scopes and optional limits
// (SPEC §4, docs/callers.md). Values of this type never carry the token or its
// digest, so they are safe to log and to hand to any layer.
#ifndef PLIMSOLL_AUTH_CALLER_H_
#define PLIMSOLL_AUTH_CALLER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace plimsoll::auth {

struct Caller {
  // [A-Za-z0-9][A-Za-z0-9._-]{0,63}
  std::string name{};
  // Canonical, sorted, unique (auth/scope.h).
  std::vector<std::string> scopes{};
  // Own concurrent-run limit; none = only the daemon's global one.
  std::optional<int64_t> max_concurrent{};
  // Own runs-per-minute limit (token bucket, burst = the rate); none = unlimited.
  std::optional<int64_t> rate_per_min{};
  // Unix seconds. A revoked caller never authenticates.
  int64_t created_at = 0;
  std::optional<int64_t> rotated_at{};
  std::optional<int64_t> revoked_at{};

  bool revoked() const { return revoked_at.has_value(); }
  friend bool operator==(const Caller&, const Caller&) = default;
};

}  // namespace plimsoll::auth

#endif  // PLIMSOLL_AUTH_CALLER_H_
