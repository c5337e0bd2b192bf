#include "cli/callers_command.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.h"
#include "cli/exit_status.h"
#include "auth/caller_store.h"

namespace plimsoll::cli {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int status;
  std::string out;
  std::string err;
};

class CallersCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "plimsoll-callers-cli-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    store_ = (dir_ / "callers.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  Outcome Invoke(std::vector<std::string> args) {
    args.insert(args.begin(), "plimsoll");
    std::ostringstream out;
    std::ostringstream err;
    int status = Main(args, out, err);
    return {status, out.str(), err.str()};
  }

  Expected<auth::Caller> Authenticate(const std::string& token) {
    auto store = auth::CallerStore::Open(store_);
    if (!store.ok()) return store.error();
    return (*store)->Authenticate(token);
  }

  static std::string Line(const std::string& text) { return text.substr(0, text.find('\n')); }

  fs::path dir_;
  std::string store_;
};

TEST_F(CallersCommandTest, CreateListRotateRevokeEndToEnd) {
  Outcome created =
      Invoke({"callers", "create", "ci", "--scope", "runs", "--scope", "describe,grants:github",
              "--max-concurrent", "2", "--rate-per-min", "30", "--store", store_});
  ASSERT_EQ(created.status, kExitRanOk) << created.err;
  std::string token = Line(created.out);
  EXPECT_EQ(created.out, token + "\n");  // stdout holds the token alone
  EXPECT_TRUE(token.starts_with("plm_"));
  EXPECT_NE(created.err.find("shown only this once"), std::string::npos) << created.err;
  EXPECT_EQ(created.err.find(token), std::string::npos);
  struct stat info {};
  ASSERT_EQ(::stat(store_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);

  auto caller = Authenticate(token);
  ASSERT_TRUE(caller.ok()) << caller.error().ToString();
  EXPECT_EQ(caller->scopes, (std::vector<std::string>{"describe", "grants:github", "runs"}));
  EXPECT_EQ(caller->max_concurrent, 2);
  EXPECT_EQ(caller->rate_per_min, 30);

  Outcome scope_first =
      Invoke({"callers", "create", "--scope", "sessions", "late", "--store", store_});
  ASSERT_EQ(scope_first.status, kExitRanOk) << scope_first.err;
  auto late = Authenticate(Line(scope_first.out));
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->scopes, (std::vector<std::string>{"sessions"}));

  Outcome defaults = Invoke({"callers", "create", "bot", "--store", store_});
  ASSERT_EQ(defaults.status, kExitRanOk) << defaults.err;
  auto bot = Authenticate(Line(defaults.out));
  ASSERT_TRUE(bot.ok());
  EXPECT_EQ(bot->scopes, (std::vector<std::string>{"describe", "runs"}));
  EXPECT_FALSE(bot->max_concurrent.has_value());

  Outcome listed = Invoke({"callers", "list", "--store", store_});
  ASSERT_EQ(listed.status, kExitRanOk) << listed.err;
  EXPECT_NE(listed.out.find("NAME"), std::string::npos);
  EXPECT_NE(listed.out.find("ci "), std::string::npos);
  EXPECT_NE(listed.out.find("describe,grants:github,runs"), std::string::npos) << listed.out;
  EXPECT_EQ(listed.out.find("plm_"), std::string::npos);

  Outcome rotated = Invoke({"callers", "rotate", "ci", "--store", store_});
  ASSERT_EQ(rotated.status, kExitRanOk) << rotated.err;
  std::string new_token = Line(rotated.out);
  EXPECT_NE(new_token, token);
  EXPECT_FALSE(Authenticate(token).ok());
  EXPECT_TRUE(Authenticate(new_token).ok());

  Outcome revoked = Invoke({"callers", "revoke", "ci", "--store", store_});
  ASSERT_EQ(revoked.status, kExitRanOk) << revoked.err;
  EXPECT_NE(revoked.out.find("Revoked caller \"ci\""), std::string::npos);
  EXPECT_FALSE(Authenticate(new_token).ok());
  Outcome again = Invoke({"callers", "revoke", "ci", "--store", store_});
  EXPECT_EQ(again.status, kExitRanOk);
  EXPECT_NE(again.out.find("already revoked"), std::string::npos);

  Outcome json = Invoke({"callers", "list", "--json", "--store", store_});
  ASSERT_EQ(json.status, kExitRanOk) << json.err;
  auto parsed = nlohmann::json::parse(json.out);
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[0]["name"], "bot");
  EXPECT_EQ(parsed[0]["max_concurrent"], nullptr);
  EXPECT_EQ(parsed[0]["revoked_at"], nullptr);
  EXPECT_EQ(parsed[1]["name"], "ci");
  EXPECT_EQ(parsed[1]["revoked"], true);
  EXPECT_EQ(parsed[1]["rate_per_min"], 30);
  EXPECT_TRUE(parsed[1]["rotated_at"].is_string());
  EXPECT_EQ(parsed[2]["name"], "late");
  EXPECT_EQ(json.out.find("plm_"), std::string::npos);
  EXPECT_EQ(json.out.find("hash"), std::string::npos);
}

TEST_F(CallersCommandTest, ErrorsAreClear) {
  Outcome missing = Invoke({"callers", "list", "--store", store_});
  EXPECT_EQ(missing.status, kExitRanFailed);
  EXPECT_NE(missing.err.find("There is no caller store at"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(store_));  // list never creates a store

  Outcome bad_scope = Invoke({"callers", "create", "ci", "--scope", "root", "--store", store_});
  EXPECT_EQ(bad_scope.status, kExitUsage);
  EXPECT_NE(bad_scope.err.find("Unknown scope \"root\""), std::string::npos) << bad_scope.err;
  EXPECT_FALSE(fs::exists(store_));  // nothing created for a refused command

  Outcome bad_name = Invoke({"callers", "create", "no spaces", "--store", store_});
  EXPECT_EQ(bad_name.status, kExitUsage);
  Outcome bad_limit =
      Invoke({"callers", "create", "ci", "--max-concurrent", "0", "--store", store_});
  EXPECT_EQ(bad_limit.status, kExitUsage);
  EXPECT_NE(bad_limit.err.find("--max-concurrent must be at least 1"), std::string::npos)
      << bad_limit.err;

  ASSERT_EQ(Invoke({"callers", "create", "ci", "--store", store_}).status, kExitRanOk);
  Outcome duplicate = Invoke({"callers", "create", "ci", "--store", store_});
  EXPECT_EQ(duplicate.status, kExitRanFailed);
  EXPECT_NE(duplicate.err.find("already exists"), std::string::npos);
  Outcome unknown = Invoke({"callers", "rotate", "nobody", "--store", store_});
  EXPECT_EQ(unknown.status, kExitRanFailed);
  EXPECT_NE(unknown.err.find("no caller named \"nobody\""), std::string::npos) << unknown.err;
  EXPECT_EQ(unknown.out, "");

  Outcome directory = Invoke({"callers", "list", "--store", dir_.string()});
  EXPECT_EQ(directory.status, kExitRanFailed);
  EXPECT_NE(directory.err.find("is a directory"), std::string::npos);

  Outcome no_parent =
      Invoke({"callers", "create", "ci", "--store", (dir_ / "nope" / "callers.db").string()});
  EXPECT_EQ(no_parent.status, kExitRanFailed);
  EXPECT_NE(no_parent.err.find("does not exist"), std::string::npos) << no_parent.err;

  Outcome no_subcommand = Invoke({"callers"});
  EXPECT_EQ(no_subcommand.status, kExitUsage);
}

TEST_F(CallersCommandTest, TheDefaultStoreComesFromTheEnvironment) {
  setenv("PLIMSOLL_CALLERS", store_.c_str(), 1);
  Outcome created = Invoke({"callers", "create", "ci"});
  unsetenv("PLIMSOLL_CALLERS");
  ASSERT_EQ(created.status, kExitRanOk) << created.err;
  EXPECT_TRUE(Authenticate(Line(created.out)).ok());
}

}  // namespace
}  // namespace plimsoll::cli
