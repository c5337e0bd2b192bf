// A linux sandbox built ahead of its run, for the provider's warm pool
// (src/providers/pool/warm_pool.h, the same pool the oci provider uses).
//
// Build() runs the whole of contain.h -- cgroup with the limits, clone3
// with the namespaces, id maps, mounts and pivot_root into the image,
// rlimits, capabilities, no_new_privs, seccomp, execve of the init -- with
// the agent started as `--announce --job-wait-ms 0`, and returns once the
// agent has sent its ready frame: from then on it only waits for its job.
// The channel is the agent's lifeline: closing the host end (the provider
// destroyed the sandbox, or the host process died) ends it, and the init's
// parent-death signal ends it too.
//
// It serves exactly one run: the provider takes its Container out
// (Release), sends the job and tears the sandbox down after the report,
// exactly as for a sandbox built cold; nothing ever goes back into a pool.
//
// It holds the configuration generation it was built under (the provider's
// prepared image, cgroup layout and seccomp program, type-erased) so that
// generation stays alive as long as the sandbox does; the pool hands it out
// only for that generation's number and destroys it when another serves
// (generations.h).
//
// Healthy(): the init is alive and the channel has nothing to read (an
// agent says nothing between its ready frame and its job: EOF or bytes mean
// it died or misbehaves). The pool destroys an unhealthy one, never hands
// it out.
//
// Usage:
//   auto warm = WarmSandbox::Build(config, prepared, deadline);  // pool thread
//   ...
//   Container container = warm->Release();   // the run that took it
//   WriteFrame(container.channel(), job, ...);
//
// Thread-safety: none; the pool owns each one until one run takes it.
#ifndef PLIMSOLL_PROVIDERS_LINUX_WARM_SANDBOX_H_
#define PLIMSOLL_PROVIDERS_LINUX_WARM_SANDBOX_H_

#include <memory>

#include "plimsoll/error.h"
#include "providers/linux/contain.h"

namespace plimsoll::linux_sandbox {

class WarmSandbox {
 public:
  // `config` as for a cold run of the same generation; Build adds the
  // agent's --announce and --job-wait-ms 0. Every failure is a
  // Refusal(kEnvironment) and leaves nothing behind.
  static Expected<std::unique_ptr<WarmSandbox>> Build(ContainConfig config,
                                                      std::shared_ptr<const void> generation,
                                                      Deadline deadline);

  WarmSandbox(const WarmSandbox&) = delete;
  WarmSandbox& operator=(const WarmSandbox&) = delete;
  // A sandbox never released is killed and dismantled here (Container's
  // destructor); the provider hands it to its Teardown instead.
  ~WarmSandbox() = default;

  bool Healthy() const;
  // The sandbox, for its one run; this object is empty afterwards.
  Container Release() { return std::move(container_); }

 private:
  WarmSandbox(Container container, std::shared_ptr<const void> generation)
      : container_(std::move(container)), generation_(std::move(generation)) {}

  Container container_;
  std::shared_ptr<const void> generation_;  // kept alive, never read
};

}  // namespace plimsoll::linux_sandbox

#endif  // PLIMSOLL_PROVIDERS_LINUX_WARM_SANDBOX_H_
