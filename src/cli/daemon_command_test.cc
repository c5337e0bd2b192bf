// `--daemon` on the command line, without a daemon: flags, the cleartext
// rule, an unreachable daemon. tests/integration/daemon_client_test.cc runs
// the same commands against a real in-process plimsolld.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdlib>
#include <sstream>

#include "cli/cli.h"
#include "cli/cli_test_support.h"
#include "cli/exit_status.h"

namespace plimsoll::cli {
namespace {


std::string ClosedPortUrl() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
}

TEST(DaemonCommandTest, DaemonFlagsAreCheckedAsUsage) {
  EXPECT_EQ(
      Invoke({"run", "--daemon", "http://127.0.0.1:1", "--provider", "embedded", "-e", "1"}).status,
      kExitUsage)
      << "--daemon and --provider exclude each other";
  EXPECT_EQ(Invoke({"run", "--token-file", "/tmp/t", "-e", "1"}).status, kExitUsage)
      << "--token-file needs --daemon";
  EXPECT_EQ(Invoke({"run", "--allow-cleartext", "-e", "1"}).status, kExitUsage);
  EXPECT_EQ(Invoke({"describe", "--daemon", "http://127.0.0.1:1", "--provider", "x"}).status,
            kExitUsage);
  EXPECT_EQ(
      Invoke({"run", "--token", "secret", "--daemon", "http://127.0.0.1:1", "-e", "1"}).status,
      kExitUsage)
      << "there is no flag that takes the token itself";
}

TEST(DaemonCommandTest, CleartextToANonLoopbackAddressIsRefusedWithHowToAllowIt) {
  auto start = std::chrono::steady_clock::now();
  Outcome outcome = Invoke({"run", "--daemon", "http://192.0.2.1:8470", "-e", "1"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_EQ(outcome.err.rfind("nothing ran: request: Refusing cleartext http:// to 192.0.2.1", 0),
            0u)
      << outcome.err;
  EXPECT_NE(outcome.err.find("--allow-cleartext"), std::string::npos);
  EXPECT_EQ(outcome.out, "");
}

TEST(DaemonCommandTest, AnUnreachableDaemonRanNothing) {
  Outcome outcome = Invoke({"run", "--daemon", ClosedPortUrl(), "-e", "1"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_EQ(outcome.err.rfind("nothing ran: capacity: Cannot reach the daemon at", 0), 0u)
      << outcome.err;

  outcome = Invoke({"run", "--json", "--daemon", ClosedPortUrl(), "-e", "1"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_NE(outcome.out.find("\"not_dispatched\":\"capacity\""), std::string::npos) << outcome.out;

  outcome = Invoke({"describe", "--daemon", ClosedPortUrl()});
  EXPECT_EQ(outcome.status, kExitNothingRan);
}

TEST(DaemonCommandTest, ABadUrlOrTokenFileIsARequestRefusal) {
  Outcome outcome = Invoke({"run", "--daemon", "ftp://h", "-e", "1"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_NE(outcome.err.find("nothing ran: request: The daemon URL"), std::string::npos)
      << outcome.err;
  outcome = Invoke(
      {"run", "--daemon", "http://127.0.0.1:1", "--token-file", "/nonexistent/t", "-e", "1"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_NE(outcome.err.find("Cannot read the token file"), std::string::npos) << outcome.err;
}

TEST(DaemonCommandTest, LocalProblemsWithTheRequestAreFoundBeforeSending) {
  // A closed port: if the request were sent, the answer would be "capacity".
  Outcome outcome = Invoke({"run", "--daemon", ClosedPortUrl(), "--lang", "ruby", "-e", "1"});
  EXPECT_EQ(outcome.status, kExitNothingRan);
  EXPECT_NE(outcome.err.find("nothing ran: request: --lang must be"), std::string::npos)
      << outcome.err;
}

}  // namespace
}  // namespace plimsoll::cli
