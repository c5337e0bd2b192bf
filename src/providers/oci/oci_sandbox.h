// One container of the `oci` provider: a bundle, the runtime's process, and
// the agent inside it waiting on its channel.
//
// Start() writes the bundle (`<bundles>/<id>/config.json`), starts
// `<runtime> run` (runtime.h) with the guest end of a socketpair as the
// agent's channel, and returns once the agent has announced itself
// (guest::kReadyFrame): the wall is built and the agent waits for one job.
// Nothing of the guest's runs before the job is sent.
//
// Destroy() ends it whatever state it is in: closes the channel (an agent
// still waiting exits), SIGKILLs the container's init through a pidfd
// checked to be the runtime's child, waits for the runtime to exit (it
// removes the container's state and cgroup), and when the runtime does not,
// or left state behind, runs `<runtime> delete --force` and kills it. Then
// the bundle is removed. The destructor calls Destroy() if nobody did.
//
// Thread-safety: one thread at a time per sandbox.
//
// Usage:
//   auto sandbox = OciSandbox::Start(runtime /* shared_ptr */, config, /*pooled=*/false, deadline);
//   WriteFrame(sandbox->channel(), job, ...); ReadSealedReport(sandbox->channel(), ...);
//   sandbox->Destroy(deadline);
#ifndef PLIMSOLL_PROVIDERS_OCI_OCI_SANDBOX_H_
#define PLIMSOLL_PROVIDERS_OCI_OCI_SANDBOX_H_

#include <memory>
#include <string>

#include "base/unique_fd.h"
#include "os/spawn.h"
#include "plimsoll/error.h"
#include "providers/oci/bundle.h"
#include "providers/oci/runtime.h"

namespace plimsoll::oci {

class OciSandbox {
 public:
  // `config` is the bundle template: its args and cgroups_path are replaced
  // with this sandbox's. `pooled`: the agent waits for its job with no time
  // limit (the channel is its lifeline). Errors are refusals (kEnvironment or
  // kCapacity: nothing ran), with the runtime's own words when it printed any.
  // `session`: the agent runs with --session (a kept sandbox answering job
  // after job on its channel, SPEC §9). `runtime` is kept as long as the
  // sandbox lives: a pooled container, or one being destroyed in the
  // background, can outlive the configuration generation that made it, so
  // give a pointer that owns that generation (an aliasing shared_ptr into
  // it), which is then released only with its last container.
  // `prestart_job` (pooled only; "" for none): an EncodeJob'd template the
  // agent starts the step of before it announces itself
  // (src/guest/agent/prestart.h).
  static Expected<std::unique_ptr<OciSandbox>> Start(std::shared_ptr<const Runtime> runtime,
                                                     BundleConfig config, bool pooled,
                                                     Deadline deadline, bool session = false,
                                                     const std::string& prestart_job = "");
  OciSandbox(const OciSandbox&) = delete;
  OciSandbox& operator=(const OciSandbox&) = delete;
  ~OciSandbox();

  const std::string& id() const { return id_; }
  int channel() const { return channel_.get(); }
  // The container's cgroup path (cgroupsPath in config.json).
  const std::string& cgroup_path() const { return cgroup_path_; }

  // Still fit to take a job: the runtime and the container's init run and
  // the agent has neither hung up nor written anything since it announced
  // itself.
  bool Healthy() const;
  // Waits until the runtime exits or `deadline`; its wait status (the
  // runtime exits with the container's status: 137 when the whole sandbox
  // was killed, e.g. by its memory cgroup), or nullopt.
  std::optional<int> WaitForExit(Deadline deadline);
  // The host pid of the container's init (checked to be the runtime's
  // child, as Healthy checks it), or -1.
  pid_t InitPid() const;
  // What the runtime and the agent printed so far (at most 4 KiB).
  std::string Diagnostics();
  // Ends the container (see above); errors say what could not be removed.
  Status Destroy(Deadline deadline);

 private:
  OciSandbox(std::shared_ptr<const Runtime> runtime, std::string id, std::string bundle,
             std::string cgroup_path)
      : runtime_(std::move(runtime)),
        id_(std::move(id)),
        bundle_(std::move(bundle)),
        cgroup_path_(std::move(cgroup_path)) {}
  // A pidfd of the container's init (the pid file's process, checked to be
  // the runtime's child), or an invalid one; `*named` (when given) is set
  // when the pid file names a process.
  base::UniqueFd OpenInit(bool* named) const;
  void SignalInit();

  const std::shared_ptr<const Runtime> runtime_;
  const std::string id_, bundle_, cgroup_path_;
  base::UniqueFd channel_;
  base::UniqueFd output_;  // the runtime's stdout+stderr (non-blocking)
  // pidfd of the container's init once known (Healthy() may open it late).
  mutable base::UniqueFd init_;
  std::optional<os::ChildProcess> process_;
  std::string diagnostics_;
  bool destroyed_ = false;
};

}  // namespace plimsoll::oci

#endif  // PLIMSOLL_PROVIDERS_OCI_OCI_SANDBOX_H_
