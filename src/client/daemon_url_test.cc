#include "client/daemon_url.h"

#include <gtest/gtest.h>

namespace plimsoll::client {
namespace {

TEST(DaemonUrlTest, ReadsHttpWithHostPortAndPrefix) {
  auto url = ParseDaemonUrl("http://127.0.0.1:8470");
  ASSERT_TRUE(url.ok()) << url.error().ToString();
  EXPECT_EQ(url->transport, Transport::kHttp);
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, 8470);
  EXPECT_EQ(url->Target("/v1/runs"), "/v1/runs");
  EXPECT_EQ(url->HostHeader(), "127.0.0.1:8470");
  EXPECT_TRUE(url->HostIsIpLiteral());

  url = ParseDaemonUrl("HTTPS://Sandbox.Example:9000/plimsoll/");
  ASSERT_TRUE(url.ok()) << url.error().ToString();
  EXPECT_EQ(url->transport, Transport::kHttps);
  EXPECT_EQ(url->host, "sandbox.example");
  EXPECT_EQ(url->Target("/v1/runs"), "/plimsoll/v1/runs");
  EXPECT_EQ(url->ToString(), "https://sandbox.example:9000/plimsoll");
  EXPECT_FALSE(url->HostIsIpLiteral());
}

TEST(DaemonUrlTest, DefaultPortsFollowTheScheme) {
  EXPECT_EQ(ParseDaemonUrl("http://localhost")->port, 80);
  EXPECT_EQ(ParseDaemonUrl("https://localhost/")->port, 443);
}

TEST(DaemonUrlTest, ReadsBracketedIpv6) {
  auto url = ParseDaemonUrl("http://[::1]:8470");
  ASSERT_TRUE(url.ok()) << url.error().ToString();
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->HostHeader(), "[::1]:8470");
  EXPECT_TRUE(url->HostIsIpLiteral());
}

TEST(DaemonUrlTest, ReadsUnixSocketPaths) {
  for (const char* text : {"unix:/run/plimsoll.sock", "unix:///run/plimsoll.sock"}) {
    auto url = ParseDaemonUrl(text);
    ASSERT_TRUE(url.ok()) << text << ": " << url.error().ToString();
    EXPECT_EQ(url->transport, Transport::kUnix);
    EXPECT_EQ(url->socket_path, "/run/plimsoll.sock");
    EXPECT_EQ(url->HostHeader(), "localhost");
    EXPECT_EQ(url->Target("/healthz"), "/healthz");
    EXPECT_EQ(url->ToString(), "unix:/run/plimsoll.sock");
  }
}

TEST(DaemonUrlTest, RefusesWhatItCannotUseWithASentence) {
  struct Case {
    const char* url;
    const char* says;
  };
  for (const Case& bad : std::initializer_list<Case>{
           {"ftp://host:1", "no http://, https:// or unix: scheme"},
           {"127.0.0.1:8470", "no http://"},
           {"http://", "has no host"},
           {"http://:8470", "has no host"},
           {"http://host:0", "port that is not a number from 1 to 65535"},
           {"http://host:65536", "port"},
           {"http://host:", "port"},
           {"http://host:80x", "port"},
           {"http://user:secret@host:1", "user information"},
           {"http://host:1/?q=1", "query or fragment"},
           {"http://host:1/#f", "query or fragment"},
           {"http://ho st:1", "neither a DNS name nor an IP address"},
           {"http://[::1:1", "unclosed"},
           {"http://[nothost]:1", "not an IPv6 address"},
           {"http://[::1]x", "text after the ]"},
           {"http://host:1/a b", "path with characters"},
           {"http://host:1/%2e", "path with characters"},
           {"unix:relative.sock", "absolute socket path"},
           {"unix:", "absolute socket path"},
       }) {
    auto url = ParseDaemonUrl(bad.url);
    ASSERT_FALSE(url.ok()) << bad.url;
    EXPECT_EQ(url.error().not_dispatched(), NotDispatched::kRequest) << bad.url;
    EXPECT_NE(url.error().message().find(bad.says), std::string::npos)
        << bad.url << ": " << url.error().message();
  }
  std::string long_path = "unix:/" + std::string(200, 'a');
  EXPECT_NE(ParseDaemonUrl(long_path).error().message().find("longer than"), std::string::npos);
  EXPECT_NE(ParseDaemonUrl(std::string("unix:/a\0b", 9)).error().message().find("NUL"),
            std::string::npos);
}

}  // namespace
}  // namespace plimsoll::client
