// What plimsoll-vmm-jail (jail.h) is asked to build, and its command line.
//
// The provider (host side, MicrovmVm::Start) fills a JailSpec and starts
// `JailCommandLine(jailer, spec)`; the jailer parses it back with
// ParseJailCommandLine and builds the jail (jail.h). Both ends live in this
// file so the two cannot drift apart. No system calls, except QemuJailSpec
// looking at which host paths exist. Thread-safe.
//
// Every path is absolute and appears inside the jail at the same absolute
// path it has on the host, so QEMU's own command line (which names the
// kernel, the disk and the VM directory) is the same with or without the jail,
// and Reconcile still finds QEMU by the VM directory in its command line.
//
// Command line:
//   plimsoll-vmm-jail --uid N --gid N [--group G]... [--cgroup DIR]...
//       [--read-only PATH]... [--writable PATH]... [--device NAME]...
//       [--chdir PATH] [--max-open-files N] [--max-file-bytes N] -- VMM ARG...
//
// Usage:
//   JailSpec spec = QemuJailSpec(qemu_argv, artifacts, vm_directory, uid, gid, kvm);
//   spec.cgroups = cgroup.directories();
//   os::SpawnOptions options{.argv = JailCommandLine("/usr/libexec/plimsoll-vmm-jail", spec)};
#ifndef PLIMSOLL_PROVIDERS_MICROVM_JAIL_SPEC_H_
#define PLIMSOLL_PROVIDERS_MICROVM_JAIL_SPEC_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::microvm {

// The executable's name: next to plimsoll/plimsolld, or in the build's bin.
inline constexpr const char* kJailerName = "plimsoll-vmm-jail";
// What the jailer exits with when it fails before exec (one line on stderr).
inline constexpr int kJailFailureExit = 125;

struct JailSpec {
  uid_t uid = 0;                     // the VMM's uid (never 0)
  gid_t gid = 0;                     // the VMM's gid (never 0)
  std::vector<gid_t> groups;         // supplementary groups (kvm's, under -accel kvm)
  std::vector<std::string> cgroups;  // cgroup directories to join (cgroup.procs)
  // Bound read-only at the same path (a symlink is recreated as a symlink).
  std::vector<std::string> read_only;
  // Bound writable at the same path (the VM directory).
  std::vector<std::string> writable;
  // Device nodes /dev/<name> bound into the jail's /dev ("null", "kvm", ...).
  std::vector<std::string> devices;
  // The VMM's working directory in the jail ("": /). QemuJailSpec makes it
  // the VM directory, so QEMU's QMP socket is named relative to it: a Unix
  // socket's path has at most 107 bytes, a state directory's path may not.
  std::string working_directory;
  uint64_t max_open_files = 256;                 // RLIMIT_NOFILE
  uint64_t max_file_bytes = uint64_t{64} << 20;  // RLIMIT_FSIZE (console.log)
  std::vector<std::string> command;              // the VMM's argv; command[0] absolute
};

// The jailer's argv for `spec`, argv[0] = `jailer`.
std::vector<std::string> JailCommandLine(const std::string& jailer, const JailSpec& spec);

// The reverse (argv[0] ignored). Rejects unknown options, relative or
// non-normal paths ("..", "//", a trailing '/'), uid/gid 0, device names
// other than null, zero, urandom, random and kvm, and an empty command.
Expected<JailSpec> ParseJailCommandLine(const std::vector<std::string>& argv);

// What QEMU needs, measured with strace on Debian 12 (docs/microvm.md "The
// jailer"): /usr (binary, libraries, firmware under /usr/share/qemu, the
// accel-tcg module), the merged-/usr symlinks /bin /lib /lib64 /sbin (or
// the directories on a split-/usr host), /etc/ld.so.cache, /etc/localtime,
// /dev/null, /dev/zero, /dev/urandom (and /dev/kvm under KVM); `artifacts`
// (kernel, initramfs, disk) read-only, `vm_directory` writable and the
// working directory. QEMU itself
// when it is not under /usr. Paths missing on this host are left out.
JailSpec QemuJailSpec(std::vector<std::string> qemu_argv, const std::vector<std::string>& artifacts,
                      const std::string& vm_directory, uid_t uid, gid_t gid, bool kvm);

// Whether `path` is absolute and normal (no ".", "..", "//", trailing '/').
bool IsNormalAbsolutePath(const std::string& path);

}  // namespace plimsoll::microvm

#endif  // PLIMSOLL_PROVIDERS_MICROVM_JAIL_SPEC_H_
