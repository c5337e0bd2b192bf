// Where the caller store lives, and the checks on its file before SQLite
// opens it (docs/callers.md).
//
// Default path, first match wins:
//   $PLIMSOLL_CALLERS (when set and non-empty)
//   /var/lib/plimsoll/callers.db                     when running as root
//   $XDG_DATA_HOME/plimsoll/callers.db               otherwise, when XDG_DATA_HOME is absolute
//   $HOME/.local/share/plimsoll/callers.db           otherwise
//
// The store holds only token digests, but whoever can write it can add
// callers: the file is created mode 0600 and a file that group or others may
// write is refused. (SQLite gives its -wal and -shm files the database
// file's mode.)
//
// Usage:
//   auto path = auth::DefaultCallerStorePath();
//   PLIMSOLL_RETURN_IF_ERROR(auth::PrepareStoreFile(*path, /*create_if_missing=*/true,
//                                                  /*create_parent=*/true));
#ifndef PLIMSOLL_AUTH_STORE_FILE_H_
#define PLIMSOLL_AUTH_STORE_FILE_H_

#include <filesystem>

#include "plimsoll/error.h"

namespace plimsoll::auth {

inline constexpr const char* kCallerStoreVariable = "PLIMSOLL_CALLERS";

// The default store path above. Fails (failed_precondition) only when no
// variable gives a home for a non-root user.
Expected<std::filesystem::path> DefaultCallerStorePath();

// Checks `path` before SQLite opens it:
//   - it exists: it must be a regular file (a symbolic link to one is fine)
//     that neither group nor others may write;
//   - it is missing: not_found unless `create_if_missing`; then its parent
//     must be a directory (created, mode 0700, only if `create_parent`), and
//     the file is created empty with mode 0600.
// Errors are whole sentences naming the path and what to do.
Status PrepareStoreFile(const std::filesystem::path& path, bool create_if_missing,
                        bool create_parent);

}  // namespace plimsoll::auth

#endif  // PLIMSOLL_AUTH_STORE_FILE_H_
