#include "broker/grants.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <exception>
#include <set>
#include <string>
#include <utility>

#include "broker/grants_problems.h"
#include "broker/profile_reader.h"

namespace plimsoll::broker {
namespace {

const std::vector<std::string_view> kTopLevelFields = {"version", "profiles"};

// Checks the whole file; fills `profiles` and `warnings`. Every problem is
// recorded in `problems`.
void ReadGrants(const YAML::Node& root, GrantsProblems& problems,
                std::map<std::string, Profile, std::less<>>& profiles,
                std::vector<std::string>& warnings) {
  if (!root.IsDefined() || root.IsNull()) {
    problems.AddAtLine(1, "version", "is missing: the file is empty.");
    return;
  }
  if (!root.IsMap()) {
    problems.Add(root, "file", "must be a mapping with the keys version and profiles.");
    return;
  }
  auto top = problems.Mapping(root, "");
  if (!top) return;
  std::map<std::string, YAML::Node> by_name;
  for (const auto& entry : *top) {
    if (std::find(kTopLevelFields.begin(), kTopLevelFields.end(), entry.key) ==
        kTopLevelFields.end()) {
      problems.Add(entry.key_node, entry.key,
                   GrantsProblems::UnknownField(entry.key, kTopLevelFields, "a grants file"));
      continue;
    }
    by_name.emplace(entry.key, entry.value);
  }
  if (auto it = by_name.find("version"); it == by_name.end()) {
    problems.Add(root, "version", "is missing; write `version: 1`.");
  } else if (!it->second.IsScalar() || it->second.Tag() != "?" || it->second.Scalar() != "1") {
    problems.Add(it->second, "version", "must be 1 (unquoted), the only version so far.");
  }
  auto profiles_it = by_name.find("profiles");
  if (profiles_it == by_name.end()) {
    problems.Add(root, "profiles", "is missing; a grants file names its profiles under it.");
    return;
  }
  const std::string kNoProfiles = "The grants file names no profiles: no run can call an API.";
  if (profiles_it->second.IsNull()) {
    warnings.push_back(kNoProfiles);
    return;
  }
  auto entries = problems.Mapping(profiles_it->second, "profiles");
  if (!entries) return;
  if (entries->empty()) warnings.push_back(kNoProfiles);
  for (const auto& entry : *entries) {
    if (!IsValidProfileName(entry.key)) {
      problems.Add(entry.key_node, "profiles." + entry.key.substr(0, 80),
                   "is not a valid profile name: use 1 to 64 of a-z 0-9 . _ -, starting with a "
                   "letter or digit.");
    }
    if (auto profile = ReadProfile(problems, entry, warnings)) {
      profiles.emplace(entry.key, std::move(*profile));
    }
  }
}

}  // namespace

bool Profile::AllowsCaller(std::string_view caller) const {
  if (any_caller) return true;
  return std::find(allowed_callers.begin(), allowed_callers.end(), caller) != allowed_callers.end();
}

const Profile* Grants::ForCaller(std::string_view profile, std::string_view caller) const {
  auto it = profiles_.find(profile);
  if (it == profiles_.end() || !it->second.AllowsCaller(caller)) return nullptr;
  return &it->second;
}

std::vector<std::string> Grants::ProfilesFor(std::string_view caller) const {
  std::vector<std::string> names;
  for (const auto& [name, profile] : profiles_) {
    if (profile.AllowsCaller(caller)) names.push_back(name);
  }
  return names;
}

bool IsValidProfileName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) return false;
  }
  return true;
}

Expected<Grants> ParseGrants(std::string_view text, std::string_view source_name) {
  GrantsProblems problems(source_name);
  try {
    YAML::Node root = YAML::Load(std::string(text));
    std::vector<std::string> warnings;
    std::map<std::string, Profile, std::less<>> profiles;
    ReadGrants(root, problems, profiles, warnings);
    if (!problems.empty()) return problems.ToError();
    Grants grants;
    grants.profiles_ = std::move(profiles);
    grants.warnings_ = std::move(warnings);
    return grants;
  } catch (const YAML::Exception& error) {
    // A syntax error stops yaml-cpp at its first one; report it with the
    // problems found so far (none: parsing precedes checking).
    int line = error.mark.line >= 0 ? error.mark.line + 1 : 1;
    problems.AddAtLine(line, "syntax", "the file is not valid YAML or JSON (" + error.msg + ").");
    return problems.ToError();
  } catch (const std::exception& error) {
    return Failure(ErrorCode::kInternal, "The grants file " + std::string(source_name) +
                                             " could not be read: " + error.what() + ".");
  }
}

}  // namespace plimsoll::broker
