#include "broker/origin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace plimsoll::broker {
namespace {

using ::testing::HasSubstr;

TEST(OriginTest, ParsesOriginsAndNormalisesThem) {
  auto origin = ParseOrigin("HTTPS://API.Example.com:8443/");
  ASSERT_TRUE(origin.ok()) << origin.error().ToString();
  EXPECT_EQ(origin->scheme, "https");
  EXPECT_EQ(origin->host, "api.example.com");
  EXPECT_EQ(origin->port, 8443);
  EXPECT_FALSE(origin->loopback);
  EXPECT_EQ(origin->ToString(), "https://api.example.com:8443");

  auto plain = ParseOrigin("https://api.example.com");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->EffectivePort(), 443);
  EXPECT_EQ(plain->ToString(), "https://api.example.com");
}

TEST(OriginTest, AllowsHttpOnlyForLoopback) {
  for (std::string_view url :
       {"http://localhost:8080", "http://LOCALHOST", "http://127.0.0.1:9", "http://127.255.0.7",
        "http://[::1]:8080", "http://[0:0:0:0:0:0:0:1]"}) {
    auto origin = ParseOrigin(url);
    ASSERT_TRUE(origin.ok()) << url << ": " << origin.error().ToString();
    EXPECT_TRUE(origin->loopback) << url;
  }
  EXPECT_EQ(ParseOrigin("http://[::1]:8080")->ToString(), "http://[::1]:8080");
  EXPECT_EQ(ParseOrigin("http://localhost")->EffectivePort(), 80);
  for (std::string_view url :
       {"http://api.example.com", "http://10.0.0.1", "http://128.0.0.1", "http://[::2]",
        "http://localhost.evil.com", "http://[::ffff:127.0.0.1]"}) {
    auto origin = ParseOrigin(url);
    ASSERT_FALSE(origin.ok()) << url;
    EXPECT_THAT(origin.error().message(), HasSubstr("https")) << url;
  }
}

TEST(OriginTest, RefusesAnythingButAnOrigin) {
  struct Case {
    std::string_view url;
    std::string_view says;
  };
  for (const Case& bad : std::vector<Case>{
           {"api.example.com", "https://host"},
           {"ftp://api.example.com", "scheme"},
           {"https://api.example.com/v1", "path"},
           {"https://api.example.com//", "path"},
           {"https://api.example.com?x=1", "query"},
           {"https://api.example.com/?x=1", "query"},
           {"https://api.example.com#x", "fragment"},
           {"https://user:pw@api.example.com", "user information"},
           {"https://@api.example.com", "user information"},
           {"https://", "no host"},
           {"https://:443", "no host"},
           {"https://api.example.com:", "port"},
           {"https://api.example.com:0", "port"},
           {"https://api.example.com:65536", "port"},
           {"https://api.example.com:80a", "port"},
           {"https://api.example.com:-1", "port"},
           {"https://api example.com", "space"},
           {"https://api.example.com\r\n", "control"},
           {"https://ex\xc3\xa4mple.com", "non-ASCII"},
           {"https://a%2eb.com", "'%'"},
           {"https://a\\b.com", "'\\'"},
           {"https://-bad.com", "host name"},
           {"https://bad..com", "host name"},
           {"https://127.1", "IPv4"},
           {"https://0127.0.0.1", "IPv4"},
           {"https://256.0.0.1", "IPv4"},
           {"https://[::1", "']'"},
           {"https://[zz::1]", "IPv6"},
           {"https://[::1]x", "after"},
       }) {
    auto origin = ParseOrigin(bad.url);
    ASSERT_FALSE(origin.ok()) << bad.url;
    EXPECT_THAT(origin.error().message(), HasSubstr(bad.says)) << bad.url;
  }
}

TEST(OriginTest, KnowsLoopbackHosts) {
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_FALSE(IsLoopbackHost("127.0.0.1.nip.io"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("::"));
}

}  // namespace
}  // namespace plimsoll::broker
