#include "providers/microvm/qmp.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace plimsoll::microvm {
namespace {

using Clock = std::chrono::steady_clock;
using base::UniqueFd;

int MillisecondsLeft(QmpClient::Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), 60'000));
}

Error QmpError(const std::string& message) {
  return Failure(ErrorCode::kInternal, "QMP: " + message);
}

Status WriteAll(int fd, const std::string& text, QmpClient::Deadline deadline) {
  size_t done = 0;
  while (done < text.size()) {
    pollfd entry{fd, POLLOUT, 0};
    int ready = poll(&entry, 1, MillisecondsLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return Failure(ErrorCode::kDeadlineExceeded, "QMP: the write timed out.");
    ssize_t wrote = send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (wrote < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (wrote < 0) return SystemError("QMP write", errno);
    done += static_cast<size_t>(wrote);
  }
  return Status::Ok();
}

}  // namespace

Expected<QmpClient> QmpClient::Connect(const std::string& socket_path, Deadline deadline) {
  for (;;) {
    // The socket lives in a directory the VM's uid may write: never follow
    // a symlink it could plant there (to another socket of the host), and
    // connect to exactly the socket inode checked, through its O_PATH fd.
    UniqueFd node(open(socket_path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    int error = errno;
    struct stat st {};
    if (node.valid()) {
      if (fstat(node.get(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
        return QmpError(socket_path + " is not a socket.");
      }
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      std::string via = "/proc/self/fd/" + std::to_string(node.get());
      std::memcpy(address.sun_path, via.c_str(), via.size() + 1);
      UniqueFd stream(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (!stream.valid()) return SystemError("QMP socket", errno);
      if (connect(stream.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
        return Handshake(std::move(stream), deadline);
      }
      error = errno;
    }
    if ((error != ENOENT && error != ECONNREFUSED && error != EAGAIN) || Clock::now() >= deadline) {
      return SystemError("QMP connect " + socket_path, error);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Expected<QmpClient> QmpClient::Handshake(UniqueFd stream, Deadline deadline) {
  QmpClient client(std::move(stream));
  auto greeting = client.ReadMessage(deadline);
  if (!greeting.ok()) return greeting.error();
  if (!greeting->contains("QMP")) return QmpError("no greeting: " + greeting->dump());
  const nlohmann::json& qemu = (*greeting)["QMP"].value("version", nlohmann::json::object());
  if (qemu.contains("qemu") && qemu["qemu"].is_object()) {
    const nlohmann::json& v = qemu["qemu"];
    client.version_ = std::to_string(v.value("major", 0)) + "." +
                      std::to_string(v.value("minor", 0)) + "." +
                      std::to_string(v.value("micro", 0));
  }
  auto negotiated = client.Execute("qmp_capabilities", deadline);
  if (!negotiated.ok()) return negotiated.error();
  return client;
}

Expected<nlohmann::json> QmpClient::ReadMessage(Deadline deadline) {
  for (;;) {
    size_t end = buffer_.find('\n');
    if (end != std::string::npos) {
      std::string line = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
      nlohmann::json message = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (message.is_discarded() || !message.is_object()) {
        return QmpError("not a JSON object: " + line.substr(0, 200));
      }
      return message;
    }
    if (buffer_.size() > kMaxQmpMessageBytes) {
      return QmpError("a message longer than " + std::to_string(kMaxQmpMessageBytes) + " bytes.");
    }
    pollfd entry{stream_.get(), POLLIN, 0};
    int ready = poll(&entry, 1, MillisecondsLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return SystemError("QMP poll", errno);
    if (ready == 0)
      return Failure(ErrorCode::kDeadlineExceeded, "QMP: no answer before the deadline.");
    char chunk[4096];
    ssize_t got = recv(stream_.get(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) return SystemError("QMP read", errno);
    if (got == 0) return QmpError("QEMU closed the connection.");
    buffer_.append(chunk, static_cast<size_t>(got));
  }
}

Expected<nlohmann::json> QmpClient::Execute(const std::string& command, Deadline deadline,
                                            const nlohmann::json& arguments) {
  int id = next_id_++;
  nlohmann::json request = {{"execute", command}, {"id", id}};
  if (!arguments.is_null()) request["arguments"] = arguments;
  PLIMSOLL_RETURN_IF_ERROR(WriteAll(stream_.get(), request.dump() + "\n", deadline));
  for (;;) {
    auto message = ReadMessage(deadline);
    if (!message.ok()) return message.error();
    if (message->contains("event")) continue;  // asynchronous, not our answer
    if (!message->contains("id") || (*message)["id"] != id) continue;
    if (message->contains("error")) {
      const nlohmann::json& error = (*message)["error"];
      return QmpError(command + " failed: " + error.value("class", std::string("?")) + ": " +
                      error.value("desc", std::string("?")));
    }
    if (!message->contains("return"))
      return QmpError(command + ": no return in " + message->dump());
    return (*message)["return"];
  }
}

Expected<QmpFacts> QueryQmpFacts(const std::string& socket_path, QmpClient::Deadline deadline) {
  auto client = QmpClient::Connect(socket_path, deadline);
  if (!client.ok()) return client.error();
  QmpFacts facts;
  facts.version = client->version();
  auto kvm = client->Execute("query-kvm", deadline);
  if (!kvm.ok()) return kvm.error();
  if (!kvm->is_object() || !(*kvm)["enabled"].is_boolean() || !(*kvm)["present"].is_boolean()) {
    return QmpError("query-kvm answered " + kvm->dump());
  }
  facts.kvm_enabled = (*kvm)["enabled"].get<bool>();
  facts.kvm_present = (*kvm)["present"].get<bool>();
  auto status = client->Execute("query-status", deadline);
  if (!status.ok()) return status.error();
  if (!status->is_object() || !(*status)["status"].is_string()) {
    return QmpError("query-status answered " + status->dump());
  }
  facts.status = (*status)["status"].get<std::string>();
  return facts;
}

}  // namespace plimsoll::microvm
