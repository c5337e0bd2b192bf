#include "providers/oci/bundle.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "os/proc_masks.h"
#include "os/seccomp.h"

namespace plimsoll::oci {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

Limits TestLimits() {
  Limits limits;
  limits.memory_bytes = int64_t{300} << 20;
  limits.cpus_millis = 1500;
  limits.pids = 77;
  limits.tmp_bytes = int64_t{9} << 20;
  limits.work_bytes = int64_t{33} << 20;
  return limits;
}

BundleConfig TestConfig() {
  BundleConfig config;
  config.rootfs = "/srv/image/rootfs";
  config.limits = TestLimits();
  config.hostname = "sandbox-h";
  config.env = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8"};
  config.pids_limit = DefaultPidsLimit(RuntimeKind::kRunc, config.limits);
  return config;
}

Json Build(const BundleConfig& config) {
  auto text = BuildConfigJson(config);
  EXPECT_TRUE(text.ok()) << (text.ok() ? "" : text.error().ToString());
  return Json::parse(*text);
}

const Json& MountAt(const Json& doc, const std::string& destination) {
  for (const Json& m : doc["mounts"]) {
    if (m["destination"] == destination) return m;
  }
  static const Json kNull;
  ADD_FAILURE() << "no mount at " << destination;
  return kNull;
}

std::set<std::string> Options(const Json& mount) {
  return mount["options"].get<std::set<std::string>>();
}

const std::set<std::string> kAgentCaps = {"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER",
                                          "CAP_KILL",  "CAP_SETGID",       "CAP_SETUID"};

TEST(OciBundle, RootIsTheImageReadOnly) {
  Json doc = Build(TestConfig());
  EXPECT_EQ(doc["root"]["path"], "/srv/image/rootfs");
  EXPECT_EQ(doc["root"]["readonly"], true);
  EXPECT_EQ(doc["hostname"], "sandbox-h");
}

TEST(OciBundle, OnlyAGrantedRunsBundleHasARunTmpfsForTheRelay) {
  BundleConfig granted = TestConfig();
  granted.host_calls = true;
  Json doc = Build(granted);
  const Json& run = MountAt(doc, "/run");
  EXPECT_EQ(run["type"], "tmpfs");
  EXPECT_EQ(Options(run),
            (std::set<std::string>{"nosuid", "noexec", "nodev", "mode=755", "size=65536"}));
  const Json plain = Build(TestConfig());
  for (const Json& m : plain["mounts"]) EXPECT_NE(m["destination"], "/run");
}

TEST(OciBundle, MountsAreExactlyProcDevTmpWorkWithTheirOptions) {
  Json doc = Build(TestConfig());
  std::set<std::string> destinations;
  for (const Json& m : doc["mounts"]) destinations.insert(m["destination"]);
  EXPECT_EQ(destinations, (std::set<std::string>{"/proc", "/dev", "/tmp", "/work"}));  // no /sys

  const Json& proc = MountAt(doc, "/proc");
  EXPECT_EQ(proc["type"], "proc");
  EXPECT_EQ(Options(proc), (std::set<std::string>{"nosuid", "noexec", "nodev"}));

  // runc/crun remount /dev read-only once the nodes are made; gVisor's
  // /dev stays writable (its /dev/null must take writes).
  const Json& dev = MountAt(doc, "/dev");
  EXPECT_EQ(dev["type"], "tmpfs");
  EXPECT_EQ(Options(dev), (std::set<std::string>{"nosuid", "noexec", "strictatime", "mode=755",
                                                 "size=65536", "nr_inodes=64", "ro"}));
  BundleConfig gvisor = TestConfig();
  gvisor.runtime = RuntimeKind::kRunsc;
  EXPECT_EQ(Options(MountAt(Build(gvisor), "/dev")).count("ro"), 0u);

  const Json& tmp = MountAt(doc, "/tmp");
  EXPECT_EQ(tmp["type"], "tmpfs");
  EXPECT_EQ(Options(tmp), (std::set<std::string>{"nosuid", "noexec", "nodev", "mode=1777",
                                                 "size=" + std::to_string(9 << 20)}));

  const Json& work = MountAt(doc, "/work");
  EXPECT_EQ(work["type"], "tmpfs");
  EXPECT_EQ(Options(work),
            (std::set<std::string>{"nosuid", "noexec", "nodev", "mode=755", "uid=1000", "gid=1000",
                                   "size=" + std::to_string(33 << 20)}));
}

TEST(OciBundle, OnlyTheFiveDeviceNodesExistAndAreAllowed) {
  Json doc = Build(TestConfig());
  std::set<std::pair<std::string, int>> nodes;
  for (const Json& d : doc["linux"]["devices"]) {
    EXPECT_EQ(d["type"], "c");
    EXPECT_EQ(d["major"], 1);
    EXPECT_EQ(d["fileMode"], 0666);
    EXPECT_EQ(d["uid"], 0);
    nodes.insert({d["path"].get<std::string>(), d["minor"].get<int>()});
  }
  EXPECT_EQ(nodes, (std::set<std::pair<std::string, int>>{{"/dev/null", 3},
                                                          {"/dev/zero", 5},
                                                          {"/dev/full", 7},
                                                          {"/dev/random", 8},
                                                          {"/dev/urandom", 9}}));
  const Json& rules = doc["linux"]["resources"]["devices"];
  ASSERT_EQ(rules.size(), 6u);
  EXPECT_EQ(rules[0], Json::parse(R"({"allow": false, "access": "rwm"})"));  // deny all first
  std::set<int> allowed;
  for (size_t i = 1; i < rules.size(); ++i) {
    EXPECT_EQ(rules[i]["allow"], true);
    EXPECT_EQ(rules[i]["type"], "c");
    EXPECT_EQ(rules[i]["major"], 1);
    allowed.insert(rules[i]["minor"].get<int>());
  }
  EXPECT_EQ(allowed, (std::set<int>{3, 5, 7, 8, 9}));
}

TEST(OciBundle, NamespacesAreFreshAndNetworkHasNoPath) {
  Json doc = Build(TestConfig());
  std::set<std::string> types;
  for (const Json& ns : doc["linux"]["namespaces"]) {
    types.insert(ns["type"]);
    EXPECT_FALSE(ns.contains("path")) << ns.dump();  // never join a host namespace
  }
  EXPECT_EQ(types, (std::set<std::string>{"pid", "network", "ipc", "uts", "mount", "cgroup"}));
  EXPECT_FALSE(doc["linux"].contains("uidMappings"));
  EXPECT_FALSE(doc.contains("hooks"));  // no network setup hooks: loopback only
}

TEST(OciBundle, UserNamespaceMapsRootAndTheGuestUserOnly) {
  BundleConfig config = TestConfig();
  config.user_namespace = UserNamespace{};
  Json doc = Build(config);
  bool has_user = false;
  for (const Json& ns : doc["linux"]["namespaces"]) has_user |= ns["type"] == "user";
  EXPECT_TRUE(has_user);
  Json want = Json::parse(R"([{"containerID": 0, "hostID": 1500000000, "size": 1},
                              {"containerID": 1000, "hostID": 1500001000, "size": 1}])");
  EXPECT_EQ(doc["linux"]["uidMappings"], want);
  EXPECT_EQ(doc["linux"]["gidMappings"], want);
}

TEST(OciBundle, ProcIsMaskedAndReadOnlyLikeRuncDefaults) {
  Json doc = Build(TestConfig());
  auto masked = doc["linux"]["maskedPaths"].get<std::set<std::string>>();
  for (const char* path :
       {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
        "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi"}) {
    EXPECT_TRUE(masked.count(path)) << path;
  }
  auto readonly = doc["linux"]["readonlyPaths"].get<std::set<std::string>>();
  EXPECT_EQ(readonly, (std::set<std::string>{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                             "/proc/sysrq-trigger"}));
}

TEST(OciBundle, ResourcesComeFromLimits) {
  Json doc = Build(TestConfig());
  const Json& r = doc["linux"]["resources"];
  EXPECT_EQ(r["memory"]["limit"], int64_t{300} << 20);
  EXPECT_EQ(r["memory"]["swap"], int64_t{300} << 20);  // memory+swap = memory: no swap
  EXPECT_EQ(r["pids"]["limit"], 77);
  EXPECT_EQ(r["cpu"]["quota"], 150'000);  // 1.5 CPU
  EXPECT_EQ(r["cpu"]["period"], 100'000);
}

TEST(OciBundle, RunscPidsLimitLeavesRoomForGvisor) {
  Limits limits = TestLimits();
  EXPECT_EQ(DefaultPidsLimit(RuntimeKind::kRunc, limits), 77);
  EXPECT_EQ(DefaultPidsLimit(RuntimeKind::kCrun, limits), 77);
  EXPECT_EQ(DefaultPidsLimit(RuntimeKind::kRunsc, limits), 77 + kRunscPidsHeadroom);
  BundleConfig config = TestConfig();
  config.runtime = RuntimeKind::kRunsc;
  config.pids_limit = DefaultPidsLimit(config.runtime, config.limits);
  Json doc = Build(config);
  EXPECT_EQ(doc["linux"]["resources"]["pids"]["limit"], 77 + kRunscPidsHeadroom);
}

TEST(OciBundle, ProcessIsTheAgentWithItsCapabilitiesOnly) {
  Json doc = Build(TestConfig());
  const Json& p = doc["process"];
  EXPECT_EQ(p["terminal"], false);
  EXPECT_EQ(p["noNewPrivileges"], true);
  EXPECT_EQ(p["cwd"], "/");
  EXPECT_EQ(p["user"], Json::parse(R"({"uid": 0, "gid": 0})"));
  EXPECT_EQ(p["args"],
            Json::parse(R"(["/usr/local/bin/plimsoll-guest", "--init", "--channel", "3"])"));
  EXPECT_EQ(p["env"], Json::parse(R"(["PATH=/usr/bin:/bin", "LANG=C.UTF-8"])"));
  const Json& caps = p["capabilities"];
  EXPECT_EQ(caps.size(), 5u);
  for (const char* set : {"bounding", "permitted", "effective"}) {
    EXPECT_EQ(caps[set].get<std::set<std::string>>(), kAgentCaps) << set;
    EXPECT_EQ(caps[set].size(), kAgentCaps.size()) << set;
  }
  EXPECT_EQ(caps["inheritable"], Json::array());
  EXPECT_EQ(caps["ambient"], Json::array());
}

TEST(OciBundle, Rlimits) {
  Json doc = Build(TestConfig());
  Json want = Json::parse(R"([
    {"type": "RLIMIT_CORE", "hard": 0, "soft": 0},
    {"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024},
    {"type": "RLIMIT_FSIZE", "hard": 34603008, "soft": 34603008}])");
  EXPECT_EQ(doc["process"]["rlimits"], want);
}

TEST(OciBundle, SeccompPolicyIsTranslated) {
  BundleConfig config = TestConfig();
  EXPECT_FALSE(Build(config)["linux"].contains("seccomp"));  // absent unless given

  auto policy = os::ParseSeccompPolicy(
      "version 1\n"
      "default deny EPERM\n"
      "allow read write\n"
      "deny ENOSYS clone3\n"
      "allow socket if arg0 == AF_UNIX\n"
      "allow mknod if arg1 & S_IFMT == S_IFIFO\n");
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  config.seccomp = *policy;
  Json s = Build(config)["linux"]["seccomp"];
  EXPECT_EQ(s["defaultAction"], "SCMP_ACT_ERRNO");
  EXPECT_EQ(s["defaultErrnoRet"], 1);
  EXPECT_EQ(s["architectures"], Json::parse(R"(["SCMP_ARCH_X86_64"])"));
  Json want = Json::parse(R"([
    {"names": ["read"], "action": "SCMP_ACT_ALLOW"},
    {"names": ["write"], "action": "SCMP_ACT_ALLOW"},
    {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
    {"names": ["socket"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}]},
    {"names": ["mknod"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 1, "value": 61440, "valueTwo": 4096, "op": "SCMP_CMP_MASKED_EQ"}]}])");
  EXPECT_EQ(s["syscalls"], want);
}

TEST(OciBundle, UnderRunscADenyEnosysIsGvisorsOwnEnosysAndOtherErrnosAreRefused) {
  // runsc ignores errnoRet (every denial answers EPERM), so a deny ENOSYS
  // rule (clone3: glibc falls back to clone only on ENOSYS) is written as an
  // allowance; the step's own filter (installed by the agent) answers ENOSYS.
  BundleConfig config = TestConfig();
  config.runtime = RuntimeKind::kRunsc;
  auto policy = os::ParseSeccompPolicy(
      "version 1\ndefault deny EPERM\nallow read\ndeny ENOSYS clone3\ndeny EPERM ptrace\n");
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  config.seccomp = *policy;
  Json s = Build(config)["linux"]["seccomp"];
  Json want = Json::parse(R"([
    {"names": ["read"], "action": "SCMP_ACT_ALLOW"},
    {"names": ["clone3"], "action": "SCMP_ACT_ALLOW"},
    {"names": ["ptrace"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}])");
  EXPECT_EQ(s["syscalls"], want);

  auto other = os::ParseSeccompPolicy("version 1\ndefault deny EPERM\ndeny EACCES ptrace\n");
  ASSERT_TRUE(other.ok());
  config.seccomp = *other;
  auto text = BuildConfigJson(config);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message().find("runsc answers every denial"), std::string::npos)
      << text.error().message();
  config.runtime = RuntimeKind::kRunc;  // runc keeps the errno
  EXPECT_TRUE(BuildConfigJson(config).ok());
}

TEST(OciBundle, TheShippedPolicyTranslatesForRunscToo) {
  BundleConfig config = TestConfig();
  config.runtime = RuntimeKind::kRunsc;
  config.seccomp = *os::ParseSeccompPolicy(os::BuiltInSeccompPolicyText());
  auto text = BuildConfigJson(config);
  ASSERT_TRUE(text.ok()) << text.error().ToString();
}

TEST(OciBundle, ProcIsMaskedFromTheLinuxSandboxsLists) {
  Json doc = Build(TestConfig());
  Json masked = Json::array(), read_only = Json::array();
  for (const char* name : os::kMaskedProcPaths) masked.push_back(std::string("/proc/") + name);
  for (const char* name : os::kReadOnlyProcPaths) {
    read_only.push_back(std::string("/proc/") + name);
  }
  EXPECT_EQ(doc["linux"]["maskedPaths"], masked);
  EXPECT_EQ(doc["linux"]["readonlyPaths"], read_only);
}

TEST(OciBundle, TheShippedSeccompPolicyTranslates) {
  BundleConfig config = TestConfig();
  auto policy = os::ParseSeccompPolicy(os::BuiltInSeccompPolicyText());
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  config.seccomp = *policy;
  Json s = Build(config)["linux"]["seccomp"];
  EXPECT_EQ(s["syscalls"].size(), policy->rules.size());
}

TEST(OciBundle, MaskedNotEqualIsRefused) {
  BundleConfig config = TestConfig();
  auto policy =
      os::ParseSeccompPolicy("version 1\ndefault deny EPERM\nallow clone if arg0 & 0xff != 0\n");
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  config.seccomp = *policy;
  auto text = BuildConfigJson(config);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message().find("masked != condition"), std::string::npos);
}

TEST(OciBundle, SameInputSameBytes) {
  BundleConfig config = TestConfig();
  config.seccomp = *os::ParseSeccompPolicy(os::BuiltInSeccompPolicyText());
  auto a = BuildConfigJson(config);
  auto b = BuildConfigJson(config);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  // Field order is fixed, not alphabetical.
  EXPECT_EQ(
      a->rfind("{\n  \"ociVersion\": \"1.0.2\",\n  \"process\": {\n    \"terminal\": false", 0),
      0u);
}

TEST(OciBundle, BadConfigsAreRefusedBeforeAnythingRuns) {
  auto refused = [](BundleConfig config, const std::string& words) {
    auto text = BuildConfigJson(config);
    ASSERT_FALSE(text.ok()) << words;
    EXPECT_EQ(NotDispatchedReason(text.error()), NotDispatched::kEnvironment);
    EXPECT_NE(text.error().message().find(words), std::string::npos) << text.error().message();
  };
  BundleConfig c = TestConfig();
  c.rootfs = "image/rootfs";
  refused(c, "rootfs path must be absolute");
  c = TestConfig();
  c.rootfs = "";
  refused(c, "rootfs path must be absolute");
  c = TestConfig();
  c.args = {};
  refused(c, "argv");
  c = TestConfig();
  c.args = {"plimsoll-guest"};
  refused(c, "argv");
  c = TestConfig();
  c.pids_limit = 0;
  refused(c, "pids limit");
  c = TestConfig();
  c.limits.work_bytes = 0;
  refused(c, "must be positive");
  c = TestConfig();
  c.hostname = "";
  refused(c, "host name");
}

TEST(OciBundle, RuntimeKindNames) {
  EXPECT_EQ(RuntimeKindName(RuntimeKind::kRunsc), "runsc");
  EXPECT_EQ(ParseRuntimeKind("crun"), RuntimeKind::kCrun);
  EXPECT_EQ(ParseRuntimeKind("docker"), std::nullopt);
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "oci-bundle-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(OciBundleWriter, WritesOnlyConfigJsonWithMode0600) {
  TempDir temp;
  ASSERT_FALSE(temp.path().empty());
  const std::string bundle = temp.path() + "/bundle";
  BundleConfig config = TestConfig();
  Status status = WriteBundle(bundle, config);
  ASSERT_TRUE(status.ok()) << status.error().ToString();

  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(bundle)) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"config.json"});
  struct stat dir_info {};
  ASSERT_EQ(::stat(bundle.c_str(), &dir_info), 0);
  EXPECT_EQ(dir_info.st_mode & 07777, 0700u);
  struct stat info {};
  ASSERT_EQ(::stat((bundle + "/config.json").c_str(), &info), 0);
  EXPECT_TRUE(S_ISREG(info.st_mode));
  EXPECT_EQ(info.st_mode & 07777, 0600u);

  std::ifstream in(bundle + "/config.json");
  std::stringstream bytes;
  bytes << in.rdbuf();
  EXPECT_EQ(bytes.str(), *BuildConfigJson(config));
}

TEST(OciBundleWriter, AcceptsAnExistingEmptyDirectory) {
  TempDir temp;
  ASSERT_FALSE(temp.path().empty());
  Status status = WriteBundle(temp.path(), TestConfig());
  ASSERT_TRUE(status.ok()) << status.error().ToString();
  EXPECT_TRUE(fs::exists(temp.path() + "/config.json"));
}

TEST(OciBundleWriter, RefusesANonEmptyDirectory) {
  TempDir temp;
  ASSERT_FALSE(temp.path().empty());
  std::ofstream(temp.path() + "/leftover") << "x";
  Status status = WriteBundle(temp.path(), TestConfig());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(NotDispatchedReason(status.error()), NotDispatched::kEnvironment);
  EXPECT_NE(status.error().message().find("is not empty"), std::string::npos)
      << status.error().message();
  EXPECT_FALSE(fs::exists(temp.path() + "/config.json"));
}

TEST(OciBundleWriter, RefusesRelativePaths) {
  TempDir temp;
  ASSERT_FALSE(temp.path().empty());
  BundleConfig config = TestConfig();
  config.rootfs = "rootfs";
  Status status = WriteBundle(temp.path() + "/b", config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message().find("rootfs path must be absolute"), std::string::npos);
  EXPECT_FALSE(fs::exists(temp.path() + "/b"));  // nothing created

  status = WriteBundle("relative/bundle", TestConfig());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message().find("bundle directory must be an absolute path"),
            std::string::npos);
}

TEST(OciBundleWriter, RefusesAFileInPlaceOfTheDirectory) {
  TempDir temp;
  ASSERT_FALSE(temp.path().empty());
  std::ofstream(temp.path() + "/file") << "x";
  Status status = WriteBundle(temp.path() + "/file", TestConfig());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message().find("not a directory"), std::string::npos);
}

// Field names against `runc spec` (writes a template; runs no container).
TEST(OciBundle, FieldNamesAreOnesRuncKnows) {
  if (::access("/usr/sbin/runc", X_OK) != 0 &&
      std::system("command -v runc >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "runc is not installed: no `runc spec` template to compare with.";
  }
  TempDir temp;
  ASSERT_FALSE(temp.path().empty());
  std::string command = "runc spec --bundle '" + temp.path() + "' >/dev/null 2>&1";
  if (std::system(command.c_str()) != 0) {
    GTEST_SKIP() << "`runc spec` failed here: nothing to compare with.";
  }
  std::ifstream in(temp.path() + "/config.json");
  Json runc = Json::parse(in);
  Json ours = Build(TestConfig());

  auto keys_within = [](const Json& mine, const Json& theirs, const std::set<std::string>& extra,
                        const std::string& where) {
    for (const auto& [key, value] : mine.items()) {
      EXPECT_TRUE(theirs.contains(key) || extra.count(key)) << where << "." << key;
    }
  };
  keys_within(ours, runc, {}, "");
  keys_within(ours["process"], runc["process"], {}, "process");
  // runc's template leaves inheritable out (it is empty); the name is the runtime spec's.
  keys_within(ours["process"]["capabilities"], runc["process"]["capabilities"], {"inheritable"},
              "process.capabilities");
  keys_within(ours["root"], runc["root"], {}, "root");
  Json runc_mount_keys = Json::object();
  for (const Json& m : runc["mounts"]) runc_mount_keys.update(m);
  for (const Json& m : ours["mounts"]) keys_within(m, runc_mount_keys, {}, "mounts[]");
  // runc's template has no devices, seccomp or id mappings; those names are the runtime spec's.
  keys_within(ours["linux"], runc["linux"],
              {"devices", "seccomp", "uidMappings", "gidMappings", "cgroupsPath"}, "linux");
  keys_within(ours["linux"]["resources"], runc["linux"]["resources"], {"memory", "cpu", "pids"},
              "linux.resources");
  keys_within(ours["linux"]["resources"]["devices"][0], runc["linux"]["resources"]["devices"][0],
              {}, "linux.resources.devices[]");
  // runc's own masked and read-only /proc paths are all ours too (its /sys ones aside).
  auto masked = ours["linux"]["maskedPaths"].get<std::set<std::string>>();
  for (const Json& path : runc["linux"]["maskedPaths"]) {
    std::string p = path;
    if (p.rfind("/sys/", 0) == 0) continue;
    EXPECT_TRUE(masked.count(p)) << "runc masks " << p;
  }
  auto readonly = ours["linux"]["readonlyPaths"].get<std::set<std::string>>();
  for (const Json& path : runc["linux"]["readonlyPaths"]) {
    EXPECT_TRUE(readonly.count(path.get<std::string>())) << "runc makes read-only " << path;
  }
}

}  // namespace
}  // namespace plimsoll::oci
