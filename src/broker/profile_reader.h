// Reading one profile of a grants file (grants.cc's helper; see grants.h for
// the format and docs/grants.md for the operator's view).
//
// ReadProfile checks every field of one `profiles:` entry, records each
// problem in `problems` and returns the profile only when it had none.
// Warnings (not errors) are appended to `warnings`.
//
// Usage (inside ParseGrants):
//
//   for (const auto& entry : *profile_entries) {
//     if (auto profile = ReadProfile(problems, entry, warnings)) keep(*profile);
//   }
#ifndef PLIMSOLL_BROKER_PROFILE_READER_H_
#define PLIMSOLL_BROKER_PROFILE_READER_H_

#include <optional>
#include <string>
#include <vector>

#include "broker/grants.h"
#include "broker/grants_problems.h"

namespace plimsoll::broker {

std::optional<Profile> ReadProfile(GrantsProblems& problems, const GrantsProblems::Entry& entry,
                                   std::vector<std::string>& warnings);

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_PROFILE_READER_H_
