#include "daemon/http/router.h"

#include <gtest/gtest.h>

#include <sstream>

#include "daemon/http/errors_to_http.h"

namespace plimsoll::daemon::http {
namespace {

TEST(PathSegments, DropsTheQueryAndSplitsOnSlashes) {
  EXPECT_EQ(PathSegments("/v1/sessions/ab/runs?x=1"),
            (std::vector<std::string_view>{"v1", "sessions", "ab", "runs"}));
  EXPECT_EQ(PathSegments("/"), (std::vector<std::string_view>{""}));
  EXPECT_EQ(PathSegments("/v1//runs"), (std::vector<std::string_view>{"v1", "", "runs"}));
}

TEST(IsJsonContentType, AcceptsJsonInUtf8Only) {
  EXPECT_TRUE(IsJsonContentType("application/json"));
  EXPECT_TRUE(IsJsonContentType("Application/JSON; charset=UTF-8"));
  EXPECT_TRUE(IsJsonContentType("application/json;charset=\"utf-8\""));
  EXPECT_FALSE(IsJsonContentType("application/json; charset=latin1"));
  EXPECT_FALSE(IsJsonContentType("text/json"));
  EXPECT_FALSE(IsJsonContentType("application/jsonx"));
  EXPECT_FALSE(IsJsonContentType(""));
}

TEST(HttpStatusFor, EveryCodeHasItsStatus) {
  EXPECT_EQ(HttpStatusFor(ErrorCode::kInvalidArgument), HttpStatus::bad_request);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUnauthenticated), HttpStatus::unauthorized);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kPermissionDenied), HttpStatus::forbidden);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kNotFound), HttpStatus::not_found);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kFailedPrecondition), HttpStatus::conflict);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kResourceExhausted), HttpStatus::too_many_requests);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUnimplemented), HttpStatus::not_implemented);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kDeadlineExceeded), HttpStatus::gateway_timeout);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kInternal), HttpStatus::internal_server_error);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kDataLoss), HttpStatus::bad_gateway);
}

class RefuseEveryone final : public Authenticator {
 public:
  Expected<Caller> Authenticate(std::optional<std::string_view> authorization) override {
    seen = authorization ? std::string(*authorization) : "<none>";
    return Refusal(NotDispatched::kPermission, ErrorCode::kUnauthenticated, "no");
  }
  std::string seen;
};

boost::asio::awaitable<Answer> Nothing(RequestContext&) {
  co_return Answer{};
}

TEST(Router, AuthenticatesBeforeCheckingTheContentType) {
  std::ostringstream sink;
  Log log(sink);
  RefuseEveryone authenticator;
  Router router(&authenticator, log);
  router.Add({Verb::post,
              "/v1/runs",
              {.authenticate = true, .scope = "runs", .json_body = true},
              Nothing});
  RequestHeader header;
  header.method(Verb::post);
  header.target("/v1/runs");
  header.set(boost::beast::http::field::authorization, "Bearer abc");
  auto admitted = router.Admit(header, "");
  ASSERT_TRUE(std::holds_alternative<Answer>(admitted));
  EXPECT_EQ(std::get<Answer>(admitted).status, HttpStatus::unauthorized);
  EXPECT_EQ(authenticator.seen, "Bearer abc");

  header.insert(boost::beast::http::field::authorization, "Bearer def");
  auto twice = router.Admit(header, "");
  ASSERT_TRUE(std::holds_alternative<Answer>(twice));
  EXPECT_EQ(std::get<Answer>(twice).not_dispatched, NotDispatched::kPermission);
}

TEST(Router, MatchesPathParameters) {
  std::ostringstream sink;
  Log log(sink);
  Router router(nullptr, log);
  router.Add({Verb::delete_,
              "/v1/sessions/{id}",
              {.authenticate = false, .scope = {}, .json_body = false},
              Nothing});
  RequestHeader header;
  header.method(Verb::delete_);
  header.target("/v1/sessions/s-123");
  auto admitted = router.Admit(header, "");
  ASSERT_TRUE(std::holds_alternative<Admitted>(admitted));
  EXPECT_EQ(std::get<Admitted>(admitted).path_params, std::vector<std::string>{"s-123"});
  header.target("/v1/sessions/");
  EXPECT_TRUE(std::holds_alternative<Answer>(router.Admit(header, "")));
}

}  // namespace
}  // namespace plimsoll::daemon::http
