// plimsoll-guest: the agent inside every OS-level sandbox (DESIGN.md "One
// guest agent"; the protocol is src/guest/protocol.h).
//
//   plimsoll-guest [--init] [--channel FD] [--announce] [--session] [--job-wait-ms N]
//                  [--await-hangup] [--work DIR] [--no-setuid] [--uid N] [--gid N]
//                  [--prestart-job JSON]
//
// --init: this process is pid 1 of the sandbox's fresh pid namespace; it
// stays there as a tiny init and forks the agent as pid 2, which owns the
// namespace (init.h). Without --init, the agent owns the namespace only when
// it is pid 1 itself.
//
// --announce: first send one guest::kReadyFrame frame on FD (the host then
// knows the sandbox is built and the agent waits; warm pools use it).
// --job-wait-ms: how long to wait for the job (default 60000; 0: until the
// host sends it or closes the channel). A warm pool's sandboxes wait with 0:
// the host's end of the channel is their lifeline, and its closing (the host
// exited or destroyed the sandbox) ends them.
//
// Reads one Job frame from FD (default 3), runs it (agent.h), writes the
// Report frame and its Seal frame back on FD, and exits 0.
//
// --prestart-job JSON: a warm pool's one-shot agent starts the step of the
// job its provider's JavaScript snippets have (an EncodeJob'd template)
// before it announces itself, and runs a job that asks for exactly that step
// in it (prestart.h); any other job discards it first. A template that
// cannot be prestarted is a usage error; a start that fails is said on
// stderr and the agent goes on without.
//
// --await-hangup: after the last report, wait (at most 10 s) for the host to
// hang up the channel before exiting. A VM's init reboots as soon as the
// agent exits, and a virtio-serial write returns once the bytes are queued,
// not once the host has read them: without the wait a large report can be
// cut off by the reboot (the microvm provider's init passes it).
//
// --session: a kept sandbox (SPEC §9): after each report it reads the next
// job (waiting as long as the host keeps FD open), with /work and the
// session's interpreters kept (agent.h SessionState); the host closing FD
// between jobs ends it (exit 0; its init then ends the sandbox). Exit 2: usage;
// 3: no job could be read (nothing is written back then: without the job's
// key there is nothing to seal, and the host reports a protocol error).
//
// Run as root (in the sandbox's user namespace) so steps run as
// kGuestUid and cannot signal, trace or read the agent. --no-setuid is for
// unprivileged tests only: steps then share the agent's uid and a hostile
// step could kill it (the host then sees no report: a protocol error, never
// a forged result, because the key is only in the agent's memory and the
// agent is not dumpable).
#include <fcntl.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/working_memory.h"
#include "guest/agent/agent.h"
#include "guest/agent/host_relay.h"
#include "guest/agent/init.h"
#include "guest/agent/lifeline.h"
#include "guest/agent/reaper.h"
#include "guest/agent/step_runner.h"
#include "guest/host_calls.h"
#include "guest/protocol.h"

namespace {

using plimsoll::guest::agent::AgentOptions;

constexpr int kExitUsage = 2;
constexpr int kExitNoJob = 3;
constexpr int64_t kDefaultJobWaitMs = 60'000;
constexpr auto kReportWait = std::chrono::seconds(60);
constexpr int kHangupWaitMs = 10'000;

int Usage(const char* message) {
  std::fprintf(
      stderr,
      "plimsoll-guest: %s\nusage: plimsoll-guest [--init] [--channel FD] "
      "[--announce] [--session] [--job-wait-ms N] [--await-hangup] [--work DIR] [--displays DIR] "
      "[--host-call-socket PATH] [--no-setuid] "
      "[--uid N] [--gid N] [--prestart-job JSON]\n",
      message);
  return kExitUsage;
}

template <typename T>
bool ParseNumber(const char* text, T& value) {
  std::string_view view(text);
  auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  return error == std::errc() && end == view.data() + view.size();
}

// Descriptors 0-2 must be open, so that no pipe or file the agent opens
// lands on them and gets handed to a step by accident.
void EnsureStandardDescriptors() {
  for (int fd = 0; fd < 3; ++fd) {
    if (fcntl(fd, F_GETFD) < 0) {
      int opened = open("/dev/null", O_RDWR);
      if (opened >= 0 && opened != fd) {
        dup2(opened, fd);
        close(opened);
      }
    }
  }
}

// Waits until the host has hung up `channel` (EOF, POLLHUP or an error),
// reading and dropping anything it still sends, for at most kHangupWaitMs.
void AwaitHangup(int channel) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(kHangupWaitMs);
  char sink[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd entry{channel, POLLIN, 0};
    int ready = poll(&entry, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 || (entry.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) return;
    ssize_t got = read(channel, sink, sizeof sink);
    if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  EnsureStandardDescriptors();
  // Not dumpable: a process of the same uid cannot ptrace the agent or open
  // its /proc entries (fd, mem), which hold the channel and the report key.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  umask(022);

  int channel = 3;
  int64_t job_wait_ms = kDefaultJobWaitMs;
  bool init = false;
  bool announce = false;
  bool session = false;
  bool await_hangup = false;
  // Where a granted job's relay listens (host_relay.h); tests move it.
  std::string host_call_socket = plimsoll::guest::kHostCallSocket;
  AgentOptions options;
  std::optional<plimsoll::guest::Job> prestart_template;
  for (int i = 1; i < argc; ++i) {
    std::string_view argument = argv[i];
    bool has_value = i + 1 < argc;
    if (argument == "--channel") {
      if (!has_value || !ParseNumber(argv[++i], channel) || channel < 0) {
        return Usage("--channel needs a descriptor number");
      }
    } else if (argument == "--job-wait-ms") {
      if (!has_value || !ParseNumber(argv[++i], job_wait_ms) || job_wait_ms < 0) {
        return Usage("--job-wait-ms needs a number of milliseconds (0: no limit)");
      }
    } else if (argument == "--work") {
      if (!has_value) return Usage("--work needs a directory");
      options.work_directory = argv[++i];
    } else if (argument == "--displays") {
      if (!has_value) return Usage("--displays needs a directory (\"\": no displays)");
      options.displays_directory = argv[++i];
    } else if (argument == "--host-call-socket") {
      if (!has_value) return Usage("--host-call-socket needs a path");
      host_call_socket = argv[++i];
    } else if (argument == "--prestart-job") {
      if (!has_value) return Usage("--prestart-job needs a job (JSON)");
      auto decoded = plimsoll::guest::DecodeJob(argv[++i]);
      if (!decoded.ok()) return Usage("--prestart-job needs a valid job (JSON)");
      prestart_template = std::move(*decoded);
    } else if (argument == "--announce") {
      announce = true;
    } else if (argument == "--session") {
      session = true;
    } else if (argument == "--await-hangup") {
      await_hangup = true;
    } else if (argument == "--init") {
      init = true;
    } else if (argument == "--no-setuid") {
      options.change_identity = false;
    } else if (argument == "--uid") {
      if (!has_value || !ParseNumber(argv[++i], options.uid)) return Usage("--uid needs a number");
    } else if (argument == "--gid") {
      if (!has_value || !ParseNumber(argv[++i], options.gid)) return Usage("--gid needs a number");
    } else if (argument == "--help" || argument == "-h") {
      Usage("runs one plimsoll job received on a channel");
      return 0;
    } else {
      return Usage("unknown argument");
    }
  }
  if (init) {
    const char* problem = "";
    if (!plimsoll::guest::agent::ForkAgentUnderInit(&problem)) return Usage(problem);
    options.owns_pid_namespace = true;  // only the agent (pid 2) gets here
  } else {
    options.owns_pid_namespace = getpid() == 1;
  }
  // Orphans of the steps come to the agent (pid 1 is a subreaper anyway).
  plimsoll::guest::agent::BecomeSubreaper();
  // The dispositions are final now: each step's child resets just these.
  plimsoll::guest::agent::PrepareStepLaunches();
  if (fcntl(channel, F_SETFD, FD_CLOEXEC) != 0) {
    std::perror("plimsoll-guest: the channel descriptor");
    return kExitNoJob;
  }

  if (prestart_template && session) return Usage("--prestart-job is for one-shot agents");
  // Started before the ready frame: a pooled sandbox is ready with it.
  // A prestarting agent (one-shot) also makes the job's directories now.
  std::unique_ptr<plimsoll::guest::agent::PrestartedStep> prestarted;
  std::optional<plimsoll::guest::agent::JobDirectories> directories;
  if (prestart_template) {
    directories.emplace(plimsoll::guest::agent::PrepareJobDirectories(options));
    std::string problem;
    prestarted = plimsoll::guest::agent::PrestartedStep::Start(
        *prestart_template,
        plimsoll::guest::agent::StepOptionsFor(*prestart_template, options,
                                               directories->displays_directory.valid()),
        &problem);
    if (!prestarted)
      std::fprintf(stderr, "plimsoll-guest: no prestarted step: %s\n", problem.c_str());
    OPENSSL_cleanse(prestart_template->report_key.data(), prestart_template->report_key.size());
    // The job's and the report's heap blocks, the stack buffers that drain
    // the step's pipes (base/working_memory.h).
    plimsoll::PrefaultWorkingMemory(size_t{1} << 20, size_t{256} << 10);
  }

  if (announce) {
    auto sent = plimsoll::guest::WriteFrame(channel, plimsoll::guest::kReadyFrame,
                                            std::chrono::steady_clock::now() + kReportWait);
    if (!sent.ok()) {
      std::fprintf(stderr, "plimsoll-guest: %s\n", sent.error().ToString().c_str());
      return kExitNoJob;
    }
  }
  auto job_deadline =
      job_wait_ms == 0 ? std::chrono::steady_clock::time_point::max()
                       : std::chrono::steady_clock::now() + std::chrono::milliseconds(job_wait_ms);
  // A session agent keeps its interpreters (and /work) from job to job; it
  // waits for each next job as long as the host keeps the channel open.
  plimsoll::guest::agent::SessionState session_state;
  const auto sweep_scope = options.owns_pid_namespace
                               ? plimsoll::guest::agent::SweepScope::kWholeNamespace
                               : plimsoll::guest::agent::SweepScope::kDescendants;
  // A warm pool's agent (prestarting) has its first job's lifeline running
  // while it waits: a thread start less on the job's path. A hang-up while
  // waiting ends the agent as a failed read would (kExitNoJob).
  std::unique_ptr<plimsoll::guest::agent::Lifeline> waiting_lifeline;
  if (prestarted) {
    waiting_lifeline =
        std::make_unique<plimsoll::guest::agent::Lifeline>(channel, sweep_scope, kExitNoJob);
  }
  for (bool first = true;; first = false) {
    auto frame = plimsoll::guest::ReadFrame(
        channel, first ? job_deadline : std::chrono::steady_clock::time_point::max());
    if (!frame.ok()) {
      // The host closing a session's channel between jobs is how it ends.
      if (!first && session) return 0;
      std::fprintf(stderr, "plimsoll-guest: %s\n", frame.error().ToString().c_str());
      return kExitNoJob;
    }
    auto job = plimsoll::guest::DecodeJob(*frame);
    OPENSSL_cleanse(frame->data(), frame->size());
    if (!job.ok()) {
      std::fprintf(stderr, "plimsoll-guest: %s\n", job.error().ToString().c_str());
      return kExitNoJob;
    }

    // A provider that hangs up now (it crashed) ends the job at once.
    std::unique_ptr<plimsoll::guest::agent::Lifeline> lifeline = std::move(waiting_lifeline);
    if (!lifeline) {
      lifeline =
          std::make_unique<plimsoll::guest::agent::Lifeline>(channel, sweep_scope, kExitNoJob);
    }
    // A granted job's guest code reaches the broker through the relay's
    // socket, and only while the job runs; a job without a grant has none.
    std::unique_ptr<plimsoll::guest::agent::HostRelay> relay;
    std::string relay_problem;
    if (job->host_calls) {
      auto started = plimsoll::guest::agent::HostRelay::Start(
          channel, host_call_socket,
          std::chrono::steady_clock::now() + std::chrono::milliseconds(job->timeout_ms));
      if (started.ok()) {
        relay = std::move(*started);
      } else {
        relay_problem = started.error().message();
      }
    }
    plimsoll::guest::Report report =
        plimsoll::guest::agent::RunJob(*job, options, session ? &session_state : nullptr,
                                       prestarted.get(), directories ? &*directories : nullptr);
    relay.reset();  // no call is waiting once it returns: the report may go
    if (!relay_problem.empty()) report.detail += relay_problem + "\n";
    lifeline->Stop();
    std::string bytes = plimsoll::guest::EncodeReport(report);
    std::string seal = plimsoll::guest::Seal(job->report_key, bytes);
    OPENSSL_cleanse(job->report_key.data(), job->report_key.size());

    auto deadline = std::chrono::steady_clock::now() + kReportWait;
    auto sent = plimsoll::guest::WriteFrames(channel, bytes, seal, deadline);
    if (!sent.ok()) {
      std::fprintf(stderr, "plimsoll-guest: %s\n", sent.error().ToString().c_str());
      return kExitNoJob;
    }
    if (!session) {
      if (await_hangup) AwaitHangup(channel);
      return 0;
    }
  }
}
