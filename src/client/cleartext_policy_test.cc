#include "client/cleartext_policy.h"

#include <gtest/gtest.h>

namespace plimsoll::client {
namespace {

namespace ip = boost::asio::ip;

DaemonUrl Url(const char* text) {
  auto url = ParseDaemonUrl(text);
  EXPECT_TRUE(url.ok()) << text;
  return *url;
}

TEST(CleartextPolicyTest, LoopbackIsAllOf127Slash8AndV6Loopback) {
  EXPECT_TRUE(IsLoopbackAddress(ip::make_address("127.0.0.1")));
  EXPECT_TRUE(IsLoopbackAddress(ip::make_address("127.255.3.4")));
  EXPECT_TRUE(IsLoopbackAddress(ip::make_address("::1")));
  EXPECT_TRUE(IsLoopbackAddress(ip::make_address("::ffff:127.0.0.9")));
  EXPECT_FALSE(IsLoopbackAddress(ip::make_address("128.0.0.1")));
  EXPECT_FALSE(IsLoopbackAddress(ip::make_address("10.0.0.1")));
  EXPECT_FALSE(IsLoopbackAddress(ip::make_address("0.0.0.0")));
  EXPECT_FALSE(IsLoopbackAddress(ip::make_address("::")));
  EXPECT_FALSE(IsLoopbackAddress(ip::make_address("::ffff:192.0.2.1")));
  EXPECT_FALSE(IsLoopbackAddress(ip::make_address("fe80::1")));
}

TEST(CleartextPolicyTest, ANonLoopbackLiteralIsRefusedWithHowToAllowIt) {
  Status status = CheckCleartextLiteral(Url("http://192.0.2.1:8470"), false);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().not_dispatched(), NotDispatched::kRequest);
  EXPECT_NE(status.error().message().find("Refusing cleartext http:// to 192.0.2.1"),
            std::string::npos);
  EXPECT_NE(status.error().message().find("--allow-cleartext"), std::string::npos);
  EXPECT_NE(status.error().message().find("Use https://"), std::string::npos);

  EXPECT_TRUE(CheckCleartextLiteral(Url("http://192.0.2.1:8470"), true).ok());
  EXPECT_TRUE(CheckCleartextLiteral(Url("http://127.0.0.1:8470"), false).ok());
  EXPECT_TRUE(CheckCleartextLiteral(Url("http://[::1]:8470"), false).ok());
  EXPECT_TRUE(CheckCleartextLiteral(Url("https://192.0.2.1:8470"), false).ok());
  EXPECT_TRUE(CheckCleartextLiteral(Url("unix:/run/p.sock"), false).ok());
  // Names are judged by what they resolve to.
  EXPECT_TRUE(CheckCleartextLiteral(Url("http://example.test:1"), false).ok());
}

TEST(CleartextPolicyTest, ANameMustResolveOnlyToLoopback) {
  DaemonUrl url = Url("http://localhost:8470");
  EXPECT_TRUE(
      CheckCleartextResolved(url, {ip::make_address("127.0.0.1"), ip::make_address("::1")}, false)
          .ok());
  Status mixed = CheckCleartextResolved(
      url, {ip::make_address("127.0.0.1"), ip::make_address("192.0.2.7")}, false);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().message().find("localhost (192.0.2.7)"), std::string::npos)
      << mixed.error().message();
  EXPECT_TRUE(CheckCleartextResolved(url, {ip::make_address("192.0.2.7")}, true).ok());
  EXPECT_TRUE(
      CheckCleartextResolved(Url("https://h:1"), {ip::make_address("192.0.2.7")}, false).ok());
}

}  // namespace
}  // namespace plimsoll::client
