// Opens the broker from a grants file on disk: what `plimsolld --grants` and
// `plimsoll run --grants` do at startup (docs/grants.md).
//
// Reads the file (at most kMaxGrantsFileBytes, a regular file), parses it
// (grants.h: every problem listed) and creates the Broker (broker.h: every
// credential variable checked). Any failure is one error whose message lists
// every problem, prefixed by the path; nothing is served on a bad file.
//
// Usage:
//
//   std::vector<std::string> warnings;
//   auto broker = OpenBrokerFile(path, ProcessEnvironment(), warnings);
//   if (!broker.ok()) { log.Error(broker.error().message()); return 2; }
//   for (const std::string& warning : warnings) log.Warning(warning);
#ifndef PLIMSOLL_BROKER_BROKER_FILE_H_
#define PLIMSOLL_BROKER_BROKER_FILE_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "plimsoll/error.h"

namespace plimsoll::broker {

inline constexpr int64_t kMaxGrantsFileBytes = int64_t{1} << 20;

// Reads variables from this process's environment (getenv).
EnvironmentReader ProcessEnvironment();

// `warnings` receives the grants file's warnings (e.g. a profile open to
// every caller). Errors: kInvalidArgument (unreadable, too large, or a file
// with problems), kFailedPrecondition (a credential variable unset or
// unusable).
Expected<Broker> OpenBrokerFile(const std::filesystem::path& path,
                                const EnvironmentReader& environment,
                                std::vector<std::string>& warnings);

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_BROKER_FILE_H_
