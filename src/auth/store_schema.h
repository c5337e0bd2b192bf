// The caller store's schema and its migrations.
//
// The file is marked as ours with PRAGMA application_id ('plms') and carries
// its schema version in PRAGMA user_version. Opening a store:
//   - an empty database gets the newest schema;
//   - an older version is migrated forward, one step at a time, each step in
//     the same transaction as its version bump;
//   - a newer version (written by a newer plimsoll) is refused: this build
//     cannot know what its rows mean;
//   - any other SQLite database (another application_id, or tables but no
//     version) is refused rather than written to.
//
// Schema 1, table `callers` (one row per caller, revoked ones kept so that
// names in audit logs stay unambiguous):
//   name TEXT PRIMARY KEY, scopes TEXT (space-separated),
//   max_concurrent INTEGER NULL, rate_per_min INTEGER NULL,
//   token_lookup BLOB (first 8 bytes of token_hash, indexed),
//   token_hash BLOB (SHA-256 of the token, 32 bytes),
//   created_at, rotated_at, revoked_at INTEGER (Unix seconds, NULL = never).
#ifndef PLIMSOLL_AUTH_STORE_SCHEMA_H_
#define PLIMSOLL_AUTH_STORE_SCHEMA_H_

#include <cstdint>

#include "auth/sqlite.h"
#include "plimsoll/error.h"

namespace plimsoll::auth {

inline constexpr int64_t kStoreApplicationId = 0x706c6d73;  // "plms"
inline constexpr int64_t kStoreSchemaVersion = 1;

// Brings the connection's database to kStoreSchemaVersion as described above.
// Precondition: no transaction is open on `db`.
Status MigrateStoreSchema(sqlite::Database& db, const std::string& path_for_messages);

}  // namespace plimsoll::auth

#endif  // PLIMSOLL_AUTH_STORE_SCHEMA_H_
