#include "auth/store_schema.h"

#include <array>
#include <string>

namespace plimsoll::auth {
namespace {

// migrations[i] takes the schema from version i to version i + 1.
constexpr std::array<const char*, kStoreSchemaVersion> kMigrations = {
    R"sql(
      CREATE TABLE callers (
        name TEXT PRIMARY KEY NOT NULL,
        scopes TEXT NOT NULL,
        max_concurrent INTEGER CHECK (max_concurrent IS NULL OR max_concurrent > 0),
        rate_per_min INTEGER CHECK (rate_per_min IS NULL OR rate_per_min > 0),
        token_lookup BLOB NOT NULL CHECK (length(token_lookup) = 8),
        token_hash BLOB NOT NULL CHECK (length(token_hash) = 32),
        created_at INTEGER NOT NULL,
        rotated_at INTEGER,
        revoked_at INTEGER
      ) STRICT;
      CREATE INDEX callers_by_token_lookup ON callers (token_lookup);
    )sql",
};

Expected<int64_t> ReadInteger(sqlite::Database& db, const std::string& sql, std::string_view what) {
  auto statement = sqlite::Statement::Prepare(db, sql);
  if (!statement.ok()) return statement.error().WithContext(what);
  auto row = statement->Step(what);
  if (!row.ok()) return row.error();
  return *row ? statement->ColumnInt(0) : 0;
}

}  // namespace

Status MigrateStoreSchema(sqlite::Database& db, const std::string& path) {
  sqlite::Transaction transaction(db);
  // Reading the header first turns "not a database" into a clear error
  // before we try to lock anything.
  auto application_id =
      ReadInteger(db, "PRAGMA application_id", "Reading the caller store " + path);
  if (!application_id.ok()) return application_id.error();
  PLIMSOLL_RETURN_IF_ERROR(transaction.Begin());
  application_id = ReadInteger(db, "PRAGMA application_id", "Reading the caller store");
  if (!application_id.ok()) return application_id.error();
  auto version = ReadInteger(db, "PRAGMA user_version", "Reading the caller store's version");
  if (!version.ok()) return version.error();
  auto tables = ReadInteger(db, "SELECT count(*) FROM sqlite_schema", "Reading the caller store");
  if (!tables.ok()) return tables.error();

  bool ours = *application_id == kStoreApplicationId;
  bool empty = *application_id == 0 && *version == 0 && *tables == 0;
  if (!ours && !empty) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "\"" + path +
                       "\" is an SQLite database but not a plimsoll caller store; give "
                       "the path of a caller store or of a new file.");
  }
  if (*version > kStoreSchemaVersion) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "The caller store \"" + path + "\" has schema version " +
                       std::to_string(*version) +
                       ", written by a newer plimsoll; this build knows "
                       "versions up to " +
                       std::to_string(kStoreSchemaVersion) + ".");
  }
  for (int64_t from = *version; from < kStoreSchemaVersion; ++from) {
    PLIMSOLL_RETURN_IF_ERROR(db.Execute(
        "Migrating the caller store to schema " + std::to_string(from + 1), kMigrations[from]));
  }
  if (*version != kStoreSchemaVersion || !ours) {
    PLIMSOLL_RETURN_IF_ERROR(
        db.Execute("Marking the caller store",
                   "PRAGMA application_id = " + std::to_string(kStoreApplicationId) +
                       "; PRAGMA user_version = " + std::to_string(kStoreSchemaVersion)));
  }
  return transaction.Commit();
}

}  // namespace plimsoll::auth
