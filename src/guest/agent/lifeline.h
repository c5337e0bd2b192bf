// The agent's lifeline: the channel to the provider. Once a job is in, a
// thread watches it; when the provider's end hangs up before the report
// left (the provider crashed, e.g. a daemon killed with -9, or gave up on
// the run), nobody will ever read the report, so the agent ends the job at
// once instead of running it to its deadline: it kills every process of the
// job (a sweep, reaper.h: the whole pid namespace when the agent owns it)
// and exits `exit_code`. Its init (init.h), a container's runtime or a VM's
// guest kernel then end the sandbox, so a crashed provider's sandboxes end
// with it rather than at their deadline.
//
// A hang-up is POLLHUP, POLLRDHUP or POLLERR on the channel: a Unix socket
// whose peer closed (linux, oci, gVisor), a virtio-serial port whose host
// side disconnected (microvm). Data alone (POLLIN) is never taken for one.
//
// A warm pool's agent starts its first job's lifeline while it waits for the
// job (a hang-up then ends it as a failed read would), so that the thread
// start is not on the run's path. The watcher is a bare pthread: a
// std::thread frees its state on the new thread, and that first free()
// makes glibc set up a malloc arena there (four more system calls, costly
// under gVisor's ptrace platform).
//
// Usage (main.cc):
//   Lifeline lifeline(channel, scope, kExitNoJob);   // before or after the job is read
//   Report report = RunJob(...);
//   lifeline.Stop();                                 // before the report is sent
//   ... send the report ...                          // ~Lifeline joins the watcher
//
// Stop() does not wake or wait for the watcher: the report leaves first
// (the watcher's exit, joined by the destructor, took ~0.9 ms of every
// pooled runsc run under gVisor's ptrace platform). Stop() is seen before the
// report leaves, so the provider's hang-up after reading it is never taken
// for a crash.
#ifndef PLIMSOLL_GUEST_AGENT_LIFELINE_H_
#define PLIMSOLL_GUEST_AGENT_LIFELINE_H_

#include <pthread.h>

#include <atomic>

#include "base/unique_fd.h"
#include "guest/agent/reaper.h"

namespace plimsoll::guest::agent {

class Lifeline {
 public:
  Lifeline(int channel, SweepScope scope, int exit_code);
  Lifeline(const Lifeline&) = delete;
  Lifeline& operator=(const Lifeline&) = delete;
  ~Lifeline();  // Stop()

  // From now on a hang-up is the provider reading the report and leaving.
  // Returns at once, with no system call: the destructor wakes the watcher
  // (an eventfd) and joins it.
  void Stop();

 private:
  void Watch();
  static void* RunWatcher(void* self);

  const int channel_;
  const SweepScope scope_;
  const int exit_code_;
  // Written by Stop(), polled by the watcher beside the channel (invalid
  // when no eventfd could be made: the watcher then wakes every kPollMs).
  base::UniqueFd wake_;
  std::atomic<bool> stopping_{false};
  pthread_t watcher_{};  // started last, once the members above exist
  bool watching_ = false;
};

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_LIFELINE_H_
