#include "providers/microvm/jail.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "os/descriptors.h"

extern char** environ;

namespace plimsoll::microvm {
namespace {

// Where the new root's tmpfs is mounted inside the jailer's private mount
// namespace before pivot_root (the host's mount table never sees it). What
// it hides there does not matter: every source is opened before.
constexpr const char* kStaging = "/tmp";
constexpr const char* kHostname = "plimsoll-vmm";
constexpr unsigned long kReadOnlyFlags = MS_RDONLY | MS_NOSUID | MS_NODEV;

// A source opened while the host's tree is still visible.
struct Source {
  std::string path;         // absolute, the same inside the jail
  int fd = -1;              // O_PATH, or -1 for a symlink
  std::string link_target;  // for a symlink
  bool directory = false;
  unsigned long flags = 0;  // per-mount flags after the bind
};

Error Step(const std::string& what, int error) {
  return SystemError(what, error);
}

Error Step(const std::string& what) {
  return Failure(ErrorCode::kFailedPrecondition, what);
}

Expected<Source> OpenSource(const std::string& path, unsigned long flags) {
  Source source;
  source.path = path;
  source.flags = flags;
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return Step("lstat " + path, errno);
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    ssize_t length = readlink(path.c_str(), target, sizeof target - 1);
    if (length < 0) return Step("readlink " + path, errno);
    source.link_target.assign(target, static_cast<size_t>(length));
    return source;
  }
  source.directory = S_ISDIR(st.st_mode);
  if (!source.directory) source.flags |= MS_NOEXEC;
  source.fd = open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (source.fd < 0) return Step("open " + path, errno);
  return source;
}

Status WriteText(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Step("open " + path, errno);
  ssize_t written = write(fd, text.data(), text.size());
  int saved = errno;
  close(fd);
  if (written != static_cast<ssize_t>(text.size())) return Step("write " + path, saved);
  return Status::Ok();
}

// Makes every directory of `path` (absolute) below the staging root, never
// following a symlink: a component that exists as anything but a directory
// is an error. Returns the staging path of `path` itself (not created).
Expected<std::string> MakeParents(const std::string& path) {
  std::string current = kStaging;
  size_t start = 1;
  for (;;) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) break;
    current += "/" + path.substr(start, end - start);
    if (mkdir(current.c_str(), 0711) != 0 && errno != EEXIST)
      return Step("mkdir " + current, errno);
    struct stat st {};
    if (lstat(current.c_str(), &st) != 0) return Step("lstat " + current, errno);
    if (!S_ISDIR(st.st_mode)) {
      return Step("The jail path " + path + " crosses " + current.substr(std::strlen(kStaging)) +
                  ", which is not a directory in the jail (e.g. a symlink); name its real path.");
    }
    start = end + 1;
  }
  return current + "/" + path.substr(start);
}

Status Place(const Source& source) {
  auto target = MakeParents(source.path);
  if (!target.ok()) return target.error();
  if (source.fd < 0) {
    if (symlink(source.link_target.c_str(), target->c_str()) != 0) {
      return Step("symlink " + *target, errno);
    }
    return Status::Ok();
  }
  if (source.directory) {
    if (mkdir(target->c_str(), 0711) != 0) return Step("mkdir " + *target, errno);
  } else {
    int fd = open(target->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return Step("create " + *target, errno);
    close(fd);
  }
  std::string from = "/proc/self/fd/" + std::to_string(source.fd);
  if (mount(from.c_str(), target->c_str(), nullptr, MS_BIND, nullptr) != 0) {
    return Step("bind " + source.path, errno);
  }
  if (mount(nullptr, target->c_str(), nullptr, MS_BIND | MS_REMOUNT | source.flags, nullptr) != 0) {
    return Step("remount " + source.path, errno);
  }
  return Status::Ok();
}

Status SetLimit(int resource, rlim_t value, const char* name) {
  rlimit limit{value, value};
  if (setrlimit(resource, &limit) != 0) return Step(std::string("setrlimit ") + name, errno);
  return Status::Ok();
}

Status BuildRoot(std::vector<Source>& sources) {
  if (mount("tmpfs", kStaging, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
            "mode=0711,size=1m,nr_inodes=512") != 0) {
    return Step("mount the jail's tmpfs", errno);
  }
  for (const Source& source : sources) PLIMSOLL_RETURN_IF_ERROR(Place(source));
  for (Source& source : sources) {
    if (source.fd >= 0) close(source.fd);
    source.fd = -1;
  }
  if (mount(nullptr, kStaging, nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
            nullptr) != 0) {
    return Step("make the jail's tmpfs read-only", errno);
  }
  if (chdir(kStaging) != 0) return Step("chdir to the new root", errno);
  // The old root is stacked under the new one, then detached: nothing of
  // the host's tree stays reachable.
  if (syscall(SYS_pivot_root, ".", ".") != 0) return Step("pivot_root", errno);
  if (umount2(".", MNT_DETACH) != 0) return Step("detach the old root", errno);
  if (chdir("/") != 0) return Step("chdir /", errno);
  return Status::Ok();
}

void CloseOtherDescriptors() {
  os::CloseFrom(4);
}

Status DropPrivileges(const JailSpec& spec) {
  for (int cap = 0; cap < 64; ++cap) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  // past the kernel's last capability
      return Step("PR_CAPBSET_DROP " + std::to_string(cap), errno);
    }
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    return Step("clear the ambient capabilities", errno);
  }
  if (setgroups(spec.groups.size(), spec.groups.data()) != 0) return Step("setgroups", errno);
  if (setresgid(spec.gid, spec.gid, spec.gid) != 0) return Step("setresgid", errno);
  if (setresuid(spec.uid, spec.uid, spec.uid) != 0) return Step("setresuid", errno);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capset, &header, data) != 0) return Step("capset (clear all)", errno);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Step("PR_SET_NO_NEW_PRIVS", errno);

  // Check rather than trust: every capability set empty, the ids as asked.
  __user_cap_data_struct now[2] = {};
  if (syscall(SYS_capget, &header, now) != 0) return Step("capget", errno);
  for (const auto& set : now) {
    if (set.effective != 0 || set.permitted != 0 || set.inheritable != 0) {
      return Step("A capability survived the uid change.");
    }
  }
  for (int cap = 0; cap < 64; ++cap) {
    int held = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (held < 0) break;
    if (held != 0)
      return Step("Capability " + std::to_string(cap) + " is still in the bounding set.");
  }
  uid_t ruid, euid, suid;
  gid_t rgid, egid, sgid;
  if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0) {
    return Step("getresuid/getresgid", errno);
  }
  if (ruid != spec.uid || euid != spec.uid || suid != spec.uid || rgid != spec.gid ||
      egid != spec.gid || sgid != spec.gid || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
    return Step("The ids or no_new_privs are not what was set.");
  }
  return Status::Ok();
}

}  // namespace

Error RunJail(const JailSpec& spec) {
  // The provider that started us: QEMU must end with it (see step 7).
  const pid_t provider = getppid();
  // 1. The cgroup, before anything is allocated for the VMM.
  for (const std::string& directory : spec.cgroups) {
    if (Status s = WriteText(directory + "/cgroup.procs", std::to_string(getpid())); !s.ok()) {
      return s.error().WithContext("Joining the VM's cgroup");
    }
  }
  // 2. rlimits.
  for (Status s : {SetLimit(RLIMIT_CORE, 0, "RLIMIT_CORE"),
                   SetLimit(RLIMIT_NOFILE, spec.max_open_files, "RLIMIT_NOFILE"),
                   SetLimit(RLIMIT_FSIZE, spec.max_file_bytes, "RLIMIT_FSIZE")}) {
    if (!s.ok()) return s.error();
  }
  // 3. Namespaces. The mount namespace is a copy of the host's, in which
  // every change below stays.
  if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) != 0) {
    return Step("unshare (mount, network, IPC, UTS)", errno);
  }
  if (sethostname(kHostname, std::strlen(kHostname)) != 0) return Step("sethostname", errno);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Step("make / private", errno);
  }
  // 4. Every source, opened (in the new namespace: a bind's source must be
  // a mount of the caller's namespace) before the tmpfs can hide anything.
  // An artifact may live under a 0700 directory such as /root: we are root.
  std::vector<Source> sources;
  auto add = [&](const std::string& path, unsigned long flags) -> Status {
    auto source = OpenSource(path, flags);
    if (!source.ok()) return source.error();
    sources.push_back(std::move(*source));
    return Status::Ok();
  };
  for (const std::string& path : spec.read_only) {
    if (Status s = add(path, kReadOnlyFlags); !s.ok()) return s.error();
  }
  for (const std::string& path : spec.writable) {
    if (Status s = add(path, MS_NOSUID | MS_NODEV | MS_NOEXEC); !s.ok()) return s.error();
  }
  for (const std::string& name : spec.devices) {
    // Device nodes: no nodev on their own mounts.
    if (Status s = add("/dev/" + name, MS_NOSUID | MS_NOEXEC); !s.ok()) return s.error();
  }
  // 5. The new root.
  if (Status s = BuildRoot(sources); !s.ok()) return s.error();
  if (!spec.working_directory.empty() && chdir(spec.working_directory.c_str()) != 0) {
    return Step("chdir " + spec.working_directory, errno);
  }
  // 6. Descriptors: 0-2 (stdio) and 3 (the agent channel) only.
  CloseOtherDescriptors();
  // 7. Credentials.
  if (Status s = DropPrivileges(spec); !s.ok()) return s.error();
  // The uid change cleared the parent-death signal os::Spawn set: set
  // again, QEMU (no set-uid bit, no file capabilities) keeps it across
  // execve, so a crashed provider's VMs end with it. A provider that died
  // before this point has reparented us: stop here.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return Step("PR_SET_PDEATHSIG", errno);
  if (getppid() != provider) return Step("the provider exited while the jail was built");
  // 8. The VMM.
  std::vector<char*> argv;
  for (const std::string& arg : spec.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execve(argv[0], argv.data(), environ);
  return Step("exec " + spec.command[0], errno);
}

}  // namespace plimsoll::microvm
