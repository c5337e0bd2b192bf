// Boots the microvm guest (image/microvm/build.sh: Debian's cloud kernel, our
// initramfs, the guest image as a read-only EROFS disk) in QEMU's microvm
// machine under TCG, and runs real jobs through plimsoll-guest over
// virtio-serial: the first slice of issue 7, before the provider exists.
// docs/microvm.md describes the VM; the QEMU command below is its reference.
//
// Each test boots one VM for one job (as the provider will) and checks that
// QEMU powers off by itself once the agent is done, and that nothing is left
// behind: no QEMU process, no socket, no temporary directory.
//
// Skipped, with the reason, where qemu-system-x86_64 is missing or the
// artifacts were not built (PLIMSOLL_MICROVM_DIR names them; ctest sets it).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/rand.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "guest/protocol.h"
#include "plimsoll/limits.h"
#include "plimsoll/request.h"

namespace plimsoll {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kQemu = "qemu-system-x86_64";
// TCG boots in ~2.5 s here; generous bounds for a loaded 2-core machine.
constexpr auto kBootBound = seconds(120);
constexpr auto kJobBound = seconds(120);
constexpr auto kPowerOffBound = seconds(60);

std::string FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

struct Artifacts {
  std::string kernel;
  std::string initramfs;
  std::string disk;
};

// Empty when the VM can be booted here; otherwise "skipped: <why>".
std::string SkipReason(Artifacts* artifacts) {
  if (FindInPath(kQemu).empty()) {
    return std::string("skipped: ") + kQemu +
           " is not installed (scripts/bootstrap installs qemu-system-x86)";
  }
  const char* dir = std::getenv("PLIMSOLL_MICROVM_DIR");
  if (dir == nullptr || *dir == '\0') {
    return "skipped: PLIMSOLL_MICROVM_DIR is not set (ctest sets it to <build>/microvm)";
  }
  std::string base = dir;
  artifacts->kernel = base + "/vmlinuz";
  artifacts->initramfs = base + "/initramfs.cpio.gz";
  artifacts->disk = base + "/rootfs.erofs";
  if (access((base + "/inputs").c_str(), R_OK) != 0) {
    return "skipped: no complete microvm guest build in " + base +
           " (build the microvm_guest target; it needs the guest image)";
  }
  for (const std::string* file : {&artifacts->kernel, &artifacts->initramfs, &artifacts->disk}) {
    // QEMU's option syntax takes ',' as a separator.
    if (file->find(',') != std::string::npos) return "skipped: a ',' in the path " + *file;
  }
  return "";
}

// Pids of live processes whose command line mentions `needle`.
std::vector<pid_t> ProcessesMentioning(const std::string& needle) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::string cmdline = ReadWholeFile(std::string("/proc/") + entry->d_name + "/cmdline");
    if (cmdline.find(needle) != std::string::npos) found.push_back(std::atoi(entry->d_name));
  }
  closedir(proc);
  return found;
}

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// How the host reaches the agent's virtio-serial port.
enum class Channel {
  kSocketPair,  // one end of a socketpair handed to QEMU (-chardev socket,fd=3)
  kUnixPath,    // a listening socket in the VM's directory; QEMU connects to it
};

// One QEMU microvm under TCG, for one job. The destructor kills QEMU if it is
// still running, reaps it and removes the VM's directory (console log,
// socket). Not thread-safe.
class TcgMicrovm {
 public:
  TcgMicrovm() {
    char pattern[] = "/tmp/plimsoll-microvm-test.XXXXXX";
    if (mkdtemp(pattern) != nullptr) directory_ = pattern;
  }
  ~TcgMicrovm() {
    channel_.Reset();
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::error_code ignored;
    if (!directory_.empty()) std::filesystem::remove_all(directory_, ignored);
  }
  TcgMicrovm(const TcgMicrovm&) = delete;
  TcgMicrovm& operator=(const TcgMicrovm&) = delete;

  const std::string& directory() const { return directory_; }
  std::string console_path() const { return directory_ + "/console.log"; }
  std::string socket_path() const { return directory_ + "/agent.sock"; }
  std::string Console() const { return ReadWholeFile(console_path()); }
  std::string QemuLog() const { return ReadWholeFile(directory_ + "/qemu.log"); }
  int channel() const { return channel_.get(); }
  Clock::time_point started() const { return started_; }

  // Starts QEMU; on success the host's end of the agent channel is
  // channel(). Returns an explanation on failure.
  std::string Start(const Artifacts& artifacts, Channel mode) {
    if (directory_.empty()) return "mkdtemp failed";
    Fd guest_end;
    Fd listener;
    std::string chardev;
    if (mode == Channel::kSocketPair) {
      int ends[2];
      if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) return "socketpair failed";
      channel_.Reset(ends[0]);
      guest_end.Reset(ends[1]);
      chardev = "socket,id=agent,fd=3";
    } else {
      listener.Reset(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      if (socket_path().size() >= sizeof address.sun_path) return "socket path too long";
      std::strncpy(address.sun_path, socket_path().c_str(), sizeof address.sun_path - 1);
      if (listener.get() < 0 ||
          bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
          listen(listener.get(), 1) != 0) {
        return "cannot listen on " + socket_path() + ": " +
               std::error_code(errno, std::generic_category()).message();
      }
      chardev = "socket,id=agent,path=" + socket_path();  // QEMU is the client
    }

    const std::string kernel_command_line =
        "console=ttyS0 quiet panic=-1 reboot=t tsc_early_khz=2000000 no_timer_check "
        "plimsoll.tmp_mb=16 plimsoll.work_mb=128";
    // One option and its value per pair.
    // clang-format off
    std::vector<std::string> argv = {
        kQemu, "-M", "microvm", "-accel", "tcg", "-cpu", "max", "-m", "256", "-smp", "1",
        "-nodefaults", "-no-user-config", "-nographic", "-no-reboot",
        "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
        "-kernel", artifacts.kernel, "-initrd", artifacts.initramfs,
        "-append", kernel_command_line,
        "-drive", "id=root,file=" + artifacts.disk + ",format=raw,if=none,readonly=on",
        "-device", "virtio-blk-device,drive=root",
        "-chardev", chardev,
        "-device", "virtio-serial-device",
        "-device", "virtserialport,chardev=agent,name=plimsoll.agent",
        "-serial", "file:" + console_path()};
    // clang-format on
    std::vector<char*> raw;
    raw.reserve(argv.size() + 1);
    for (std::string& argument : argv) raw.push_back(argument.data());
    raw.push_back(nullptr);
    std::string log = directory_ + "/qemu.log";

    started_ = Clock::now();
    pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) return "fork failed";
    if (pid_ == 0) {
      // QEMU dies with the test, whatever happens to it.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
      int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (null < 0 || out < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) {
        _exit(127);
      }
      // QEMU's end of the channel becomes its fd 3 (dup2 onto itself would
      // keep close-on-exec, hence the fcntl).
      if (guest_end.get() == 3) {
        if (fcntl(3, F_SETFD, 0) != 0) _exit(127);
      } else if (guest_end.get() >= 0 && dup2(guest_end.get(), 3) < 0) {
        _exit(127);
      }
      execvp(raw[0], raw.data());
      _exit(127);
    }
    guest_end.Reset();
    pidfd_.Reset(static_cast<int>(syscall(SYS_pidfd_open, pid_, 0)));
    if (pidfd_.get() < 0) return "pidfd_open failed";

    if (mode == Channel::kUnixPath) {
      // QEMU connects while it starts; wait for that or for QEMU to die.
      pollfd entries[2] = {{listener.get(), POLLIN, 0}, {pidfd_.get(), POLLIN, 0}};
      int ready = poll(entries, 2, 30'000);
      if (ready <= 0 || !(entries[0].revents & POLLIN)) return "QEMU never connected to the socket";
      channel_.Reset(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (channel_.get() < 0) return "accept failed";
      // The connection is all we need: the path goes at once.
      unlink(socket_path().c_str());
    }
    return "";
  }

  // Waits until QEMU exits (by itself) or `deadline`; returns its wait status.
  std::optional<int> WaitForExit(Clock::time_point deadline) {
    if (pid_ <= 0) return std::nullopt;
    for (;;) {
      auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
      pollfd entry{pidfd_.get(), POLLIN, 0};
      int ready = poll(&entry, 1, static_cast<int>(std::max<int64_t>(left, 0)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return std::nullopt;
      int status = 0;
      if (waitpid(pid_, &status, 0) != pid_) return std::nullopt;
      pid_ = -1;
      return status;
    }
  }

 private:
  std::string directory_;
  pid_t pid_ = -1;
  Fd pidfd_;
  Fd channel_;
  Clock::time_point started_;
};

std::string RandomKey() {
  std::string key(guest::kReportKeyBytes, '\0');
  EXPECT_EQ(RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())),
            1);
  return key;
}

class MicrovmBoot : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason = SkipReason(&artifacts_);
    if (!reason.empty()) GTEST_SKIP() << reason;
  }

  // Boots a VM and waits for the agent's ready frame.
  void Boot(TcgMicrovm& vm, Channel mode) {
    std::string problem = vm.Start(artifacts_, mode);
    ASSERT_EQ(problem, "") << vm.QemuLog();
    auto ready = guest::ReadFrame(vm.channel(), Clock::now() + kBootBound);
    ASSERT_TRUE(ready.ok()) << ready.error().ToString() << "\nconsole:\n"
                            << vm.Console() << "\nqemu:\n"
                            << vm.QemuLog();
    EXPECT_EQ(*ready, guest::kReadyFrame);
    auto boot_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - vm.started()).count();
    std::cout << "boot to agent-ready under TCG: " << boot_ms << " ms\n";
    RecordProperty("boot_to_ready_ms", std::to_string(boot_ms));
  }

  // Sends the request's job and returns the sealed report.
  guest::Report RunJob(TcgMicrovm& vm, const Request& request) {
    std::string key = RandomKey();
    auto job = guest::JobFromRequest(request, Limits{}, key);
    EXPECT_TRUE(job.ok()) << job.error().ToString();
    if (!job.ok()) return {};
    auto start = Clock::now();
    auto sent = guest::WriteFrame(vm.channel(), guest::EncodeJob(*job), start + kJobBound);
    EXPECT_TRUE(sent.ok()) << (sent.ok() ? "" : sent.error().ToString());
    auto report = guest::ReadSealedReport(vm.channel(), key, start + kJobBound);
    EXPECT_TRUE(report.ok()) << report.error().ToString() << "\nconsole:\n" << vm.Console();
    if (!report.ok()) return {};
    std::cout << "job round trip: "
              << std::chrono::duration_cast<milliseconds>(Clock::now() - start).count() << " ms\n";
    return *report;
  }

  // QEMU ends by itself (the init reboots, -no-reboot turns that into an
  // exit) with status 0, and the console says how the agent ended.
  void ExpectPowersOff(TcgMicrovm& vm, int agent_status) {
    auto status = vm.WaitForExit(Clock::now() + kPowerOffBound);
    ASSERT_TRUE(status.has_value()) << "QEMU still runs after the agent was done\nconsole:\n"
                                    << vm.Console();
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << "QEMU wait status " << *status << "\n"
        << vm.QemuLog();
    EXPECT_NE(vm.Console().find("plimsoll-init: the agent exited with status " +
                                std::to_string(agent_status)),
              std::string::npos)
        << vm.Console();
  }

  // After the VM object is gone: no QEMU process, socket or directory.
  static void ExpectNothingLeft(const std::string& directory) {
    EXPECT_TRUE(ProcessesMentioning(directory).empty()) << "a process still names " << directory;
    EXPECT_FALSE(std::filesystem::exists(directory)) << directory;
    EXPECT_FALSE(std::filesystem::exists(directory + "/agent.sock"));
  }

  Artifacts artifacts_;
};

TEST_F(MicrovmBoot, JavascriptSnippetRunsInTheVm) {
  std::string directory;
  {
    TcgMicrovm vm;
    directory = vm.directory();
    ASSERT_NO_FATAL_FAILURE(Boot(vm, Channel::kSocketPair));
    Request request;
    request.timeout_ms = 10'000;
    request.javascript = JavascriptPayload{"console.log(6*7)"};
    guest::Report report = RunJob(vm, request);
    EXPECT_EQ(report.outcome, ProjectOutcome::kCompleted) << report.detail;
    ASSERT_EQ(report.steps.size(), 1u) << report.detail;
    EXPECT_EQ(report.steps[0].exit_code, 0) << report.steps[0].stderr_bytes;
    EXPECT_EQ(report.steps[0].stdout_bytes, "42\n");
    EXPECT_EQ(report.steps[0].stderr_bytes, "");
    ExpectPowersOff(vm, 0);
  }
  ExpectNothingLeft(directory);
}

TEST_F(MicrovmBoot, PythonSnippetRunsUnprivilegedWithoutANetwork) {
  std::string directory;
  {
    TcgMicrovm vm;
    directory = vm.directory();
    ASSERT_NO_FATAL_FAILURE(Boot(vm, Channel::kSocketPair));
    Request request;
    request.timeout_ms = 20'000;
    request.python = PythonPayload{
        "import os, socket\n"
        "print(6*7)\n"
        "print(os.getuid(), os.getgid(), os.getcwd())\n"
        "print(sorted(name for _, name in socket.if_nameindex()))\n"};
    guest::Report report = RunJob(vm, request);
    EXPECT_EQ(report.outcome, ProjectOutcome::kCompleted) << report.detail;
    ASSERT_EQ(report.steps.size(), 1u) << report.detail;
    EXPECT_EQ(report.steps[0].exit_code, 0) << report.steps[0].stderr_bytes;
    EXPECT_EQ(report.steps[0].stdout_bytes, "42\n1000 1000 /work\n['lo']\n")
        << report.steps[0].stderr_bytes;
    ExpectPowersOff(vm, 0);
  }
  ExpectNothingLeft(directory);
}

// The host's end of the channel is the VM's lifeline: hanging up before any
// job makes the agent give up (exit 3) and the VM power off. This one runs
// over a Unix socket path, the way a VMM in another mount namespace (the
// jailer, later) will be reached.
TEST_F(MicrovmBoot, HostHangingUpPowersTheVmOff) {
  std::string directory;
  {
    TcgMicrovm vm;
    directory = vm.directory();
    ASSERT_NO_FATAL_FAILURE(Boot(vm, Channel::kUnixPath));
    EXPECT_FALSE(std::filesystem::exists(vm.socket_path()));
    EXPECT_FALSE(vm.WaitForExit(Clock::now()).has_value()) << "the VM did not wait for its job";
    // Close our end: the agent reads EOF instead of a job.
    ::shutdown(vm.channel(), SHUT_RDWR);
    ExpectPowersOff(vm, 3);
  }
  ExpectNothingLeft(directory);
}

}  // namespace
}  // namespace plimsoll
