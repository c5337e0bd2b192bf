#include "providers/linux/warm_sandbox.h"

#include <poll.h>

#include <cerrno>
#include <string>

#include "guest/protocol.h"

namespace plimsoll::linux_sandbox {

Expected<std::unique_ptr<WarmSandbox>> WarmSandbox::Build(ContainConfig config,
                                                          std::shared_ptr<const void> generation,
                                                          Deadline deadline) {
  // --announce: the agent says when it waits; --job-wait-ms 0: it waits as
  // long as the host end of its channel stays open (its lifeline).
  config.argv.insert(config.argv.end(), {"--announce", "--job-wait-ms", "0"});
  auto container = Contain(config, deadline);
  if (!container.ok()) return container.error();
  auto ready = guest::ReadFrame(container->channel(), deadline);
  if (!ready.ok() || *ready != guest::kReadyFrame) {
    std::string why = ready.ok() ? "it sent something other than its ready frame"
                                 : ready.error().message();
    std::string said = container->Diagnostics();
    (void)container->Kill();  // ~Container would too; this keeps the order plain
    return Refusal(NotDispatched::kEnvironment,
                   "The warm linux sandbox's agent did not announce itself (" + why + ")" +
                       (said.empty() ? "" : "; agent stderr: " + said.substr(0, 1000)) + ".");
  }
  return std::unique_ptr<WarmSandbox>(new WarmSandbox(std::move(*container), std::move(generation)));
}

bool WarmSandbox::Healthy() const {
  if (container_.Exited() || container_.channel() < 0) return false;
  pollfd entry{container_.channel(), POLLIN | POLLRDHUP, 0};
  int ready;
  do {
    ready = poll(&entry, 1, 0);
  } while (ready < 0 && errno == EINTR);
  return ready == 0;  // nothing to read, no hang-up, no error
}

}  // namespace plimsoll::linux_sandbox
