// The `microvm` provider: plimsoll's agent in a QEMU microvm booting Debian's
// cloud kernel and the guest image as a read-only disk (docs/microvm.md),
// one VM per run, with a warm pool of booted VMs. A session (SPEC §9) gets a
// VM of its own, booted when it opens (never a pooled one), whose agent
// answers call after call; before each call the host re-reads QEMU's jail
// from /proc (jail_evidence.h) and ends the session `boundary_failed` on any
// difference.
//
// Tier: under KVM `vm`, only once the smoke test proved a hardware-virtualised
// guest (QEMU started with -accel kvm and the guest sees the hypervisor CPU
// flag and its own kernel); under TCG (software emulation) `kernel`, never
// `vm`: QEMU's security policy does not treat TCG as a security boundary.
//
// QEMU never runs as root: plimsoll-vmm-jail (jail.h) starts it in its own
// mount, network, IPC and UTS namespaces on a pivot_root'ed tmpfs root, in a
// per-VM cgroup, as a uid of its own with no capabilities and no_new_privs;
// the smoke test checks that from the host (/proc/<pid>) and asks QMP
// whether KVM really accelerates the VM (query-kvm).
//
// Configuration (environment, read once at construction):
//   SANDBOX_MICROVM_ACCEL       kvm | tcg | auto (default auto: a bounded
//                               test boot under KVM, else TCG, the reason
//                               recorded)
//   SANDBOX_MICROVM_POOL_SIZE   VMs booted ahead (default 1; 0: off)
//   SANDBOX_MICROVM_STATE_DIR   the VMs' directories (default
//                               /run/plimsoll/microvm)
//   SANDBOX_MICROVM_JAIL_UID_BASE  first uid (= gid) of the 1024 the jailed
//                               QEMUs run as, one per live VM (default
//                               900000; 1 to 4294966271)
//   PLIMSOLL_MICROVM_DIR        the guest artifacts (default: `microvm` next
//                               to the located guest image, i.e.
//                               <build>/microvm)
//   PLIMSOLL_MICROVM_JAILER     plimsoll-vmm-jail (default: beside the
//                               running executable, else the build tree's)
#ifndef PLIMSOLL_PROVIDERS_MICROVM_MICROVM_PROVIDER_H_
#define PLIMSOLL_PROVIDERS_MICROVM_MICROVM_PROVIDER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "plimsoll/provider.h"

namespace plimsoll {

enum class MicrovmAccel { kAuto, kKvm, kTcg };

struct MicrovmSettings {
  MicrovmAccel accel = MicrovmAccel::kAuto;
  size_t pool_size = 1;
  std::string state_dir = "/run/plimsoll/microvm";
  uint32_t jail_uid_base = 900000;  // microvm::kDefaultJailUidBase
};

// Memory a VM gets on top of Limits::memory_bytes, for the guest kernel, the
// init and the agent (measured: the guest kernel and init take ~40 MiB).
inline constexpr int64_t kMicrovmOverheadBytes = int64_t{64} << 20;

// Bad values are refusals (kEnvironment) naming the variable.
Expected<MicrovmSettings> MicrovmSettingsFromEnvironment();

// Cheap: nothing is touched until Reconcile/Preflight/SmokeTest/Run.
std::unique_ptr<Provider> MakeMicrovmProvider(const Limits& limits,
                                              const MicrovmSettings& settings);
// With the settings from the environment (MicrovmSettingsFromEnvironment).
Expected<std::unique_ptr<Provider>> MakeMicrovmProvider(const Limits& limits);

}  // namespace plimsoll

#endif  // PLIMSOLL_PROVIDERS_MICROVM_MICROVM_PROVIDER_H_
