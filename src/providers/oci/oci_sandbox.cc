#include "providers/oci/oci_sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "guest/protocol.h"
#include "os/cgroup.h"
#include "os/owner.h"

namespace plimsoll::oci {
namespace {

using Clock = std::chrono::steady_clock;
using base::UniqueFd;

constexpr size_t kDiagnosticsCap = 4096;
// How long Destroy waits for the runtime to exit by itself once the init is
// killed, before it forces the deletion.
constexpr auto kRuntimeExitWait = std::chrono::seconds(5);
constexpr auto kDeleteWait = std::chrono::seconds(10);
// How long Destroy keeps removing cgroup directories the runtime left.
constexpr auto kCgroupRemovalWait = std::chrono::seconds(5);

Expected<std::string> NewContainerId() {
  unsigned char bytes[8];
  if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    return Refusal(NotDispatched::kEnvironment, "No randomness for a container id.");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  // The owner's tag: Reconcile leaves a live process's containers alone.
  std::string id = std::string(kContainerIdPrefix) + os::OwnerTag() + "-";
  for (unsigned char byte : bytes) {
    id += kHex[byte >> 4];
    id += kHex[byte & 15];
  }
  return id;
}

// The PPid field of /proc/<pid>/status, or -1.
pid_t ParentOf(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("PPid:", 0) == 0) return static_cast<pid_t>(std::atol(line.c_str() + 5));
  }
  return -1;
}

}  // namespace

Expected<std::unique_ptr<OciSandbox>> OciSandbox::Start(std::shared_ptr<const Runtime> kept,
                                                        BundleConfig config, bool pooled,
                                                        Deadline deadline, bool session,
                                                        const std::string& prestart_job) {
  const Runtime& runtime = *kept;
  auto id = NewContainerId();
  if (!id.ok()) return id.error();
  std::string bundle = runtime.bundles_dir() + "/" + *id;
  std::string cgroup_path = std::string(kCgroupParent) + "/" + *id;
  // A session's agent waits for each next job as long as the channel is open.
  config.args = runtime.AgentArgv(pooled || session);
  if (session) config.args.push_back("--session");
  if (pooled && !session && !prestart_job.empty()) {
    config.args.insert(config.args.end(), {"--prestart-job", prestart_job});
  }
  config.cgroups_path = cgroup_path;
  // From here on the destructor cleans up whatever exists.
  std::unique_ptr<OciSandbox> sandbox(new OciSandbox(std::move(kept), *id, bundle, cgroup_path));
  PLIMSOLL_RETURN_IF_ERROR(WriteBundle(bundle, config));

  auto descriptors = os::MakeAgentDescriptors();
  if (!descriptors.ok()) return descriptors.error();
  sandbox->channel_ = std::move(descriptors->channel);
  sandbox->output_ = std::move(descriptors->output);
  UniqueFd guest_end = std::move(descriptors->child_channel);
  UniqueFd output_write = std::move(descriptors->child_output);

  os::SpawnOptions spawn = runtime.SpawnFor(runtime.RunArgv(bundle, bundle + "/pid", *id));
  spawn.channel = guest_end.get();
  spawn.channel_target = runtime.channel_fd();
  spawn.output = output_write.get();
  auto process = os::Spawn(spawn);
  if (!process.ok()) {
    return Refusal(NotDispatched::kEnvironment, process.error().message());
  }
  sandbox->process_.emplace(std::move(*process));
  guest_end.Reset();
  output_write.Reset();

  auto ready = guest::ReadFrame(sandbox->channel(), deadline);
  if (ready.ok() && *ready == guest::kReadyFrame) {
    // crun may write its pid file only after the agent has spoken: Healthy()
    // tries again then.
    sandbox->init_ = sandbox->OpenInit(nullptr);
    return sandbox;
  }
  std::string why =
      ready.ok() ? "the agent sent something other than its ready frame" : ready.error().message();
  bool late = !ready.ok() && ready.error().code() == ErrorCode::kDeadlineExceeded;
  Status destroyed = sandbox->Destroy(Clock::now() + kRuntimeExitWait);
  std::string said = sandbox->Diagnostics();
  std::string message = "The " + std::string(RuntimeKindName(runtime.kind())) +
                        " container did not come up (" + why + ")" +
                        (said.empty() ? "" : "; the runtime said: " + said.substr(0, 1500));
  if (!destroyed.ok()) message += "; cleanup: " + destroyed.error().message();
  // Out of time while the host is busy is capacity; a runtime that failed
  // outright is the environment.
  return Refusal(late ? NotDispatched::kCapacity : NotDispatched::kEnvironment, message);
}

OciSandbox::~OciSandbox() {
  if (!destroyed_) (void)Destroy(Clock::now() + kRuntimeExitWait);
}

bool OciSandbox::Healthy() const {
  if (destroyed_ || !channel_.valid() || !process_ || process_->Exited()) return false;
  // The container's init (the agent; runsc's sandbox process) may be dead
  // while the runtime, still holding the channel's other end, has not
  // noticed yet.
  if (!init_.valid()) {
    bool named = false;
    init_ = OpenInit(&named);
    // Named by the pid file but gone, or no longer the runtime's child: dead.
    if (named && !init_.valid()) return false;
  }
  if (init_.valid()) {
    pollfd init{init_.get(), POLLIN, 0};
    if (poll(&init, 1, 0) != 0) return false;
  }
  pollfd entry{channel_.get(), POLLIN, 0};
  int ready = poll(&entry, 1, 0);
  if (ready != 0) return false;  // any event (data, hang-up, error) unfits it
  // The runtime keeps its own copy of the channel's guest end, so a
  // container whose every process was killed (from outside, or by its
  // memory cgroup) shows no hang-up; the init's pidfd may not have said so
  // yet either. Its cgroup, once readable and empty, does.
  // (Gone altogether, it was removed by a runtime about to exit.)
  // The pids controller on cgroup v1, the unified tree on v2.
  for (const auto& [root, marker] : {std::pair{"/sys/fs/cgroup/pids", "/cgroup.procs"},
                                     std::pair{"/sys/fs/cgroup", "/cgroup.controllers"}}) {
    if (access((std::string(root) + marker).c_str(), F_OK) != 0) continue;
    std::ifstream procs(std::string(root) + cgroup_path_ + "/cgroup.procs");
    long pid = 0;
    return procs && static_cast<bool>(procs >> pid);
  }
  return true;
}

std::optional<int> OciSandbox::WaitForExit(Deadline deadline) {
  if (!process_) return std::nullopt;
  return process_->Wait(deadline);
}

std::string OciSandbox::Diagnostics() {
  if (output_.valid()) os::DrainAvailable(output_.get(), &diagnostics_, kDiagnosticsCap);
  return diagnostics_;
}

UniqueFd OciSandbox::OpenInit(bool* named) const {
  if (!process_ || process_->Exited()) return UniqueFd();
  std::ifstream pid_file(bundle_ + "/pid");
  long pid = 0;
  if (!(pid_file >> pid) || pid <= 1) return UniqueFd();
  if (named != nullptr) *named = true;
  UniqueFd owned(static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0)));
  if (!owned.valid()) return UniqueFd();
  // The pidfd pins the process; checking its parent after opening it makes
  // sure it is still this runtime's container and not a reused pid.
  if (ParentOf(static_cast<pid_t>(pid)) != process_->pid()) return UniqueFd();
  return owned;
}

pid_t OciSandbox::InitPid() const {
  UniqueFd init = OpenInit(nullptr);
  if (!init.valid()) return -1;
  std::ifstream pid_file(bundle_ + "/pid");
  long pid = 0;
  return pid_file >> pid ? static_cast<pid_t>(pid) : -1;
}

void OciSandbox::SignalInit() {
  UniqueFd init = OpenInit(nullptr);
  if (init.valid()) syscall(SYS_pidfd_send_signal, init.get(), SIGKILL, nullptr, 0);
}

Status OciSandbox::Destroy(Deadline deadline) {
  if (destroyed_) return Status::Ok();
  destroyed_ = true;
  channel_.Reset();  // an agent still waiting for its job exits at once
  std::string problems;
  bool force_delete = false;
  if (process_) {
    auto status = process_->Wait(std::min(deadline, Clock::now() + std::chrono::milliseconds(50)));
    if (!status) {
      SignalInit();
      status = process_->Wait(std::min(deadline, Clock::now() + kRuntimeExitWait));
    }
    if (!status) {
      force_delete = true;
      process_->KillAndReap();
    } else if (WIFSIGNALED(*status)) {
      force_delete = true;  // the runtime itself died: its cleanup did not run
    }
  }
  Diagnostics();
  output_.Reset();
  std::error_code error;
  if (runtime_->kind() != RuntimeKind::kRunsc &&
      std::filesystem::exists(runtime_->state_root() + "/" + id_, error)) {
    force_delete = true;
  }
  if (force_delete) {
    os::SpawnOptions remove = runtime_->SpawnFor(runtime_->DeleteArgv(id_));
    auto deleted = os::RunCommand(remove, std::max(deadline, Clock::now() + kDeleteWait));
    if (!deleted.ok())
      problems += runtime_->binary() + " delete: " + deleted.error().message() + ". ";
  }
  std::vector<std::string> cgroups = os::RemoveCgroupEverywhere(
      cgroup_path_, std::max(deadline, Clock::now() + kCgroupRemovalWait));
  if (!cgroups.empty()) {
    problems += "The container's cgroup " + cgroups.front() + " could not be removed. ";
  }
  std::filesystem::remove_all(bundle_, error);
  if (error) problems += "Removing " + bundle_ + ": " + error.message() + ". ";
  if (!problems.empty()) return Failure(ErrorCode::kInternal, problems);
  return Status::Ok();
}

}  // namespace plimsoll::oci
