#include "providers/linux/mount.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace plimsoll::linux_sandbox {
namespace {

constexpr const char* kDevices[] = {"null", "zero", "full", "random", "urandom"};

unsigned long FlagsOfHostMount(const struct statvfs& info) {
  unsigned long flags = 0;
  if (info.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (info.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (info.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (info.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (info.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (info.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  if (info.f_flag & ST_RDONLY) flags |= MS_RDONLY;
  return flags;
}

}  // namespace

Expected<MountPlan> MountPlanFor(const std::string& rootfs, const Limits& limits,
                                 const std::vector<BindFile>& binds, bool host_calls) {
  if (rootfs.empty() || rootfs[0] != '/') {
    return Refusal(NotDispatched::kEnvironment,
                   "The image rootfs path \"" + rootfs + "\" is not absolute.");
  }
  MountPlan plan;
  // The real path: a symlinked image directory must not be re-resolved later.
  char resolved[PATH_MAX];
  if (realpath(rootfs.c_str(), resolved) == nullptr) {
    return Refusal(
        NotDispatched::kEnvironment,
        "The image rootfs " + rootfs + " cannot be resolved: " + std::strerror(errno) + ".");
  }
  plan.rootfs = resolved;
  struct statvfs info {};
  if (statvfs(plan.rootfs.c_str(), &info) != 0) {
    return Refusal(
        NotDispatched::kEnvironment,
        "The image rootfs " + plan.rootfs + " cannot be read: " + std::strerror(errno) + ".");
  }
  plan.root_flags = FlagsOfHostMount(info);
  plan.proc = plan.rootfs + "/proc";
  plan.dev = plan.rootfs + "/dev";
  plan.tmp = plan.rootfs + "/tmp";
  plan.work = plan.rootfs + "/work";
  for (const std::string* dir : {&plan.proc, &plan.dev, &plan.tmp, &plan.work}) {
    struct stat st {};
    if (stat(dir->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Refusal(NotDispatched::kEnvironment, "The image has no directory " +
                                                      dir->substr(plan.rootfs.size()) +
                                                      " to mount on (looked for " + *dir + ").");
    }
  }
  plan.proc_options = "hidepid=invisible";
  plan.dev_options = "mode=0755,size=65536,nr_inodes=64";
  plan.tmp_options = "mode=1777,size=" + std::to_string(limits.tmp_bytes);
  plan.work_options = "mode=0755,uid=1000,gid=1000,size=" + std::to_string(limits.work_bytes);
  if (host_calls) {
    plan.run = plan.rootfs + "/run";
    struct stat st {};
    if (stat(plan.run.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Refusal(NotDispatched::kEnvironment,
                     "The image has no directory /run for a granted run's relay socket.");
    }
    plan.run_options = "mode=0755,size=65536,nr_inodes=16";
  }
  for (const char* name : kDevices) {
    plan.device_names.emplace_back(name);
    plan.device_sources.push_back(std::string("/dev/") + name);
    plan.device_targets.push_back(plan.dev + "/" + name);
    struct statvfs device {};
    if (statvfs(plan.device_sources.back().c_str(), &device) != 0) {
      return Refusal(NotDispatched::kEnvironment, "The host device " + plan.device_sources.back() +
                                                      " cannot be read: " + std::strerror(errno) +
                                                      ".");
    }
    if (device.f_flag & ST_NODEV) {
      return Refusal(NotDispatched::kEnvironment,
                     "The host device " + plan.device_sources.back() +
                         " is on a nodev mount, so a bind of it would not work.");
    }
    plan.device_flags.push_back(FlagsOfHostMount(device) | MS_NOSUID | MS_NOEXEC);
  }
  const std::pair<const char*, const char*> links[] = {
      {"fd", "/proc/self/fd"},
      {"stdin", "/proc/self/fd/0"},
      {"stdout", "/proc/self/fd/1"},
      {"stderr", "/proc/self/fd/2"},
      {"shm", "/tmp"},
  };
  for (const auto& [name, target] : links) {
    plan.symlink_paths.push_back(plan.dev + "/" + name);
    plan.symlink_targets.emplace_back(target);
  }
  for (const char* name : os::kMaskedProcPaths) {
    plan.masked_proc_paths.push_back(plan.proc + "/" + name);
  }
  for (const char* name : os::kReadOnlyProcPaths) {
    plan.read_only_proc_paths.push_back(plan.proc + "/" + name);
  }
  for (const BindFile& bind : binds) {
    if (bind.sandbox_target.empty() || bind.sandbox_target[0] != '/') {
      return Failure(ErrorCode::kInvalidArgument, "A bind target must be an absolute path.");
    }
    plan.bind_sources.push_back(bind.host_path);
    plan.bind_targets.push_back(plan.rootfs + bind.sandbox_target);
  }
  return plan;
}

int SetUpFilesystem(const MountPlan& plan, const char** what) {
  *what = "make every mount private (mount / MS_REC|MS_PRIVATE)";
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  *what = "bind-mount the image rootfs";
  if (mount(plan.rootfs.c_str(), plan.rootfs.c_str(), nullptr, MS_BIND, nullptr) != 0) return errno;

  *what = "mount a fresh /proc (hidepid=invisible)";
  if (mount("proc", plan.proc.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
            plan.proc_options.c_str()) != 0) {
    return errno;
  }
  // Masked and read-only /proc entries, as runc does them. The host's
  // /dev/null is still reachable here (the pivot comes later). A path this
  // kernel lacks is skipped.
  for (const std::string& path : plan.masked_proc_paths) {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      *what = "stat a masked /proc entry";
      return errno;
    }
    if (S_ISDIR(st.st_mode)) {
      *what = "mask a /proc directory with an empty read-only tmpfs";
      if (mount("tmpfs", path.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "mode=0555,size=4k") != 0) {
        return errno;
      }
    } else {
      *what = "mask a /proc file with /dev/null";
      if (mount("/dev/null", path.c_str(), nullptr, MS_BIND, nullptr) != 0) return errno;
      // Read-only, so the mask is no writable mount (reads stay empty).
      *what = "remount a /proc mask read-only";
      if (mount(nullptr, path.c_str(), nullptr,
                MS_REMOUNT | MS_BIND | MS_RDONLY | plan.device_flags.front() /* null */,
                nullptr) != 0) {
        return errno;
      }
    }
  }
  for (const std::string& path : plan.read_only_proc_paths) {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      *what = "stat a read-only /proc entry";
      return errno;
    }
    *what = "bind a read-only /proc entry";
    if (mount(path.c_str(), path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
    *what = "remount a /proc entry read-only";
    if (mount(nullptr, path.c_str(), nullptr,
              MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
      return errno;
    }
  }

  *what = "mount the /dev tmpfs";
  if (mount("tmpfs", plan.dev.c_str(), "tmpfs", MS_NOSUID | MS_NOEXEC, plan.dev_options.c_str()) !=
      0) {
    return errno;
  }
  for (size_t i = 0; i < plan.device_targets.size(); ++i) {
    *what = "create a /dev node's mount point";
    int fd =
        open(plan.device_targets[i].c_str(), O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0) return errno;
    close(fd);
    *what = "bind-mount a host device node into /dev";
    if (mount(plan.device_sources[i].c_str(), plan.device_targets[i].c_str(), nullptr, MS_BIND,
              nullptr) != 0) {
      return errno;
    }
    *what = "remount a /dev node's bind nosuid,noexec";
    if (mount(nullptr, plan.device_targets[i].c_str(), nullptr,
              MS_REMOUNT | MS_BIND | plan.device_flags[i], nullptr) != 0) {
      return errno;
    }
  }
  for (size_t i = 0; i < plan.symlink_paths.size(); ++i) {
    *what = "create a /dev symlink";
    if (symlink(plan.symlink_targets[i].c_str(), plan.symlink_paths[i].c_str()) != 0) return errno;
  }
  *what = "remount /dev read-only";
  if (mount(nullptr, plan.dev.c_str(), nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC,
            plan.dev_options.c_str()) != 0) {
    return errno;
  }

  *what = "mount the /tmp tmpfs";
  if (mount("tmpfs", plan.tmp.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
            plan.tmp_options.c_str()) != 0) {
    return errno;
  }
  *what = "mount the /work tmpfs";
  if (mount("tmpfs", plan.work.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
            plan.work_options.c_str()) != 0) {
    return errno;
  }
  if (!plan.run.empty()) {
    *what = "mount the /run tmpfs of a granted run";
    if (mount("tmpfs", plan.run.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              plan.run_options.c_str()) != 0) {
      return errno;
    }
  }
  for (size_t i = 0; i < plan.bind_targets.size(); ++i) {
    *what = "bind-mount a host file into the sandbox";
    if (mount(plan.bind_sources[i].c_str(), plan.bind_targets[i].c_str(), nullptr, MS_BIND,
              nullptr) != 0) {
      return errno;
    }
  }

  *what = "remount the rootfs read-only";
  if (mount(nullptr, plan.rootfs.c_str(), nullptr,
            MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | plan.root_flags,
            nullptr) != 0) {
    return errno;
  }

  *what = "chdir into the new root";
  if (chdir(plan.rootfs.c_str()) != 0) return errno;
  // pivot_root(".", "."): the old root ends up stacked on the new one and is
  // detached at once, so the read-only image needs no put_old directory.
  *what = "pivot_root";
  if (syscall(SYS_pivot_root, ".", ".") != 0) return errno;
  *what = "detach the old root";
  if (umount2(".", MNT_DETACH) != 0) return errno;
  *what = "chdir /";
  if (chdir("/") != 0) return errno;
  return 0;
}

}  // namespace plimsoll::linux_sandbox
