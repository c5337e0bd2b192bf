// The jailer's command line: what the provider builds is what the jailer
// parses, and the jailer refuses what it must not accept.
#include "providers/microvm/jail_spec.h"

#include <gtest/gtest.h>

namespace plimsoll::microvm {
namespace {

JailSpec Sample() {
  JailSpec spec;
  spec.uid = 900001;
  spec.gid = 900001;
  spec.groups = {108};
  spec.cgroups = {"/sys/fs/cgroup/memory/plimsoll/microvm/1-2-3"};
  spec.read_only = {"/usr", "/lib64", "/root/artifacts/vmlinuz"};
  spec.writable = {"/run/plimsoll/microvm/vm-0011223344556677"};
  spec.devices = {"null", "urandom", "kvm"};
  spec.max_open_files = 128;
  spec.max_file_bytes = 4096;
  spec.working_directory = "/run/p/vm-1";
  spec.command = {"/usr/bin/qemu-system-x86_64", "-M", "microvm", "--", "--uid"};
  return spec;
}

TEST(JailSpecTest, CommandLineRoundTrips) {
  JailSpec spec = Sample();
  std::vector<std::string> argv = JailCommandLine("/opt/plimsoll-vmm-jail", spec);
  EXPECT_EQ(argv[0], "/opt/plimsoll-vmm-jail");
  auto parsed = ParseJailCommandLine(argv);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->uid, spec.uid);
  EXPECT_EQ(parsed->gid, spec.gid);
  EXPECT_EQ(parsed->groups, spec.groups);
  EXPECT_EQ(parsed->cgroups, spec.cgroups);
  EXPECT_EQ(parsed->read_only, spec.read_only);
  EXPECT_EQ(parsed->writable, spec.writable);
  EXPECT_EQ(parsed->devices, spec.devices);
  EXPECT_EQ(parsed->max_open_files, 128u);
  EXPECT_EQ(parsed->max_file_bytes, 4096u);
  EXPECT_EQ(parsed->working_directory, "/run/p/vm-1");
  // Everything after the first "--" is the VMM's, options lookalikes too.
  EXPECT_EQ(parsed->command, spec.command);
}

TEST(JailSpecTest, RefusesRootUnsafePathsAndUnknowns) {
  auto parse = [](std::vector<std::string> args) {
    args.insert(args.begin(), "jail");
    return ParseJailCommandLine(args);
  };
  EXPECT_FALSE(parse({"--uid", "0", "--gid", "5", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "0", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--uid", "4294967295", "--gid", "5", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--gid", "5", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--uid", "5x", "--gid", "5", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "5"}).ok());  // no command
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "5", "--", "qemu"}).ok());
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "5", "--read-only", "usr", "--", "/bin/true"}).ok());
  EXPECT_FALSE(
      parse({"--uid", "5", "--gid", "5", "--read-only", "/usr/../etc", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "5", "--writable", "/a//b", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "5", "--writable", "/a/", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "5", "--writable", "/", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "5", "--device", "sda", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "5", "--device", "../mem", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "5", "--privileged", "1", "--", "/bin/true"}).ok());
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "5", "--cgroup"}).ok());
  EXPECT_FALSE(parse({"--uid", "5", "--gid", "5", "--chdir", "vm", "--", "/bin/true"}).ok());
  auto good = parse({"--uid", "5", "--gid", "6", "--", "/bin/true"});
  ASSERT_TRUE(good.ok()) << good.error().message();
  EXPECT_TRUE(good->groups.empty());
  EXPECT_TRUE(good->working_directory.empty());
}

TEST(JailSpecTest, QemuSpecHoldsOnlyWhatQemuNeeds) {
  JailSpec spec = QemuJailSpec({"/usr/bin/qemu-system-x86_64", "-M", "microvm"},
                               {"/root/a/vmlinuz", "/usr/share/plimsoll/disk"}, "/run/p/vm-1",
                               900002, 900002, /*kvm=*/false);
  EXPECT_EQ(spec.uid, 900002u);
  EXPECT_EQ(spec.command[0], "/usr/bin/qemu-system-x86_64");
  EXPECT_EQ(spec.writable, std::vector<std::string>{"/run/p/vm-1"});
  EXPECT_EQ(spec.working_directory, "/run/p/vm-1");
  EXPECT_EQ(spec.devices, (std::vector<std::string>{"null", "zero", "urandom"}));
  auto has = [&](const std::string& path) {
    for (const std::string& p : spec.read_only) {
      if (p == path) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("/usr"));
  EXPECT_TRUE(has("/root/a/vmlinuz"));
  EXPECT_FALSE(has("/usr/share/plimsoll/disk"));  // visible through /usr
  EXPECT_FALSE(has("/usr/bin/qemu-system-x86_64"));
  EXPECT_FALSE(has("/etc"));
  EXPECT_FALSE(has("/home"));
  JailSpec kvm = QemuJailSpec({"/opt/qemu/bin/qemu"}, {}, "/run/p/vm-2", 900003, 900003, true);
  EXPECT_EQ(kvm.devices.back(), "kvm");
  EXPECT_EQ(kvm.read_only.back(), "/opt/qemu/bin/qemu");
  for (const std::string& path : kvm.read_only) EXPECT_TRUE(IsNormalAbsolutePath(path)) << path;
}

}  // namespace
}  // namespace plimsoll::microvm
