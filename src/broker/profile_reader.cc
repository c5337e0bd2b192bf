#include "broker/profile_reader.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace plimsoll::broker {
namespace {

const std::vector<std::string_view> kProfileFields = {
    "base_url", "allow",       "scopes",          "allowed_callers",
    "token",    "max_calls",   "route_max_calls", "allow_in_sessions",
    "batch_of", "health_check"};
const std::vector<std::string_view> kStaticTokenFields = {"source", "env"};
const std::vector<std::string_view> kJwtTokenFields = {"source", "secret_env", "audience",
                                                       "ttl_seconds"};

// The rule of the daemon's caller store (src/auth/caller_store.cc):
// 1..64 of A-Z a-z 0-9 . _ -, starting with a letter or digit.
bool IsValidCallerName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) return false;
  }
  return true;
}

bool IsValidEnvName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// An OAuth scope token (RFC 6749 §3.3): printable ASCII but space, '"', '\'.
bool IsValidScope(std::string_view scope) {
  if (scope.empty() || scope.size() > 256) return false;
  return std::all_of(scope.begin(), scope.end(),
                     [](char c) { return c >= 0x21 && c <= 0x7e && c != '"' && c != '\\'; });
}

// Reads one profile; records every problem. Returns nullopt if any field
// was wrong (the caller only keeps a profile when the file has no problems).
class ProfileReader {
 public:
  ProfileReader(GrantsProblems& problems, std::string name, const YAML::Node& key_node)
      : problems_(problems), key_node_(key_node) {
    profile_.name = std::move(name);
  }

  std::optional<Profile> Read(const YAML::Node& node, std::vector<std::string>& warnings) {
    auto fields = problems_.Mapping(node, profile_.name);
    if (!fields) return std::nullopt;
    std::map<std::string, YAML::Node> by_name;
    for (const auto& entry : *fields) {
      if (std::find(kProfileFields.begin(), kProfileFields.end(), entry.key) ==
          kProfileFields.end()) {
        Problem(entry.key_node, entry.key,
                GrantsProblems::UnknownField(entry.key, kProfileFields, "a profile"));
        continue;
      }
      by_name.emplace(entry.key, entry.value);
    }
    for (std::string_view required : {"base_url", "allow", "allowed_callers", "token"}) {
      if (by_name.count(std::string(required)) == 0) {
        problems_.Add(key_node_, Where(required), "is missing; every profile needs one.");
        ok_ = false;
      }
    }
    auto field = [&](std::string_view name) -> const YAML::Node* {
      auto it = by_name.find(std::string(name));
      return it == by_name.end() ? nullptr : &it->second;
    };
    if (auto* n = field("base_url")) ReadBaseUrl(*n);
    if (auto* n = field("allow")) ReadAllow(*n);
    if (auto* n = field("scopes")) ReadScopes(*n);
    if (auto* n = field("allowed_callers")) ReadCallers(*n);
    if (auto* n = field("token")) ReadToken(*n);
    if (auto* n = field("max_calls")) {
      auto value = problems_.Integer(*n, Where("max_calls"), 1, kMaxMaxCalls);
      Keep(value, profile_.max_calls);
    }
    if (auto* n = field("allow_in_sessions")) {
      Keep(problems_.Boolean(*n, Where("allow_in_sessions")), profile_.allow_in_sessions);
    }
    if (auto* n = field("route_max_calls")) ReadRouteMaxCalls(*n, warnings);
    if (auto* n = field("batch_of")) ReadBatchOf(*n);
    if (auto* n = field("health_check")) ReadHealthCheck(*n);
    if (profile_.any_caller) {
      warnings.push_back("The grant profile \"" + profile_.name +
                         "\" lists allowed_callers \"*\": every authenticated caller may use it.");
    }
    if (!ok_) return std::nullopt;
    return std::move(profile_);
  }

 private:
  std::string Where(std::string_view field) const {
    return profile_.name + "." + std::string(field);
  }

  void Problem(const YAML::Node& at, std::string_view field, std::string_view what) {
    problems_.Add(at, Where(field), what);
    ok_ = false;
  }

  template <typename T, typename U>
  void Keep(const std::optional<T>& value, U& into) {
    if (value) {
      into = *value;
    } else {
      ok_ = false;
    }
  }

  std::optional<RouteTemplate> ReadRoute(const YAML::Node& node, std::string_view where) {
    auto text = problems_.String(node, where);
    if (!text) {
      ok_ = false;
      return std::nullopt;
    }
    auto route = RouteTemplate::Parse(*text);
    if (!route.ok()) {
      problems_.Add(node, where, route.error().message());
      ok_ = false;
      return std::nullopt;
    }
    return *route;
  }

  void ReadBaseUrl(const YAML::Node& node) {
    auto text = problems_.String(node, Where("base_url"));
    if (!text) {
      ok_ = false;
      return;
    }
    auto origin = ParseOrigin(*text);
    if (!origin.ok()) {
      Problem(node, "base_url", origin.error().message());
      return;
    }
    profile_.base_url = *origin;
  }

  void ReadAllow(const YAML::Node& node) {
    if (!node.IsSequence() || node.size() == 0) {
      Problem(node, "allow", "must be a non-empty list of \"METHOD /path/template\" entries.");
      return;
    }
    std::size_t index = 0;
    for (const YAML::Node& entry : node) {
      std::string where = Where("allow") + "[" + std::to_string(index++) + "]";
      auto route = ReadRoute(entry, where);
      if (!route) continue;
      if (!allowed_texts_.insert(route->text()).second) {
        problems_.Add(entry, where, "\"" + route->text() + "\" is listed twice.");
        ok_ = false;
        continue;
      }
      profile_.allow.push_back(std::move(*route));
    }
  }

  void ReadScopes(const YAML::Node& node) {
    if (!node.IsSequence()) {
      Problem(node, "scopes", "must be a list of scope strings.");
      return;
    }
    std::set<std::string> seen;
    std::size_t index = 0;
    for (const YAML::Node& entry : node) {
      std::string field = "scopes[" + std::to_string(index++) + "]";
      auto scope = problems_.String(entry, Where(field));
      if (!scope) {
        ok_ = false;
      } else if (!IsValidScope(*scope)) {
        Problem(entry, field,
                "\"" + scope->substr(0, 64) +
                    "\" is not a scope: use printable ASCII without spaces, quotes or "
                    "backslashes.");
      } else if (!seen.insert(*scope).second) {
        Problem(entry, field, "\"" + *scope + "\" is listed twice.");
      } else {
        profile_.scopes.push_back(*scope);
      }
    }
  }

  void ReadCallers(const YAML::Node& node) {
    if (!node.IsSequence() || node.size() == 0) {
      Problem(node, "allowed_callers",
              "must be a non-empty list of caller names, or [\"*\"] for every caller.");
      return;
    }
    auto callers = problems_.StringList(node, Where("allowed_callers"));
    if (!callers || callers->size() != node.size()) {
      ok_ = false;
      return;
    }
    bool has_star = std::find(callers->begin(), callers->end(), "*") != callers->end();
    if (has_star) {
      if (callers->size() != 1) {
        Problem(node, "allowed_callers",
                "\"*\" (every caller) must be the only entry when it is used.");
        return;
      }
      profile_.any_caller = true;
      return;
    }
    std::set<std::string> seen;
    std::size_t index = 0;
    for (const YAML::Node& entry : node) {
      const std::string& caller = (*callers)[index];
      std::string field = "allowed_callers[" + std::to_string(index++) + "]";
      if (!IsValidCallerName(caller)) {
        Problem(entry, field,
                "\"" + caller.substr(0, 64) +
                    "\" is not a caller name (1 to 64 of A-Z a-z 0-9 . _ -, starting with a "
                    "letter or digit).");
      } else if (!seen.insert(caller).second) {
        Problem(entry, field, "\"" + caller + "\" is listed twice.");
      } else {
        profile_.allowed_callers.push_back(caller);
      }
    }
  }

  std::optional<std::string> ReadEnvName(const YAML::Node& node, std::string_view field) {
    auto name = problems_.String(node, Where(field));
    if (!name) {
      ok_ = false;
      return std::nullopt;
    }
    if (!IsValidEnvName(*name)) {
      Problem(node, field,
              "\"" + name->substr(0, 64) +
                  "\" is not an environment variable name (letters, digits and _, "
                  "not starting with a digit).");
      return std::nullopt;
    }
    return name;
  }

  void ReadToken(const YAML::Node& node) {
    auto fields = problems_.Mapping(node, Where("token"));
    if (!fields) {
      ok_ = false;
      return;
    }
    std::map<std::string, YAML::Node> by_name;
    std::map<std::string, YAML::Node> key_nodes;
    for (const auto& entry : *fields) {
      by_name.emplace(entry.key, entry.value);
      key_nodes.emplace(entry.key, entry.key_node);
    }
    auto source_it = by_name.find("source");
    if (source_it == by_name.end()) {
      Problem(node, "token.source", "is missing; it must be static or jwt.");
      return;
    }
    auto source = problems_.String(source_it->second, Where("token.source"));
    if (!source || (*source != "static" && *source != "jwt")) {
      if (source) Problem(source_it->second, "token.source", "must be static or jwt.");
      ok_ = false;
      return;
    }
    bool is_jwt = *source == "jwt";
    const auto& known = is_jwt ? kJwtTokenFields : kStaticTokenFields;
    for (const auto& [key, key_node] : key_nodes) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        Problem(
            key_node, "token." + key,
            GrantsProblems::UnknownField(key, known, is_jwt ? "a jwt token" : "a static token"));
      }
    }
    auto required = [&](std::string_view key) -> const YAML::Node* {
      auto it = by_name.find(std::string(key));
      if (it != by_name.end()) return &it->second;
      Problem(node, "token." + std::string(key),
              std::string("is missing; a ") + (is_jwt ? "jwt" : "static") + " token needs it.");
      return nullptr;
    };
    if (!is_jwt) {
      StaticTokenSource token;
      if (auto* env = required("env")) {
        if (auto name = ReadEnvName(*env, "token.env")) token.env = *name;
      }
      profile_.token = token;
      return;
    }
    JwtTokenSource token;
    if (auto* secret = required("secret_env")) {
      if (auto name = ReadEnvName(*secret, "token.secret_env")) token.secret_env = *name;
    }
    if (auto* audience = required("audience")) {
      Keep(problems_.String(*audience, Where("token.audience")), token.audience);
    }
    if (auto it = by_name.find("ttl_seconds"); it != by_name.end()) {
      Keep(problems_.Integer(it->second, Where("token.ttl_seconds"), 1, kMaxJwtTtlSeconds),
           token.ttl_seconds);
    }
    profile_.token = token;
  }

  // A key of route_max_calls or batch_of, or a value of batch_of: an entry
  // of `allow`, as its canonical text.
  std::optional<std::string> ReadAllowedEntry(const YAML::Node& node, std::string_view field) {
    auto route = ReadRoute(node, Where(field));
    if (!route) return std::nullopt;
    if (allowed_texts_.count(route->text()) == 0) {
      Problem(node, field, "\"" + route->text() + "\" is not one of this profile's allow entries.");
      return std::nullopt;
    }
    return route->text();
  }

  void ReadRouteMaxCalls(const YAML::Node& node, std::vector<std::string>& warnings) {
    auto entries = problems_.Mapping(node, Where("route_max_calls"));
    if (!entries) {
      ok_ = false;
      return;
    }
    for (const auto& entry : *entries) {
      std::string field = "route_max_calls." + entry.key;
      auto cap = problems_.Integer(entry.value, Where(field), 1, kMaxMaxCalls);
      if (!cap) ok_ = false;
      auto route = ReadAllowedEntry(entry.key_node, field);
      if (!cap || !route) continue;
      if (*cap > profile_.max_calls) {
        warnings.push_back("The grant profile \"" + profile_.name + "\" caps " + *route + " at " +
                           std::to_string(*cap) +
                           " calls, above its max_calls, which applies "
                           "first.");
      }
      profile_.route_max_calls[*route] = *cap;
    }
  }

  void ReadBatchOf(const YAML::Node& node) {
    auto entries = problems_.Mapping(node, Where("batch_of"));
    if (!entries) {
      ok_ = false;
      return;
    }
    for (const auto& entry : *entries) {
      std::string field = "batch_of." + entry.key;
      auto item = ReadAllowedEntry(entry.key_node, field);
      auto collection = ReadAllowedEntry(entry.value, field);
      if (!item || !collection) continue;
      if (*item == *collection) {
        Problem(entry.value, field,
                "names the same route as the per-item and the collection route.");
        continue;
      }
      profile_.batch_of[*item] = *collection;
    }
  }

  void ReadHealthCheck(const YAML::Node& node) {
    auto route = ReadRoute(node, Where("health_check"));
    if (!route) return;
    if (route->method() != HttpMethod::kGet && route->method() != HttpMethod::kHead) {
      Problem(node, "health_check",
              "must be a GET or HEAD route: a probe must not change anything.");
      return;
    }
    if (route->HasWildcard()) {
      Problem(node, "health_check", "must be a concrete path, without `*`.");
      return;
    }
    profile_.health_check = std::move(*route);
  }

  GrantsProblems& problems_;
  YAML::Node key_node_;
  Profile profile_;
  std::set<std::string> allowed_texts_;
  bool ok_ = true;
};

}  // namespace

std::optional<Profile> ReadProfile(GrantsProblems& problems, const GrantsProblems::Entry& entry,
                                   std::vector<std::string>& warnings) {
  ProfileReader reader(problems, entry.key, entry.key_node);
  return reader.Read(entry.value, warnings);
}

}  // namespace plimsoll::broker
