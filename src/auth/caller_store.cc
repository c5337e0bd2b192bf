#include "auth/caller_store.h"

#include <algorithm>
#include <mutex>
#include <span>
#include <utility>

#include "auth/scope.h"
#include "auth/sqlite.h"
#include "auth/store_file.h"
#include "auth/store_schema.h"
#include "auth/token.h"

namespace plimsoll::auth {
namespace {

constexpr std::size_t kLookupBytes = 8;

// Columns every caller query selects, in this order (ReadCaller).
#define PLIMSOLL_CALLER_COLUMNS \
  "name, scopes, max_concurrent, rate_per_min, created_at, rotated_at, revoked_at"

constexpr std::string_view kSelectByLookup =
    "SELECT " PLIMSOLL_CALLER_COLUMNS ", token_hash FROM callers WHERE token_lookup = ?1";
constexpr std::string_view kSelectByName =
    "SELECT " PLIMSOLL_CALLER_COLUMNS " FROM callers WHERE name = ?1";
constexpr std::string_view kSelectAll =
    "SELECT " PLIMSOLL_CALLER_COLUMNS " FROM callers ORDER BY name";
constexpr std::string_view kInsert =
    "INSERT INTO callers (name, scopes, max_concurrent, rate_per_min, token_lookup, token_hash, "
    "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
constexpr std::string_view kRotate =
    "UPDATE callers SET token_lookup = ?2, token_hash = ?3, rotated_at = ?4 "
    "WHERE name = ?1 AND revoked_at IS NULL";
constexpr std::string_view kRevoke =
    "UPDATE callers SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL";
constexpr std::string_view kCountActive = "SELECT count(*) FROM callers WHERE revoked_at IS NULL";

#undef PLIMSOLL_CALLER_COLUMNS

constexpr std::string_view kNotAuthenticated =
    "The caller token is not valid: it is unknown, malformed, rotated or revoked.";

std::vector<std::string> SplitScopes(std::string_view text) {
  std::vector<std::string> scopes;
  while (!text.empty()) {
    std::size_t space = text.find(' ');
    if (space != 0) scopes.emplace_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return scopes;
}

std::string JoinScopes(const std::vector<std::string>& scopes) {
  std::string text;
  for (const std::string& scope : scopes) {
    if (!text.empty()) text += ' ';
    text += scope;
  }
  return text;
}

Caller ReadCaller(const sqlite::Statement& row) {
  Caller caller;
  caller.name = row.ColumnText(0);
  caller.scopes = SplitScopes(row.ColumnText(1));
  caller.max_concurrent = row.ColumnOptionalInt(2);
  caller.rate_per_min = row.ColumnOptionalInt(3);
  caller.created_at = row.ColumnInt(4);
  caller.rotated_at = row.ColumnOptionalInt(5);
  caller.revoked_at = row.ColumnOptionalInt(6);
  return caller;
}

Error NotAuthenticated() {
  return Refusal(NotDispatched::kPermission, ErrorCode::kUnauthenticated,
                 std::string(kNotAuthenticated));
}

Error UnknownCaller(std::string_view name) {
  return Failure(ErrorCode::kNotFound, "There is no caller named \"" + std::string(name) + "\".");
}

Status ValidateLimit(std::string_view what, const std::optional<int64_t>& value) {
  if (value && *value < 1) {
    return Failure(ErrorCode::kInvalidArgument,
                   std::string(what) + " must be at least 1, not " + std::to_string(*value) + ".");
  }
  return Status::Ok();
}

struct Digest {
  TokenHash hash;
  std::span<const unsigned char> lookup() const { return {hash.data(), kLookupBytes}; }
};

}  // namespace

// One connection and its prepared statements, used under `mutex`.
struct CallerStore::Connection {
  explicit Connection(sqlite::Database database) : db(std::move(database)) {}

  std::mutex mutex;
  sqlite::Database db;
  std::optional<sqlite::Statement> select_by_lookup;
  std::optional<sqlite::Statement> select_by_name;
  std::optional<sqlite::Statement> select_all;
  std::optional<sqlite::Statement> insert;
  std::optional<sqlite::Statement> rotate;
  std::optional<sqlite::Statement> revoke;
  std::optional<sqlite::Statement> count_active;

  Status PrepareAll() {
    std::pair<std::optional<sqlite::Statement>*, std::string_view> all[] = {
        {&select_by_lookup, kSelectByLookup},
        {&select_by_name, kSelectByName},
        {&select_all, kSelectAll},
        {&insert, kInsert},
        {&rotate, kRotate},
        {&revoke, kRevoke},
        {&count_active, kCountActive}};
    for (auto& [slot, sql] : all) {
      auto statement = sqlite::Statement::Prepare(db, sql);
      if (!statement.ok()) return statement.error();
      slot->emplace(std::move(*statement));
    }
    return Status::Ok();
  }

  // Precondition: `mutex` held.
  Expected<Caller> GetLocked(std::string_view name) {
    sqlite::Statement& select = *select_by_name;
    sqlite::ResetOnExit reset(select);
    select.BindText(1, name);
    auto row = select.Step("Reading a caller");
    if (!row.ok()) return row.error();
    if (!*row) return UnknownCaller(name);
    return ReadCaller(select);
  }

  // Runs a write statement to completion. Precondition: `mutex` held.
  Status Write(sqlite::Statement& statement, std::string_view what) {
    sqlite::ResetOnExit reset(statement);
    auto row = statement.Step(what);
    if (!row.ok()) return row.error();
    return Status::Ok();
  }
};

Status ValidateCallerName(std::string_view name) {
  auto allowed = [](char c, bool first) {
    bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    return alnum || (!first && (c == '.' || c == '_' || c == '-'));
  };
  bool valid = !name.empty() && name.size() <= 64;
  for (std::size_t i = 0; valid && i < name.size(); ++i) valid = allowed(name[i], i == 0);
  if (valid) return Status::Ok();
  return Failure(ErrorCode::kInvalidArgument,
                 "The caller name \"" + std::string(name.substr(0, 80)) +
                     "\" is not valid: use 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or "
                     "digit.");
}

Expected<std::unique_ptr<CallerStore>> CallerStore::Open(const std::filesystem::path& path,
                                                         StoreOptions options) {
  PLIMSOLL_RETURN_IF_ERROR(
      PrepareStoreFile(path, options.create_if_missing, options.create_parent));
  auto database = sqlite::Database::Open(path.string(), SQLITE_OPEN_READWRITE);
  if (!database.ok()) return database.error();
  auto connection = std::make_unique<Connection>(std::move(*database));
  sqlite::Database& db = connection->db;
  sqlite3_busy_timeout(db.get(), static_cast<int>(options.busy_timeout.count()));
  // The header check comes before any pragma that writes, so that a file
  // that is not ours is refused untouched.
  PLIMSOLL_RETURN_IF_ERROR(MigrateStoreSchema(db, path.string()));
  auto journal = sqlite::Statement::Prepare(db, "PRAGMA journal_mode = WAL");
  if (!journal.ok()) return journal.error();
  auto mode = journal->Step("Switching the caller store to WAL");
  if (!mode.ok()) return mode.error();
  if (!*mode || journal->ColumnText(0) != "wal") {
    return Failure(ErrorCode::kFailedPrecondition,
                   "The caller store \"" + path.string() +
                       "\" cannot use write-ahead logging (is it on a network file system?).");
  }
  journal->Reset();
  PLIMSOLL_RETURN_IF_ERROR(db.Execute("Configuring the caller store",
                                      "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON"));
  PLIMSOLL_RETURN_IF_ERROR(connection->PrepareAll());
  return std::unique_ptr<CallerStore>(
      new CallerStore(path, std::move(options), std::move(connection)));
}

CallerStore::CallerStore(std::filesystem::path path, StoreOptions options,
                         std::unique_ptr<Connection> connection)
    : path_(std::move(path)), options_(std::move(options)), connection_(std::move(connection)) {}

CallerStore::~CallerStore() = default;

int64_t CallerStore::Now() const {
  if (options_.now) return options_.now();
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Expected<IssuedToken> CallerStore::Create(const NewCaller& request) {
  PLIMSOLL_RETURN_IF_ERROR(ValidateCallerName(request.name));
  auto scopes = ParseScopes(request.scopes);
  if (!scopes.ok()) return scopes.error();
  PLIMSOLL_RETURN_IF_ERROR(ValidateLimit("--max-concurrent", request.max_concurrent));
  PLIMSOLL_RETURN_IF_ERROR(ValidateLimit("--rate-per-min", request.rate_per_min));
  auto token = GenerateToken();
  if (!token.ok()) return token.error();
  Digest digest{HashToken(*token)};

  Caller caller;
  caller.name = request.name;
  caller.scopes = std::move(*scopes);
  caller.max_concurrent = request.max_concurrent;
  caller.rate_per_min = request.rate_per_min;
  caller.created_at = Now();

  std::lock_guard lock(connection_->mutex);
  sqlite::Statement& insert = *connection_->insert;
  insert.BindText(1, caller.name);
  insert.BindText(2, JoinScopes(caller.scopes));
  insert.BindOptionalInt(3, caller.max_concurrent);
  insert.BindOptionalInt(4, caller.rate_per_min);
  insert.BindBlob(5, digest.lookup());
  insert.BindBlob(6, digest.hash);
  insert.BindInt(7, caller.created_at);
  Status written = connection_->Write(insert, "Adding the caller");
  if (!written.ok()) {
    if (connection_->db.LastErrorCode() == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return Failure(ErrorCode::kFailedPrecondition,
                     "A caller named \"" + caller.name +
                         "\" already exists (revoked callers keep their names); choose another "
                         "name, or rotate its token with \"plimsoll callers rotate " +
                         caller.name + "\".");
    }
    return written.error();
  }
  return IssuedToken{std::move(caller), std::move(*token)};
}

Expected<std::vector<Caller>> CallerStore::List() const {
  std::lock_guard lock(connection_->mutex);
  sqlite::Statement& select = *connection_->select_all;
  sqlite::ResetOnExit reset(select);
  std::vector<Caller> callers;
  while (true) {
    auto row = select.Step("Listing callers");
    if (!row.ok()) return row.error();
    if (!*row) break;
    callers.push_back(ReadCaller(select));
  }
  return callers;
}

Expected<Caller> CallerStore::Get(std::string_view name) const {
  std::lock_guard lock(connection_->mutex);
  return connection_->GetLocked(name);
}

Expected<IssuedToken> CallerStore::Rotate(std::string_view name) {
  auto token = GenerateToken();
  if (!token.ok()) return token.error();
  Digest digest{HashToken(*token)};

  std::lock_guard lock(connection_->mutex);
  sqlite::Transaction transaction(connection_->db);
  PLIMSOLL_RETURN_IF_ERROR(transaction.Begin());
  auto caller = connection_->GetLocked(name);
  if (!caller.ok()) return caller.error();
  if (caller->revoked()) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "The caller \"" + caller->name +
                       "\" is revoked; a revoked caller keeps no token. Create a new caller.");
  }
  sqlite::Statement& rotate = *connection_->rotate;
  rotate.BindText(1, name);
  rotate.BindBlob(2, digest.lookup());
  rotate.BindBlob(3, digest.hash);
  rotate.BindInt(4, Now());
  PLIMSOLL_RETURN_IF_ERROR(connection_->Write(rotate, "Rotating the caller's token"));
  caller = connection_->GetLocked(name);
  if (!caller.ok()) return caller.error();
  PLIMSOLL_RETURN_IF_ERROR(transaction.Commit());
  return IssuedToken{std::move(*caller), std::move(*token)};
}

Expected<Caller> CallerStore::Revoke(std::string_view name) {
  std::lock_guard lock(connection_->mutex);
  sqlite::Transaction transaction(connection_->db);
  PLIMSOLL_RETURN_IF_ERROR(transaction.Begin());
  auto caller = connection_->GetLocked(name);
  if (!caller.ok()) return caller.error();
  if (caller->revoked()) return caller;
  sqlite::Statement& revoke = *connection_->revoke;
  revoke.BindText(1, name);
  revoke.BindInt(2, Now());
  PLIMSOLL_RETURN_IF_ERROR(connection_->Write(revoke, "Revoking the caller"));
  caller = connection_->GetLocked(name);
  if (!caller.ok()) return caller.error();
  PLIMSOLL_RETURN_IF_ERROR(transaction.Commit());
  return caller;
}

Expected<int64_t> CallerStore::CountActive() const {
  std::lock_guard lock(connection_->mutex);
  sqlite::Statement& count = *connection_->count_active;
  sqlite::ResetOnExit reset(count);
  auto row = count.Step("Counting callers");
  if (!row.ok()) return row.error();
  return *row ? count.ColumnInt(0) : 0;
}

Expected<Caller> CallerStore::Authenticate(std::string_view bearer_token) const {
  // The shape check is not secret-dependent: it only spares a lookup.
  if (!IsWellFormedToken(bearer_token)) return NotAuthenticated();
  Digest digest{HashToken(bearer_token)};

  std::lock_guard lock(connection_->mutex);
  sqlite::Statement& select = *connection_->select_by_lookup;
  sqlite::ResetOnExit reset(select);
  select.BindBlob(1, digest.lookup());
  while (true) {
    auto row = select.Step("Looking up a caller token");
    if (!row.ok()) {
      return Refusal(NotDispatched::kPermission, ErrorCode::kInternal, row.error().message());
    }
    if (!*row) return NotAuthenticated();
    std::span<const unsigned char> stored = select.ColumnBlob(7);
    if (stored.size() != digest.hash.size()) continue;
    TokenHash stored_hash{};
    std::copy(stored.begin(), stored.end(), stored_hash.begin());
    if (!TokenHashesEqual(stored_hash, digest.hash)) continue;
    Caller caller = ReadCaller(select);
    if (caller.revoked()) return NotAuthenticated();
    return caller;
  }
}

}  // namespace plimsoll::auth
