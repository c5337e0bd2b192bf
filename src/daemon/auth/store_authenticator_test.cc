#include "daemon/auth/store_authenticator.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "auth/scope.h"

namespace plimsoll::auth {
namespace {

namespace fs = std::filesystem;

class StoreAuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "plimsoll-store-auth-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ / "callers.db";
    StoreOptions options;
    options.create_if_missing = true;
    auto store = CallerStore::Open(path_, options);
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    operator_tool_ = std::move(*store);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  fs::path path_;
  std::unique_ptr<CallerStore> operator_tool_;
};

void ExpectUnauthenticated(const Expected<Caller>& caller) {
  ASSERT_FALSE(caller.ok());
  EXPECT_EQ(caller.error().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(NotDispatchedReason(caller.error()), NotDispatched::kPermission);
}

TEST_F(StoreAuthenticatorTest, AuthenticatesBearerHeadersAndRefusesTheRest) {
  auto ci = operator_tool_->Create(
      {.name = "ci", .scopes = {"runs", "grants:github"}, .max_concurrent = 3});
  auto root = operator_tool_->Create({.name = "root", .scopes = {"admin"}});
  ASSERT_TRUE(ci.ok() && root.ok());
  auto authenticator = OpenStoreAuthenticator(path_);
  ASSERT_TRUE(authenticator.ok()) << authenticator.error().ToString();

  auto caller = (*authenticator)->Authenticate("Bearer " + ci->token);
  ASSERT_TRUE(caller.ok()) << caller.error().ToString();
  EXPECT_EQ(caller->name, "ci");
  EXPECT_TRUE(HasScope(*caller, kScopeRuns));
  EXPECT_TRUE(HasScope(*caller, GrantScope("github")));
  EXPECT_FALSE(HasScope(*caller, kScopeSessions));
  EXPECT_EQ(caller->max_concurrent, 3);
  EXPECT_FALSE(caller->rate_per_min.has_value());

  auto admin = (*authenticator)->Authenticate("bearer " + root->token);
  ASSERT_TRUE(admin.ok());
  EXPECT_TRUE(HasScope(*admin, kScopeSessions));

  ExpectUnauthenticated((*authenticator)->Authenticate(std::nullopt));
  ExpectUnauthenticated((*authenticator)->Authenticate(""));
  ExpectUnauthenticated((*authenticator)->Authenticate(ci->token));  // no scheme
  ExpectUnauthenticated((*authenticator)->Authenticate("Basic " + ci->token));

  ASSERT_TRUE(operator_tool_->Revoke("ci").ok());
  ExpectUnauthenticated((*authenticator)->Authenticate("Bearer " + ci->token));
}

TEST_F(StoreAuthenticatorTest, TheDaemonNeverCreatesAStore) {
  auto missing = OpenStoreAuthenticator(dir_ / "other.db");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace plimsoll::auth
