// The /proc entries every OS-level wall hides or freezes, in one list so the
// linux sandbox (providers/linux/mount.h masks them itself), the oci bundle
// (maskedPaths, readonlyPaths) and the self-check that proves both agree.
#ifndef PLIMSOLL_OS_PROC_MASKS_H_
#define PLIMSOLL_OS_PROC_MASKS_H_

namespace plimsoll::os {

// The /proc entries a sandbox must not read (kernel memory, keys, timers,
// scheduler and hardware details): masked in the linux sandbox and in the
// oci bundle's maskedPaths. A path the kernel lacks is skipped.
inline constexpr const char* kMaskedProcPaths[] = {"acpi",        "asound",        "kcore",
                                                   "keys",        "latency_stats", "timer_list",
                                                   "timer_stats", "sched_debug",   "scsi"};
// The /proc entries that stay readable but never writable (the sysctl tree,
// the SysRq trigger, ...): read-only binds here, readonlyPaths in the bundle.
inline constexpr const char* kReadOnlyProcPaths[] = {"bus", "fs", "irq", "sys", "sysrq-trigger"};

}  // namespace plimsoll::os

#endif  // PLIMSOLL_OS_PROC_MASKS_H_
