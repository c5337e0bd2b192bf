#include "auth/scope.h"

#include <gtest/gtest.h>

namespace plimsoll::auth {
namespace {

TEST(ScopeTest, ParsesTheKnownScopes) {
  for (std::string_view scope :
       {"runs", "describe", "sessions", "admin", "grants:github", "grants:*", "grants:a.b_c-1"}) {
    auto parsed = ParseScope(scope);
    ASSERT_TRUE(parsed.ok()) << scope;
    EXPECT_EQ(*parsed, scope);
  }
}

TEST(ScopeTest, RefusesUnknownScopesAndBadProfiles) {
  for (std::string_view scope :
       {"", "RUNS", "run", "execute", "grants:", "grants:a b", "grants:**", "grants:x/y"}) {
    auto parsed = ParseScope(scope);
    ASSERT_FALSE(parsed.ok()) << scope;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_NE(ParseScope("execute").error().message().find("valid scopes are: runs"),
            std::string::npos);
}

TEST(ScopeTest, ParseScopesSplitsCommasSortsAndDeduplicates) {
  auto scopes = ParseScopes({"runs,describe", " runs , grants:x", "describe"});
  ASSERT_TRUE(scopes.ok());
  EXPECT_EQ(*scopes, (std::vector<std::string>{"describe", "grants:x", "runs"}));
  EXPECT_FALSE(ParseScopes({"runs,bogus"}).ok());
}

TEST(ScopeTest, AuthorizeChecksDirectWildcardAndAdminScopes) {
  Caller caller{.name = "ci", .scopes = {"grants:github", "runs"}};
  EXPECT_TRUE(Authorize(caller, kScopeRuns).ok());
  EXPECT_TRUE(Authorize(caller, GrantScope("github")).ok());
  Status denied = Authorize(caller, GrantScope("stripe"));
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(NotDispatchedReason(denied.error()), NotDispatched::kPermission);
  EXPECT_NE(denied.error().message().find("\"grants:stripe\""), std::string::npos);
  EXPECT_FALSE(Authorize(caller, kScopeSessions).ok());

  Caller any_grant{.name = "g", .scopes = {"grants:*"}};
  EXPECT_TRUE(Authorize(any_grant, GrantScope("stripe")).ok());
  EXPECT_FALSE(Authorize(any_grant, kScopeRuns).ok());

  Caller admin{.name = "root", .scopes = {"admin"}};
  for (std::string_view scope : {kScopeRuns, kScopeDescribe, kScopeSessions}) {
    EXPECT_TRUE(Authorize(admin, scope).ok()) << scope;
  }
  EXPECT_TRUE(Authorize(admin, GrantScope("anything")).ok());

  Caller nothing{.name = "n", .scopes = {}};
  EXPECT_FALSE(Authorize(nothing, kScopeDescribe).ok());
}

}  // namespace
}  // namespace plimsoll::auth
