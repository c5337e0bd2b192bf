// A tiny client of QEMU's machine protocol (QMP) on the VM's private socket
// <vm directory>/qmp.sock (QEMU: -qmp unix:...,server=on,wait=off; the
// directory is 0700 and owned by the jailed VM's uid, so only root and that
// VM reach it).
//
// Connect() reads the greeting and negotiates capabilities; Execute() sends
// one command and returns its "return" value, skipping asynchronous events.
// Every read is bounded (kMaxMessageBytes per message) and ends at the
// deadline; a QMP error reply is an Error naming its class and description.
//
// Thread-safety: one thread at a time per client.
//
// Usage:
//   auto qmp = QmpClient::Connect(vm_directory + "/qmp.sock", deadline);
//   auto kvm = qmp->Execute("query-kvm", deadline);   // {"enabled":false,"present":true}
#ifndef PLIMSOLL_PROVIDERS_MICROVM_QMP_H_
#define PLIMSOLL_PROVIDERS_MICROVM_QMP_H_

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "base/unique_fd.h"
#include "plimsoll/error.h"

namespace plimsoll::microvm {

inline constexpr size_t kMaxQmpMessageBytes = 64 * 1024;

class QmpClient {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  // Connects to a listening QMP socket (retrying while it does not exist
  // yet), then greeting + qmp_capabilities.
  static Expected<QmpClient> Connect(const std::string& socket_path, Deadline deadline);
  // The same on an already connected stream (tests: a socketpair).
  static Expected<QmpClient> Handshake(base::UniqueFd stream, Deadline deadline);

  QmpClient(QmpClient&&) noexcept = default;
  QmpClient& operator=(QmpClient&&) noexcept = default;

  // The greeting's QEMU version, e.g. "7.2.0".
  const std::string& version() const { return version_; }
  // Sends {"execute": command, "arguments": arguments} and returns "return".
  Expected<nlohmann::json> Execute(const std::string& command, Deadline deadline,
                                   const nlohmann::json& arguments = nullptr);

 private:
  explicit QmpClient(base::UniqueFd stream) : stream_(std::move(stream)) {}
  Expected<nlohmann::json> ReadMessage(Deadline deadline);

  base::UniqueFd stream_;
  std::string buffer_;
  std::string version_;
  int next_id_ = 1;
};

// What the provider keeps from QMP after a boot.
struct QmpFacts {
  bool kvm_enabled = false;  // query-kvm "enabled": KVM really accelerates this VM
  bool kvm_present = false;  // query-kvm "present": KVM support is compiled in
  std::string status;        // query-status "status", e.g. "running"
  std::string version;       // the greeting's QEMU version
};

// Connect + query-kvm + query-status, then disconnect.
Expected<QmpFacts> QueryQmpFacts(const std::string& socket_path, QmpClient::Deadline deadline);

}  // namespace plimsoll::microvm

#endif  // PLIMSOLL_PROVIDERS_MICROVM_QMP_H_
