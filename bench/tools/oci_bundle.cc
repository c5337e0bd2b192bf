// plimsoll-oci-bundle: writes the OCI bundle the `oci` provider would write,
// with another process, for the raw runc/crun/runsc baselines of
// bench/scenarios.py (*-qjs-equivalent): the same BundleConfig the provider
// builds in Prepare() (src/providers/oci/oci_provider.cc) and the same writer
// (BuildConfigJson, WriteBundle), so mounts, namespaces (the user namespace
// for runc/crun), seccomp (the active policy, runc/crun only), rlimits,
// devices, cgroup limits and the cgroupsPath style are exactly the driver's.
// Only `process.args` (ARGV instead of the agent) and the cgroupsPath differ:
// the driver uses /plimsoll-oci/<container id>; this one /plimsoll-oci-bench/
// <runtime> by default (one container at a time; the runtime removes it on
// exit).
//
//   plimsoll-oci-bundle --runtime runc|crun|runsc --rootfs DIR --out DIR
//                       [--cgroups-path PATH] -- ARGV...
//
// Limits are the defaults (plimsoll::Limits{}), as Sandbox::Open(name) gives
// the provider. Prints the bundle directory on success. Exit status: 0; 1
// when the bundle cannot be built or written; 2 for usage errors.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "os/seccomp.h"
#include "plimsoll/limits.h"
#include "providers/oci/bundle.h"

namespace {

int Usage(const char* message) {
  std::fprintf(stderr,
               "plimsoll-oci-bundle: %s\nusage: plimsoll-oci-bundle --runtime runc|crun|runsc "
               "--rootfs DIR --out DIR [--cgroups-path PATH] -- ARGV...\n",
               message);
  return 2;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "plimsoll-oci-bundle: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  namespace oci = plimsoll::oci;
  std::string runtime_name, rootfs, out, cgroups_path;
  std::vector<std::string> args;
  int i = 1;
  for (; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) return Usage("every flag takes a value");
    const char* value = argv[++i];
    if (flag == "--runtime") {
      runtime_name = value;
    } else if (flag == "--rootfs") {
      rootfs = value;
    } else if (flag == "--out") {
      out = value;
    } else if (flag == "--cgroups-path") {
      cgroups_path = value;
    } else {
      return Usage("unknown flag");
    }
  }
  for (; i < argc; ++i) args.emplace_back(argv[i]);
  auto kind = oci::ParseRuntimeKind(runtime_name);
  if (!kind) return Usage("--runtime must be runc, crun or runsc");
  if (rootfs.empty() || out.empty() || args.empty()) {
    return Usage("--rootfs, --out and an ARGV after -- are required");
  }

  // As OciProvider::Prepare, then OciSandbox::Start (args, cgroups_path).
  oci::BundleConfig config;
  config.rootfs = rootfs;
  config.limits = plimsoll::Limits{};
  config.runtime = *kind;
  config.pids_limit = oci::DefaultPidsLimit(*kind, config.limits);
  if (*kind != oci::RuntimeKind::kRunsc) {
    std::string source;
    auto text = plimsoll::os::ActiveSeccompPolicyText(&source);
    if (!text.ok()) return Fail(text.error().message());
    auto policy = plimsoll::os::ParseSeccompPolicy(*text);
    if (!policy.ok()) {
      return Fail("the seccomp policy (" + source + "): " + policy.error().message());
    }
    config.seccomp = std::move(*policy);
    config.user_namespace = oci::UserNamespace{};
  }
  config.args = args;
  config.cgroups_path = cgroups_path.empty()
                            ? "/plimsoll-oci-bench/" + std::string(oci::RuntimeKindName(*kind))
                            : cgroups_path;
  auto written = oci::WriteBundle(out, config);
  if (!written.ok()) return Fail(written.error().message());
  std::printf("%s\n", out.c_str());
  return 0;
}
