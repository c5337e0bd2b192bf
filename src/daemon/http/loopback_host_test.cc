#include "daemon/http/loopback_host.h"

#include <gtest/gtest.h>

namespace plimsoll::daemon::http {
namespace {

TEST(LoopbackHost, AcceptsLoopbackNamesAndAddressesWithOrWithoutAPort) {
  for (const char* host :
       {"localhost", "LocalHost", "localhost.", "localhost:8470", "127.0.0.1", "127.0.0.1:8470",
        "127.1.2.3:1", "127.255.255.255", "[::1]", "[::1]:8470", "[0:0:0:0:0:0:0:1]:80"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
}

TEST(LoopbackHost, RefusesEveryOtherName) {
  for (const char* host : {"",
                           "attacker.example",
                           "attacker.example:8470",
                           "localhost.attacker.example",
                           "evil-localhost",
                           "localhost:",
                           "localhost:99999",
                           "localhost:80:80",
                           "localhost:+1",
                           "127.0.0.1.attacker.example",
                           "128.0.0.1",
                           "0.0.0.0",
                           "10.0.0.1:8470",
                           "127.1",
                           "0x7f.0.0.1",
                           "0177.0.0.1",
                           "2130706433",
                           "[::1",
                           "::1",
                           "[::2]",
                           "[::ffff:127.0.0.1]",
                           "[::1]x",
                           "[::1]:",
                           "127.0.0.1 ",
                           " localhost"}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << '"' << host << '"';
  }
}

}  // namespace
}  // namespace plimsoll::daemon::http
