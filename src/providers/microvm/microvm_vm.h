// One VM of the `microvm` provider: QEMU's microvm machine booting the guest
// artifacts (docs/microvm.md), with plimsoll-guest waiting on a virtio-serial
// port for exactly one job (or, for a session's VM, one job after another).
//
// Start() makes the VM's directory (<state_dir>/vm-<owner>-<16 hex>, named in
// QEMU's command line, so Reconcile finds it: the serial console
// `console.log` and QMP's socket `qmp.sock`), leases the VM its own uid
// (jail_uid.h) and chowns the directory to it (0700), creates the VM's
// cgroup (<cgroup>/plimsoll/microvm/<owner>-<n>: memory = VM memory +
// kVmmOverheadMiB, pids kVmmPids, CPU quota = the VM's vCPUs), then starts
// plimsoll-vmm-jail (jail.h: namespaces, a pivot_root'ed tmpfs root, the
// cgroup, rlimits, that uid, no capabilities, no_new_privs), which execs
// QEMU (os::Spawn: no descriptor of ours reaches it but the guest end of a
// socketpair as its fd 3, `-chardev socket,fd=3`; stdout/stderr to a pipe we
// drain), and returns once the agent's ready frame (guest::kReadyFrame) has
// arrived and QMP answered query-kvm and query-status (qmp.h): the guest has
// booted and waits for its job. Nothing runs before.
//
// Destroy() ends it whatever state it is in: closes the channel (a waiting
// agent exits and the VM powers off by itself), SIGKILLs QEMU through its
// pidfd when it has not exited within a moment, reaps it, kills and removes
// the cgroup, removes the directory and frees the uid only once no process
// runs as it any more (whatever escaped the cgroup kill is ended through a
// pidfd; a uid still in use stays leased: jail_uid.h HoldUntilExit). The
// destructor calls Destroy() if nobody did.
//
// Thread-safety: one thread at a time per VM.
//
// Usage:
//   auto vm = MicrovmVm::Start(config, deadline);
//   guest::ExchangeJob(vm->channel(), job, request, deadline, &result);
//   vm->Destroy(deadline);
#ifndef PLIMSOLL_PROVIDERS_MICROVM_MICROVM_VM_H_
#define PLIMSOLL_PROVIDERS_MICROVM_MICROVM_VM_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "os/cgroup.h"
#include "os/spawn.h"
#include "plimsoll/error.h"
#include "providers/microvm/jail_spec.h"
#include "providers/microvm/jail_uid.h"
#include "providers/microvm/qmp.h"

namespace plimsoll::microvm {

using Deadline = std::chrono::steady_clock::time_point;

// QMP's socket in the VM directory, named relative to it (the jailer makes
// it QEMU's working directory): a Unix socket path holds at most 107 bytes.
inline constexpr const char* kQmpSocketName = "qmp.sock";

// Prefix of every VM directory under the state directory (Reconcile looks
// for these): <state_dir>/vm-<owner tag>-<16 hex> (os/owner.h).
inline constexpr const char* kVmDirectoryPrefix = "vm-";
// The VMs' cgroups, under each hierarchy's root.
inline constexpr const char* kMicrovmCgroupParent = "plimsoll/microvm";
// The cgroup's memory limit is the VM's memory plus this, for QEMU itself
// (TCG's translation cache, QEMU's heap and libraries, the page cache of
// the disk and console). Measured under TCG with a 320 MiB VM whose memory
// the smoke test's hoarder fills: peak usage 430 MiB, i.e. ~110 MiB over;
// docs/microvm.md "The jailer".
inline constexpr int64_t kVmmOverheadMiB = 192;
// The cgroup's pids.max: QEMU's main, RCU, vCPU and I/O worker threads
// (measured: at most 6 under TCG with 1 vCPU; the block layer's worker
// pool may grow to 64).
inline constexpr int64_t kVmmPids = 128;

struct VmConfig {
  std::string qemu;          // absolute path of qemu-system-x86_64
  std::string kernel;        // vmlinuz
  std::string initramfs;     // initramfs.cpio.gz
  std::string disk;          // rootfs.erofs
  std::string accelerator;   // "tcg" or "kvm"
  int64_t memory_mib = 320;  // -m
  int64_t cpus = 1;          // -smp
  int64_t tmp_mib = 16;      // plimsoll.tmp_mb
  int64_t work_mib = 128;    // plimsoll.work_mb
  // plimsoll.session=1: the agent answers job after job on its channel
  // (a session's VM, SPEC §9) instead of exactly one.
  bool session = false;
  std::string state_dir;  // where the VM's directory is made
  std::string jailer;     // plimsoll-vmm-jail; "": LocateJailer()
  UidRange uids;          // the jailed QEMUs' uids
  // Where the VMs' cgroups go; unset: MicrovmCgroupLayout() at each Start.
  std::optional<os::CgroupLayout> cgroups;
};

// QEMU's command line for `config`, its console at `console`, the agent's
// channel on fd 3, QMP on the Unix socket `qmp_socket` (none when ""; a
// relative name is in QEMU's working directory, the VM directory).
std::vector<std::string> QemuArgv(const VmConfig& config, const std::string& console,
                                  const std::string& qmp_socket = "");

// plimsoll-vmm-jail: $PLIMSOLL_MICROVM_JAILER, else next to the running
// executable (where plimsoll and plimsolld are installed), else the build
// tree's bin/. A refusal (kEnvironment) naming what was tried.
Expected<std::string> LocateJailer();

// The cgroup layout (os::DetectCgroups) with the parent
// kMicrovmCgroupParent, the parents created.
Expected<os::CgroupLayout> MicrovmCgroupLayout();

class MicrovmVm {
 public:
  // Errors are refusals (nothing ran): kCapacity when the deadline passed
  // during the boot, kEnvironment otherwise; with QEMU's and the console's
  // last words.
  static Expected<std::unique_ptr<MicrovmVm>> Start(const VmConfig& config, Deadline deadline);
  MicrovmVm(const MicrovmVm&) = delete;
  MicrovmVm& operator=(const MicrovmVm&) = delete;
  ~MicrovmVm();

  int channel() const { return channel_.get(); }
  const std::string& directory() const { return directory_; }
  pid_t pid() const { return process_ ? process_->pid() : -1; }
  // From starting the jailer to the ready frame.
  std::chrono::milliseconds boot_time() const { return boot_time_; }
  // What QMP answered after the boot.
  const QmpFacts& qmp() const { return qmp_; }
  // The jail QEMU was started in (its uid, binds, devices, cgroups).
  const JailSpec& jail() const { return jail_; }
  // The VM's cgroup limits as the kernel holds them, e.g. {"pids.max", "128"}.
  std::vector<std::pair<std::string, std::string>> CgroupLimits() const;

  // Still fit to take a job: QEMU runs and the agent has neither hung up nor
  // written anything since its ready frame.
  bool Healthy() const;
  // Waits until QEMU exits or `deadline`; its wait status or nullopt.
  std::optional<int> WaitForExit(Deadline deadline);
  // QEMU's own output and the tail of the serial console (at most ~4 KiB).
  std::string Diagnostics();
  // Ends the VM (see above); errors say what could not be removed.
  Status Destroy(Deadline deadline);

 private:
  explicit MicrovmVm(std::string directory) : directory_(std::move(directory)) {}

  const std::string directory_;
  base::UniqueFd channel_;
  base::UniqueFd output_;  // QEMU's stdout+stderr (non-blocking)
  std::optional<UidLease> uid_;
  std::optional<os::RunCgroup> cgroup_;
  std::optional<os::ChildProcess> process_;
  JailSpec jail_;
  QmpFacts qmp_;
  std::string diagnostics_;
  std::chrono::milliseconds boot_time_{0};
  bool destroyed_ = false;
};

}  // namespace plimsoll::microvm

#endif  // PLIMSOLL_PROVIDERS_MICROVM_MICROVM_VM_H_
