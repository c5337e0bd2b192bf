#include "auth/sqlite.h"

#include <utility>

namespace plimsoll::auth::sqlite {
namespace {

Error ErrorFor(sqlite3* db, int code, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  if ((code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED) {
    message += " (another process holds the caller store; try again)";
  }
  if (!message.ends_with('.')) message += '.';
  return Failure(ErrorCode::kInternal, std::move(message));
}

}  // namespace

Expected<Database> Database::Open(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  int code = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  Database database(db);  // closes `db` on every path, even when open failed
  if (code != SQLITE_OK) return ErrorFor(db, code, "Opening the caller store " + path);
  sqlite3_extended_result_codes(db, 1);
  return database;
}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

Database::~Database() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Status Database::Execute(std::string_view what, const std::string& sql) {
  int code = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (code != SQLITE_OK) return ErrorFor(db_, code, what);
  return Status::Ok();
}

Error Database::LastError(std::string_view what) const {
  return ErrorFor(db_, sqlite3_extended_errcode(db_), what);
}

Expected<Statement> Statement::Prepare(const Database& db, std::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  int code = sqlite3_prepare_v3(db.get(), sql.data(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
  if (code != SQLITE_OK) return ErrorFor(db.get(), code, "Preparing a caller store query");
  return Statement(db.get(), statement);
}

Statement::~Statement() {
  if (statement_ != nullptr) sqlite3_finalize(statement_);
}

void Statement::BindText(int index, std::string_view text) {
  sqlite3_bind_text64(statement_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

void Statement::BindBlob(int index, std::span<const unsigned char> bytes) {
  sqlite3_bind_blob64(statement_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
}

void Statement::BindInt(int index, int64_t value) {
  sqlite3_bind_int64(statement_, index, value);
}

void Statement::BindOptionalInt(int index, std::optional<int64_t> value) {
  if (value) {
    sqlite3_bind_int64(statement_, index, *value);
  } else {
    sqlite3_bind_null(statement_, index);
  }
}

Expected<bool> Statement::Step(std::string_view what) {
  int code = sqlite3_step(statement_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  return ErrorFor(db_, code, what);
}

std::string Statement::ColumnText(int index) const {
  const unsigned char* text = sqlite3_column_text(statement_, index);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(statement_, index)));
}

std::span<const unsigned char> Statement::ColumnBlob(int index) const {
  const void* blob = sqlite3_column_blob(statement_, index);
  if (blob == nullptr) return {};
  return {static_cast<const unsigned char*>(blob),
          static_cast<std::size_t>(sqlite3_column_bytes(statement_, index))};
}

int64_t Statement::ColumnInt(int index) const {
  return sqlite3_column_int64(statement_, index);
}

std::optional<int64_t> Statement::ColumnOptionalInt(int index) const {
  if (sqlite3_column_type(statement_, index) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(statement_, index);
}

void Statement::Reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

Transaction::~Transaction() {
  if (open_) (void)db_.Execute("Rolling back", "ROLLBACK");
}

Status Transaction::Begin() {
  PLIMSOLL_RETURN_IF_ERROR(db_.Execute("Locking the caller store for writing", "BEGIN IMMEDIATE"));
  open_ = true;
  return Status::Ok();
}

Status Transaction::Commit() {
  PLIMSOLL_RETURN_IF_ERROR(db_.Execute("Committing to the caller store", "COMMIT"));
  open_ = false;
  return Status::Ok();
}

}  // namespace plimsoll::auth::sqlite
