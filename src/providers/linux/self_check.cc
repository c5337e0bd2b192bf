#include "providers/linux/self_check.h"

#include <nlohmann/json.hpp>

namespace plimsoll::linux_sandbox {
namespace {

constexpr const char* kScript = R"python(
import errno, json, os, socket, sys

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
TMP, WORK, PIDS = int(args["--tmp"]), int(args["--work"]), int(args["--pids"])

def report(name, passed, detail):
    print(json.dumps({"name": name, "passed": bool(passed), "detail": detail}), flush=True)

mounts = []
with open("/proc/self/mountinfo") as f:
    for line in f:
        left, right = line.split(" - ", 1)
        l, r = left.split(), right.split()
        mounts.append({"point": l[4], "options": set(l[5].split(",")), "fstype": r[0],
                       "super": set(r[2].split(",")) if len(r) > 2 else set()})
by_point = {m["point"]: m for m in mounts}

root = by_point.get("/")
try:
    open("/plimsoll-probe", "w").close(); wrote = "created /plimsoll-probe"
except OSError as e:
    wrote = "write refused: " + errno.errorcode.get(e.errno, str(e.errno))
report("root_read_only", root is not None and "ro" in root["options"] and wrote.startswith("write refused"),
       "/ options %s; %s" % (sorted(root["options"]) if root else "missing", wrote))

def bounded_tmpfs(point, size):
    m = by_point.get(point)
    if m is None:
        return False, point + " is not a mount point"
    want = "size=%dk" % (size // 1024)
    ok = (m["fstype"] == "tmpfs" and {"noexec", "nosuid", "nodev", "rw"} <= m["options"]
          and want in m["super"])
    return ok, "%s: %s %s %s (want tmpfs, noexec,nosuid,nodev, %s)" % (
        point, m["fstype"], ",".join(sorted(m["options"])), ",".join(sorted(m["super"])), want)

report("tmp_is_bounded_tmpfs", *bounded_tmpfs("/tmp", TMP))
report("work_is_bounded_tmpfs", *bounded_tmpfs("/work", WORK))

# Writable mounts allowed, exactly: /tmp and /work (tmpfs; nosuid,nodev,noexec),
# /proc (proc; nosuid,nodev,noexec) and binds of the five character devices
# below (nosuid,noexec; not nodev, which would break them). Anything else
# writable, or an allowed one lacking its options, fails the check.
import stat
devices = {"/dev/" + n for n in ("null", "zero", "full", "random", "urandom")}
writable = [m for m in mounts if "rw" in m["options"]]
bad = []
for m in writable:
    point, options = m["point"], m["options"]
    if point in ("/tmp", "/work") and m["fstype"] == "tmpfs":
        needed = {"nosuid", "nodev", "noexec"}
    elif point == "/proc" and m["fstype"] == "proc":
        needed = {"nosuid", "nodev", "noexec"}
    elif point in devices and stat.S_ISCHR(os.stat(point).st_mode):
        needed = {"nosuid", "noexec"}
    else:
        bad.append(point)
        continue
    if not needed <= options:
        bad.append("%s(lacks %s)" % (point, ",".join(sorted(needed - options))))
report("only_tmpfs_writable", not bad,
       "allowed writable: /tmp,/work (tmpfs nosuid,nodev,noexec), /proc (nosuid,nodev,noexec), "
       "/dev/{null,zero,full,random,urandom} (character devices, nosuid,noexec); "
       "writable mounts: %s; unexpected: %s" % (",".join(sorted(m["point"] for m in writable)), bad or "none"))

with open("/proc/net/dev") as f:
    interfaces = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
report("loopback_only", interfaces == ["lo"], "interfaces: " + ",".join(interfaces))

with open("/proc/net/route") as f:
    routes = f.readlines()[1:]
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.close(); inet = "AF_INET socket created"
except OSError as e:
    inet = "AF_INET socket refused: " + errno.errorcode.get(e.errno, str(e.errno))
report("no_route_out", not routes and "refused" in inet, "%d IPv4 routes; %s" % (len(routes), inet))

children, failure = [], "none"
try:
    while len(children) < PIDS + 8:
        pid = os.fork()
        if pid == 0:
            import time; time.sleep(30); os._exit(0)
        children.append(pid)
except OSError as e:
    failure = errno.errorcode.get(e.errno, str(e.errno))
for pid in children:
    os.kill(pid, 9)
for pid in children:
    os.waitpid(pid, 0)
report("pids_limit", failure == "EAGAIN" and len(children) < PIDS,
       "fork failed with %s after %d children (pids.max %d)" % (failure, len(children), PIDS))

status = {}
with open("/proc/self/status") as f:
    for line in f:
        key, _, value = line.partition(":")
        status[key] = value.strip()
denied = []
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for name, call in (("unshare", lambda: libc.unshare(0x10000000)),
                       ("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
                       ("ptrace", lambda: libc.ptrace(0, 0, None, None)),
                       ("keyctl", lambda: libc.syscall(250, 0, 0, 0, 0, 0)),
                       ("bpf", lambda: libc.syscall(321, 0, 0, 0))):
        rc = call(); e = ctypes.get_errno()
        denied.append("%s=%s" % (name, "EPERM" if rc == -1 and e == errno.EPERM else "rc %d errno %d" % (rc, e)))
except ImportError:
    denied.append("ctypes unavailable")
report("seccomp_filter", status.get("Seccomp") == "2" and all(d.endswith("EPERM") or "ctypes" in d for d in denied),
       "Seccomp: %s, filters %s; %s" % (status.get("Seccomp"), status.get("Seccomp_filters"), ", ".join(denied)))
report("no_new_privileges", status.get("NoNewPrivs") == "1", "NoNewPrivs: %s" % status.get("NoNewPrivs"))
caps = {k: status.get(k) for k in ("CapInh", "CapPrm", "CapEff", "CapAmb")}
report("unprivileged_no_capabilities",
       os.getuid() != 0 and os.geteuid() != 0 and all(v is not None and int(v, 16) == 0 for v in caps.values()),
       "uid %d euid %d gid %d; %s" % (os.getuid(), os.geteuid(), os.getgid(),
                                        ", ".join("%s %s" % kv for kv in caps.items())))
)python";

}  // namespace

ProjectPayload SelfCheckProject(const Limits& limits) {
  ProjectPayload project;
  project.files.push_back({"self_check.py", kScript});
  project.steps.push_back({"python3", "self_check.py", "--tmp", std::to_string(limits.tmp_bytes),
                           "--work", std::to_string(limits.work_bytes), "--pids",
                           std::to_string(limits.pids)});
  return project;
}

const std::vector<std::string>& SelfCheckNames() {
  static const std::vector<std::string> names = {"root_read_only",
                                                 "tmp_is_bounded_tmpfs",
                                                 "work_is_bounded_tmpfs",
                                                 "only_tmpfs_writable",
                                                 "loopback_only",
                                                 "no_route_out",
                                                 "pids_limit",
                                                 "seccomp_filter",
                                                 "no_new_privileges",
                                                 "unprivileged_no_capabilities"};
  return names;
}

Expected<std::vector<EvidenceCheck>> ParseSelfCheckOutput(std::string_view stdout_bytes) {
  std::vector<EvidenceCheck> checks;
  size_t start = 0;
  while (start < stdout_bytes.size()) {
    size_t end = stdout_bytes.find('\n', start);
    if (end == std::string_view::npos) end = stdout_bytes.size();
    std::string_view line = stdout_bytes.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object() || !json.contains("name") || !json["name"].is_string() ||
        !json.contains("passed") || !json["passed"].is_boolean() || !json.contains("detail") ||
        !json["detail"].is_string()) {
      return Failure(ErrorCode::kInternal, "The self-check printed a line that is not a check: " +
                                               std::string(line.substr(0, 200)));
    }
    checks.push_back({json["name"].get<std::string>(), json["passed"].get<bool>(),
                      json["detail"].get<std::string>()});
  }
  for (const std::string& name : SelfCheckNames()) {
    bool found = false;
    for (const EvidenceCheck& check : checks) found = found || check.name == name;
    if (!found) checks.push_back({name, false, "the self-check did not report this check"});
  }
  return checks;
}

}  // namespace plimsoll::linux_sandbox
