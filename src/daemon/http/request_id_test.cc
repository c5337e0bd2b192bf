#include "daemon/http/request_id.h"

#include <gtest/gtest.h>

namespace plimsoll::daemon::http {
namespace {

TEST(RequestId, OnlyThirtyTwoLowercaseHexDigitsAreWellFormed) {
  EXPECT_TRUE(IsWellFormedRequestId("0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsWellFormedRequestId("0123456789ABCDEF0123456789abcdef"));
  EXPECT_FALSE(IsWellFormedRequestId("0123456789abcdef0123456789abcde"));
  EXPECT_FALSE(IsWellFormedRequestId("0123456789abcdef0123456789abcdef0"));
  EXPECT_FALSE(IsWellFormedRequestId(" 123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsWellFormedRequestId(""));
}

TEST(RequestId, EchoesExactlyOneWellFormedHeader) {
  boost::beast::http::fields headers;
  EXPECT_EQ(EchoableRequestId(headers), "");
  std::string id(32, 'a');
  headers.insert("Plimsoll-Request-Id", id);
  EXPECT_EQ(EchoableRequestId(headers), id);
  headers.insert("plimsoll-request-id", id);
  EXPECT_EQ(EchoableRequestId(headers), "");
  boost::beast::http::fields malformed;
  malformed.insert("Plimsoll-Request-Id", std::string(32, 'A'));
  EXPECT_EQ(EchoableRequestId(malformed), "");
}

}  // namespace
}  // namespace plimsoll::daemon::http
