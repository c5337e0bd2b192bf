// A thin RAII layer over the SQLite C API, for the caller store.
//
// Database owns a connection (sqlite3_close_v2 in the destructor); Statement
// owns a prepared statement (sqlite3_finalize). Failures become Errors whose
// message names what was being done and SQLite's own explanation.
//
// Usage:
//
//   auto db = sqlite::Database::Open(path, SQLITE_OPEN_READWRITE);
//   auto select = sqlite::Statement::Prepare(*db, "SELECT name FROM callers WHERE name = ?1");
//   select->BindText(1, "ci");
//   auto row = select->Step();           // Expected<bool>: true while there is a row
//   if (row.ok() && *row) Use(select->ColumnText(0));
//   select->Reset();                     // ends the read; bindings cleared
//
// Neither type is thread-safe; a Statement must not outlive its Database.
#ifndef PLIMSOLL_AUTH_SQLITE_H_
#define PLIMSOLL_AUTH_SQLITE_H_

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "plimsoll/error.h"

namespace plimsoll::auth::sqlite {

class Database {
 public:
  // `flags` as for sqlite3_open_v2; SQLITE_OPEN_NOMUTEX is added (callers
  // serialise use of one connection themselves).
  static Expected<Database> Open(const std::string& path, int flags);

  Database(Database&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  sqlite3* get() const { return db_; }

  // Runs SQL that returns no rows we need (one or more statements).
  Status Execute(std::string_view what, const std::string& sql);

  // An error for the last failure on this connection: "<what>: <sqlite message>".
  Error LastError(std::string_view what) const;

  int64_t Changes() const { return sqlite3_changes64(db_); }
  // The extended result code of the last failure (e.g. SQLITE_CONSTRAINT_PRIMARYKEY).
  int LastErrorCode() const { return sqlite3_extended_errcode(db_); }

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  static Expected<Statement> Prepare(const Database& db, std::string_view sql);

  Statement(Statement&& other) noexcept : db_(other.db_), statement_(other.statement_) {
    other.statement_ = nullptr;
  }
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are numbered from 1. Text and blobs are copied by SQLite.
  void BindText(int index, std::string_view text);
  void BindBlob(int index, std::span<const unsigned char> bytes);
  void BindInt(int index, int64_t value);
  void BindOptionalInt(int index, std::optional<int64_t> value);

  // true: a row is ready; false: done. `what` names the operation in errors.
  Expected<bool> Step(std::string_view what);

  // Columns are numbered from 0; valid until the next Step or Reset.
  std::string ColumnText(int index) const;
  std::span<const unsigned char> ColumnBlob(int index) const;
  int64_t ColumnInt(int index) const;
  std::optional<int64_t> ColumnOptionalInt(int index) const;

  // Ends the statement's transaction (if it opened one) and clears bindings,
  // so that the next use reads the newest committed data.
  void Reset();

 private:
  Statement(sqlite3* db, sqlite3_stmt* statement) : db_(db), statement_(statement) {}
  sqlite3* db_;
  sqlite3_stmt* statement_;
};

// Resets a statement when leaving a scope, whatever the path.
class ResetOnExit {
 public:
  explicit ResetOnExit(Statement& statement) : statement_(statement) {}
  ~ResetOnExit() { statement_.Reset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  Statement& statement_;
};

// A write transaction (BEGIN IMMEDIATE: the write lock is taken at once, so
// reads inside it cannot be invalidated by another writer). Rolls back in
// the destructor unless committed.
class Transaction {
 public:
  explicit Transaction(Database& db) : db_(db) {}
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Status Begin();
  Status Commit();

 private:
  Database& db_;
  bool open_ = false;
};

}  // namespace plimsoll::auth::sqlite

#endif  // PLIMSOLL_AUTH_SQLITE_H_
