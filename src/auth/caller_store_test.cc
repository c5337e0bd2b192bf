#include "auth/caller_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "auth/scope.h"
#include "auth/token.h"

namespace plimsoll::auth {
namespace {

namespace fs = std::filesystem;

class CallerStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "plimsoll-callers-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ / "callers.db";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<CallerStore> OpenNew() {
    StoreOptions options;
    options.create_if_missing = true;
    options.now = [this] { return now_.load(); };
    auto store = CallerStore::Open(path_, options);
    EXPECT_TRUE(store.ok()) << store.error().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Runs SQL on the file behind the store's back (as another tool would).
  void RawSql(const std::string& sql, const fs::path& path) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* message = nullptr;
    int code = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
    EXPECT_EQ(code, SQLITE_OK) << (message ? message : "");
    sqlite3_free(message);
    sqlite3_close(db);
  }

  std::string ReadAll(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  fs::path dir_;
  fs::path path_;
  std::atomic<int64_t> now_{1'800'000'000};
};

void ExpectUnauthenticated(const Expected<Caller>& caller) {
  ASSERT_FALSE(caller.ok());
  EXPECT_EQ(caller.error().code(), ErrorCode::kUnauthenticated) << caller.error().ToString();
  EXPECT_EQ(NotDispatchedReason(caller.error()), NotDispatched::kPermission);
}

TEST_F(CallerStoreTest, CreateListRotateRevoke) {
  auto store = OpenNew();
  ASSERT_NE(store, nullptr);
  auto ci = store->Create(
      {.name = "ci", .scopes = {"runs,describe"}, .max_concurrent = 2, .rate_per_min = 60});
  ASSERT_TRUE(ci.ok()) << ci.error().ToString();
  EXPECT_TRUE(IsWellFormedToken(ci->token));
  EXPECT_EQ(ci->caller.scopes, (std::vector<std::string>{"describe", "runs"}));
  EXPECT_EQ(ci->caller.created_at, 1'800'000'000);
  auto bot = store->Create({.name = "bot", .scopes = {"runs"}});
  ASSERT_TRUE(bot.ok());

  auto who = store->Authenticate(ci->token);
  ASSERT_TRUE(who.ok()) << who.error().ToString();
  EXPECT_EQ(*who, ci->caller);
  EXPECT_EQ(who->max_concurrent, 2);
  EXPECT_EQ(who->rate_per_min, 60);
  EXPECT_TRUE(Authorize(*who, kScopeRuns).ok());

  auto list = store->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "bot");
  EXPECT_EQ((*list)[1].name, "ci");
  EXPECT_EQ(*store->CountActive(), 2);

  now_ = 1'800'000'100;
  auto rotated = store->Rotate("ci");
  ASSERT_TRUE(rotated.ok()) << rotated.error().ToString();
  EXPECT_NE(rotated->token, ci->token);
  EXPECT_EQ(rotated->caller.rotated_at, 1'800'000'100);
  ExpectUnauthenticated(store->Authenticate(ci->token));
  EXPECT_TRUE(store->Authenticate(rotated->token).ok());
  EXPECT_TRUE(store->Authenticate(bot->token).ok());

  now_ = 1'800'000'200;
  auto revoked = store->Revoke("ci");
  ASSERT_TRUE(revoked.ok());
  EXPECT_EQ(revoked->revoked_at, 1'800'000'200);
  ExpectUnauthenticated(store->Authenticate(rotated->token));
  EXPECT_TRUE(store->Authenticate(bot->token).ok());
  EXPECT_EQ(*store->CountActive(), 1);

  now_ = 1'800'000'300;
  auto again = store->Revoke("ci");  // idempotent: keeps the first stamp
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->revoked_at, 1'800'000'200);

  auto rotate_revoked = store->Rotate("ci");
  ASSERT_FALSE(rotate_revoked.ok());
  EXPECT_EQ(rotate_revoked.error().code(), ErrorCode::kFailedPrecondition);
  auto reuse = store->Create({.name = "ci", .scopes = {"runs"}});
  ASSERT_FALSE(reuse.ok());
  EXPECT_NE(reuse.error().message().find("already exists"), std::string::npos);
}

TEST_F(CallerStoreTest, RefusesBadNamesScopesLimitsAndUnknownCallers) {
  auto store = OpenNew();
  ASSERT_NE(store, nullptr);
  for (std::string name : {std::string(), std::string("-x"), std::string("a b"), std::string("x/y"),
                           std::string(65, 'a'), std::string("caf\xc3\xa9")}) {
    auto created = store->Create({.name = name, .scopes = {"runs"}});
    ASSERT_FALSE(created.ok()) << name;
    EXPECT_EQ(created.error().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(store->Create({.name = std::string(64, 'a'), .scopes = {}}).ok());
  EXPECT_FALSE(store->Create({.name = "x", .scopes = {"root"}}).ok());
  EXPECT_FALSE(store->Create({.name = "x", .scopes = {"runs"}, .max_concurrent = 0}).ok());
  EXPECT_FALSE(store->Create({.name = "x", .scopes = {"runs"}, .rate_per_min = -1}).ok());
  for (auto result :
       {store->Rotate("nobody").ok(), store->Revoke("nobody").ok(), store->Get("nobody").ok()}) {
    EXPECT_FALSE(result);
  }
  EXPECT_EQ(store->Get("nobody").error().code(), ErrorCode::kNotFound);
}

TEST_F(CallerStoreTest, UnknownMalformedAndMissingTokensAreRefusedAlike) {
  auto store = OpenNew();
  ASSERT_NE(store, nullptr);
  auto unknown = GenerateToken();
  ASSERT_TRUE(unknown.ok());
  for (std::string token :
       {*unknown, std::string(""), std::string("plm_short"), std::string("Bearer ") + *unknown}) {
    auto caller = store->Authenticate(token);
    ExpectUnauthenticated(caller);
    if (!token.empty()) {
      EXPECT_EQ(caller.error().message().find(token), std::string::npos) << "token echoed";
    }
  }
}

TEST_F(CallerStoreTest, OnlyTheDigestOfATokenIsStored) {
  std::string token;
  {
    auto store = OpenNew();
    ASSERT_NE(store, nullptr);
    auto issued = store->Create({.name = "ci", .scopes = {"runs"}});
    ASSERT_TRUE(issued.ok());
    token = issued->token;
  }
  // The raw random bytes, decoded from the token's base64url body.
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string raw;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : token.substr(4)) {
    buffer = (buffer << 6) | static_cast<unsigned>(alphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      raw += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  ASSERT_EQ(raw.size(), 32u);
  TokenHash digest = HashToken(token);
  std::string digest_bytes(digest.begin(), digest.end());

  std::string everything;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    fs::path file = path_.string() + suffix;
    if (fs::exists(file)) everything += ReadAll(file);
  }
  EXPECT_EQ(everything.find(token), std::string::npos);
  EXPECT_EQ(everything.find(token.substr(4)), std::string::npos);
  EXPECT_EQ(everything.find(raw), std::string::npos);
  EXPECT_NE(everything.find(digest_bytes), std::string::npos) << "the digest should be stored";
}

// Rows are found by the first 8 bytes of the digest; the constant-time
// comparison of the whole digest is what decides.
TEST_F(CallerStoreTest, TheWholeDigestDecidesNotTheLookupKey) {
  auto store = OpenNew();
  ASSERT_NE(store, nullptr);
  auto issued = store->Create({.name = "ci", .scopes = {"runs"}});
  ASSERT_TRUE(issued.ok());
  ASSERT_TRUE(store->Authenticate(issued->token).ok());
  // Flip the last byte of the stored digest, keeping the lookup key.
  TokenHash altered = HashToken(issued->token);
  altered.back() ^= 0x01;
  std::string hex;
  for (unsigned char byte : altered) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", byte);
    hex += two;
  }
  RawSql("UPDATE callers SET token_hash = X'" + hex + "' WHERE name = 'ci'", path_);
  ExpectUnauthenticated(store->Authenticate(issued->token));
}

TEST_F(CallerStoreTest, ASecondHandleSeesRotationAndRevocationAtOnce) {
  auto daemon = OpenNew();
  ASSERT_NE(daemon, nullptr);
  auto operator_tool = CallerStore::Open(path_);  // like `plimsoll callers` in another process
  ASSERT_TRUE(operator_tool.ok()) << operator_tool.error().ToString();

  auto issued = (*operator_tool)->Create({.name = "ci", .scopes = {"runs"}});
  ASSERT_TRUE(issued.ok());
  ASSERT_TRUE(daemon->Authenticate(issued->token).ok());

  auto rotated = (*operator_tool)->Rotate("ci");
  ASSERT_TRUE(rotated.ok());
  ExpectUnauthenticated(daemon->Authenticate(issued->token));
  ASSERT_TRUE(daemon->Authenticate(rotated->token).ok());

  ASSERT_TRUE((*operator_tool)->Revoke("ci").ok());
  ExpectUnauthenticated(daemon->Authenticate(rotated->token));
}

TEST_F(CallerStoreTest, EightThreadsAuthenticateWhileAnotherHandleRotates) {
  auto daemon = OpenNew();
  ASSERT_NE(daemon, nullptr);
  auto operator_tool = CallerStore::Open(path_);
  ASSERT_TRUE(operator_tool.ok());
  auto stable = daemon->Create({.name = "stable", .scopes = {"runs"}});
  auto moving = daemon->Create({.name = "moving", .scopes = {"runs"}});
  ASSERT_TRUE(stable.ok() && moving.ok());

  std::mutex tokens_mutex;
  std::vector<std::string> retired;  // tokens replaced by a committed rotation
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<int64_t> checks{0};

  std::vector<std::thread> readers;
  for (int t = 0; t < 8; ++t) {
    readers.emplace_back([&] {
      while (!done.load()) {
        auto caller = daemon->Authenticate(stable->token);
        if (!caller.ok() || caller->name != "stable") ++failures;
        std::vector<std::string> snapshot;
        {
          std::lock_guard lock(tokens_mutex);
          snapshot.assign(retired.end() - std::min<std::size_t>(retired.size(), 3), retired.end());
        }
        for (const std::string& old : snapshot) {
          auto refused = daemon->Authenticate(old);
          if (refused.ok() || refused.error().code() != ErrorCode::kUnauthenticated) ++failures;
        }
        ++checks;
      }
    });
  }
  while (checks.load() < 8) std::this_thread::yield();  // readers are running
  std::string current = moving->token;
  for (int i = 0; i < 50; ++i) {
    auto rotated = (*operator_tool)->Rotate("moving");
    ASSERT_TRUE(rotated.ok()) << rotated.error().ToString();
    {
      std::lock_guard lock(tokens_mutex);
      retired.push_back(current);
    }
    current = rotated->token;
  }
  while (checks.load() < 200) std::this_thread::yield();
  done = true;
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(daemon->Authenticate(current).ok());
  for (const std::string& old : retired) ExpectUnauthenticated(daemon->Authenticate(old));
}

TEST_F(CallerStoreTest, FilesAreCreatedPrivate) {
  auto store = OpenNew();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create({.name = "ci", .scopes = {"runs"}}).ok());
  for (const char* suffix : {"", "-wal", "-shm"}) {
    fs::path file = path_.string() + suffix;
    if (!fs::exists(file)) continue;
    struct stat info {};
    ASSERT_EQ(::stat(file.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 077, 0u) << file;
  }
}

TEST_F(CallerStoreTest, ReopeningKeepsCallersAndTheSchema) {
  std::string token;
  {
    auto store = OpenNew();
    ASSERT_NE(store, nullptr);
    token = store->Create({.name = "ci", .scopes = {"runs"}})->token;
  }
  auto store = CallerStore::Open(path_);
  ASSERT_TRUE(store.ok()) << store.error().ToString();
  EXPECT_TRUE((*store)->Authenticate(token).ok());
}

TEST_F(CallerStoreTest, AMissingStoreIsNotFoundForTheDaemon) {
  auto store = CallerStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code(), ErrorCode::kNotFound);
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(CallerStoreTest, AFileThatIsNotADatabaseIsRefusedUntouched) {
  std::ofstream(path_) << "this is not sqlite, just some text long enough to have a header....\n";
  ::chmod(path_.c_str(), 0600);
  std::string before = ReadAll(path_);
  auto store = CallerStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message().find("not a database"), std::string::npos)
      << store.error().message();
  EXPECT_EQ(ReadAll(path_), before);
}

TEST_F(CallerStoreTest, AnotherApplicationsDatabaseIsRefused) {
  RawSql("CREATE TABLE notes (text TEXT)", path_);
  ::chmod(path_.c_str(), 0600);
  auto store = CallerStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message().find("not a plimsoll caller store"), std::string::npos)
      << store.error().message();
}

TEST_F(CallerStoreTest, ANewerSchemaIsRefused) {
  ASSERT_NE(OpenNew(), nullptr);
  RawSql("PRAGMA user_version = 99", path_);
  auto store = CallerStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message().find("newer plimsoll"), std::string::npos)
      << store.error().message();
}

}  // namespace
}  // namespace plimsoll::auth
