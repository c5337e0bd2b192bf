// Reads a directory into a project payload for `plimsoll run --project DIR`.
//
// Every regular file under DIR becomes a project file whose path is relative
// to DIR, in sorted order. Symbolic links and special files are refused
// rather than followed. Reading stops as soon as the limits are passed, so a
// huge directory is refused quickly.
//
// Usage:
//   auto files = plimsoll::cli::LoadProjectFiles("examples/project", limits);
#ifndef PLIMSOLL_CLI_PROJECT_LOADER_H_
#define PLIMSOLL_CLI_PROJECT_LOADER_H_

#include <filesystem>
#include <vector>

#include "plimsoll/limits.h"
#include "plimsoll/request.h"

namespace plimsoll::cli {

Expected<std::vector<ProjectFile>> LoadProjectFiles(const std::filesystem::path& directory,
                                                    const Limits& limits);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_PROJECT_LOADER_H_
