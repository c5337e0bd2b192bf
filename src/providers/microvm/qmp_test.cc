// The QMP client against a scripted server on a socketpair: greeting,
// capabilities, events skipped, errors as values, bounded reads, deadlines.
#include "providers/microvm/qmp.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

namespace plimsoll::microvm {
namespace {

using Clock = std::chrono::steady_clock;
using base::UniqueFd;

constexpr const char* kGreeting =
    R"({"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}, "package": ""}, )"
    R"("capabilities": ["oob"]}})"
    "\r\n";

std::string ReadLine(int fd) {
  std::string line;
  char c = 0;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

void Send(int fd, const std::string& text) {
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

struct Pair {
  Pair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    client.Reset(fds[0]);
    server.Reset(fds[1]);
  }
  UniqueFd client, server;
};

TEST(QmpTest, HandshakeQueryKvmAndEvents) {
  Pair pair;
  std::thread server([fd = pair.server.get()] {
    Send(fd, kGreeting);
    std::string negotiate = ReadLine(fd);
    EXPECT_NE(negotiate.find("qmp_capabilities"), std::string::npos);
    Send(fd, R"({"return": {}, "id": 1})"
             "\r\n");
    std::string query = ReadLine(fd);
    EXPECT_NE(query.find("query-kvm"), std::string::npos);
    Send(fd, R"({"timestamp": {"seconds": 1}, "event": "RESUME"})"
             "\r\n");
    Send(fd, R"({"return": {"enabled": false, "present": true}, "id": 2})"
             "\r\n");
    ReadLine(fd);
    Send(fd, R"({"error": {"class": "CommandNotFound", "desc": "nope"}, "id": 3})"
             "\r\n");
  });
  auto deadline = Clock::now() + std::chrono::seconds(5);
  auto client = QmpClient::Handshake(std::move(pair.client), deadline);
  ASSERT_TRUE(client.ok()) << client.error().message();
  EXPECT_EQ(client->version(), "7.2.0");
  auto kvm = client->Execute("query-kvm", deadline);
  ASSERT_TRUE(kvm.ok()) << kvm.error().message();
  EXPECT_EQ((*kvm)["enabled"], false);
  EXPECT_EQ((*kvm)["present"], true);
  auto missing = client->Execute("query-nothing", deadline);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("CommandNotFound: nope"), std::string::npos);
  server.join();
}

TEST(QmpTest, SilenceEndsAtTheDeadline) {
  Pair pair;
  auto started = Clock::now();
  auto client =
      QmpClient::Handshake(std::move(pair.client), started + std::chrono::milliseconds(200));
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.error().code(), ErrorCode::kDeadlineExceeded);
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(3));
}

TEST(QmpTest, OversizedAndMalformedMessagesAreErrors) {
  {
    Pair pair;
    std::string flood(kMaxQmpMessageBytes + 10, 'x');
    std::thread server([&, fd = pair.server.get()] { Send(fd, flood); });
    auto client =
        QmpClient::Handshake(std::move(pair.client), Clock::now() + std::chrono::seconds(5));
    server.join();
    ASSERT_FALSE(client.ok());
    EXPECT_NE(client.error().message().find("longer than"), std::string::npos);
  }
  {
    Pair pair;
    Send(pair.server.get(), "[1, 2]\n");
    auto client =
        QmpClient::Handshake(std::move(pair.client), Clock::now() + std::chrono::seconds(5));
    ASSERT_FALSE(client.ok());
  }
  {
    Pair pair;
    pair.server.Reset();  // hung up
    auto client =
        QmpClient::Handshake(std::move(pair.client), Clock::now() + std::chrono::seconds(5));
    ASSERT_FALSE(client.ok());
  }
}

// Connect goes through the checked socket inode; a symlink (which a
// compromised QEMU could plant in its directory) is refused.
TEST(QmpTest, ConnectsToTheSocketButNeverThroughASymlink) {
  char pattern[] = "/tmp/plimsoll-qmp-test.XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  std::string dir = pattern;
  std::string path = dir + "/qmp.sock";
  UniqueFd listener(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(listener.get(), 1), 0);
  std::filesystem::create_symlink(path, dir + "/link.sock");
  auto deadline = Clock::now() + std::chrono::seconds(5);
  auto refused = QmpClient::Connect(dir + "/link.sock", deadline);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("not a socket"), std::string::npos)
      << refused.error().message();
  std::thread server([&] {
    UniqueFd peer(accept(listener.get(), nullptr, nullptr));
    Send(peer.get(), kGreeting);
    ReadLine(peer.get());
    Send(peer.get(), R"({"return": {}, "id": 1})"
                     "\n");
  });
  auto client = QmpClient::Connect(path, deadline);
  server.join();
  EXPECT_TRUE(client.ok()) << client.error().message();
  std::filesystem::remove_all(dir);
}

TEST(QmpTest, ConnectToNothingIsAnError) {
  auto client =
      QmpClient::Connect("/nonexistent/qmp.sock", Clock::now() + std::chrono::milliseconds(50));
  ASSERT_FALSE(client.ok());
}

}  // namespace
}  // namespace plimsoll::microvm
