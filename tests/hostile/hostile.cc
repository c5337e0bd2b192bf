#include "hostile/hostile.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "common/host_preconditions.h"
#include "common/providers_under_test.h"
#include "common/warm_sandbox.h"
#include "plimsoll/record.h"

namespace plimsoll::hostile {
namespace {

using namespace std::chrono_literals;

std::string RandomHex(size_t bytes) {
  std::ifstream random("/dev/urandom", std::ios::binary);
  std::string raw(bytes, '\0');
  random.read(raw.data(), static_cast<std::streamsize>(raw.size()));
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : raw) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return hex;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

struct Listeners {
  int tcp = -1, tcp6 = -1, udp = -1, abstract = -1, unix_path = -1;
};

struct HostState {
  std::mutex mutex;
  std::unique_ptr<HostFixtures> fixtures;
  Listeners listeners;
};

HostState& State() {
  static HostState* state = new HostState;  // never destroyed: used from TearDown
  return *state;
}

int BoundPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  }
  return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
}

int InetListener(int family, int type) {
  int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int bound;
  if (family == AF_INET) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  } else {
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_addr = in6addr_loopback;
    bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  }
  if (bound != 0 || (type == SOCK_STREAM && listen(fd, 16) != 0)) {
    close(fd);
    return -1;
  }
  return fd;
}

int UnixListener(const std::string& path, bool abstract) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  size_t offset = abstract ? 1 : 0;
  std::memcpy(address.sun_path + offset, path.data(),
              std::min(path.size(), sizeof(address.sun_path) - 1 - offset));
  socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + path.size() +
                                            (abstract ? 0 : 1));
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 || listen(fd, 16) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::unique_ptr<HostFixtures> MakeFixtures(Listeners* listeners) {
  auto fixtures = std::make_unique<HostFixtures>();
  fixtures->token = RandomHex(16);
  fixtures->host_marker = "plh" + RandomHex(6);  // fits a 15-character comm
  fixtures->secret_dir = "/tmp/plimsoll-hostile-" + fixtures->token;
  fixtures->secret_path = fixtures->secret_dir + "/secret.txt";
  fixtures->secret_content = "host secret " + fixtures->token + "\n";
  // World-readable and world-writable on purpose: only the sandbox's wall may
  // keep the guest away from it, not file permissions.
  mkdir(fixtures->secret_dir.c_str(), 0755);
  chmod(fixtures->secret_dir.c_str(), 0755);
  {
    std::ofstream out(fixtures->secret_path, std::ios::binary);
    out << fixtures->secret_content;
  }
  chmod(fixtures->secret_path.c_str(), 0666);

  // A host process the guest must not see: it carries the marker as its name.
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NAME, fixtures->host_marker.c_str());
    for (;;) pause();
  }
  fixtures->marker_pid = pid;

  listeners->tcp = InetListener(AF_INET, SOCK_STREAM);
  listeners->tcp6 = InetListener(AF_INET6, SOCK_STREAM);
  listeners->udp = InetListener(AF_INET, SOCK_DGRAM);
  fixtures->tcp_port = listeners->tcp >= 0 ? BoundPort(listeners->tcp) : 0;
  fixtures->tcp6_port = listeners->tcp6 >= 0 ? BoundPort(listeners->tcp6) : 0;
  fixtures->udp_port = listeners->udp >= 0 ? BoundPort(listeners->udp) : 0;
  fixtures->abstract_name = "plimsoll-hostile-" + fixtures->token;
  listeners->abstract = UnixListener(fixtures->abstract_name, /*abstract=*/true);
  fixtures->unix_path = fixtures->secret_dir + "/host.sock";
  listeners->unix_path = UnixListener(fixtures->unix_path, /*abstract=*/false);
  chmod(fixtures->unix_path.c_str(), 0777);
  return fixtures;
}

struct OpenedSandbox {
  std::unique_ptr<Sandbox> sandbox;
  std::string skip_reason;
  bool fail = false;  // the reason is a failure, not a skip (host_preconditions.h)
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, OpenedSandbox> opened;
  bool closed = false;
};

Registry& Sandboxes() {
  static Registry* registry = new Registry;
  return *registry;
}

bool AcceptsProjects(const Description& description) {
  const auto& payloads = description.capabilities.payloads;
  return std::find(payloads.begin(), payloads.end(), PayloadKind::kProject) != payloads.end();
}

std::string Printable(std::string_view bytes, size_t limit = 3000) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < limit; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '\n' || (c >= 0x20 && c < 0x7f)) {
      out += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    }
  }
  if (bytes.size() > limit) out += "... (" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

std::string Summary(const Result& result) {
  std::ostringstream out;
  out << "outcome " << (result.outcome ? ProjectOutcomeName(*result.outcome) : "(none)")
      << ", exit " << result.exit_code << (result.timed_out ? ", timed out" : "") << ", "
      << result.duration_ms << " ms, " << result.steps.size() << " step(s)\n";
  for (const StepResult& step : result.steps) {
    out << "  step";
    for (const auto& arg : step.command) out << ' ' << Printable(arg, 60);
    out << ": exit " << step.exit_code << (step.timed_out ? " (timed out)" : "") << ", "
        << step.duration_ms << " ms\n  stdout" << (step.stdout_truncated ? " (truncated)" : "")
        << ": " << Printable(step.stdout_bytes) << "\n  stderr"
        << (step.stderr_truncated ? " (truncated)" : "") << ": " << Printable(step.stderr_bytes)
        << "\n";
  }
  if (result.steps.empty()) {  // e.g. the whole sandbox was killed: the provider's own words
    out << "  stdout: " << Printable(result.stdout_bytes)
        << "\n  stderr: " << Printable(result.stderr_bytes) << "\n";
  }
  for (const Artifact& artifact : result.artifacts) {
    out << "  artifact " << artifact.path << ": " << artifact.content.size() << " bytes"
        << (artifact.truncated ? " (truncated)" : "") << "\n";
  }
  return out.str();
}

void ExpectNoTokenProcesses() {
  const std::string& token = Host().token;
  std::vector<std::string> carriers;
  auto give_up = std::chrono::steady_clock::now() + 2s;
  for (;;) {
    carriers = HostProcessesCarrying(token);
    if (carriers.empty() || std::chrono::steady_clock::now() > give_up) break;
    std::this_thread::sleep_for(50ms);
  }
  std::string list;
  for (const auto& carrier : carriers) list += "\n  " + carrier;
  EXPECT_TRUE(carriers.empty()) << "guest processes outlived their run by more than 2 s:" << list;
}

void ExpectSecretUnchanged() {
  const HostFixtures& host = Host();
  EXPECT_EQ(ReadWholeFile(host.secret_path), host.secret_content)
      << "the host's secret file changed: " << host.secret_path;
  std::vector<std::string> entries;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(host.secret_dir, error)) {
    entries.push_back(entry.path().filename().string());
  }
  std::sort(entries.begin(), entries.end());
  std::vector<std::string> expected = {"secret.txt"};
  if (!host.unix_path.empty() && std::filesystem::exists(host.unix_path))
    expected = {"host.sock", "secret.txt"};
  EXPECT_EQ(entries, expected) << "something appeared in the host directory " << host.secret_dir;
}

// After an attack, the provider must still run a trivial project. Behind
// an OS-level wall that shares the host kernel it is asked after every
// attack. Under microvm every run boots a VM of its own (~3 s of a core
// under TCG), so no attack can leave the next run's guest damaged; what one
// could damage is host-side (the jail, uid leases, the state directory),
// which every following attack's own run goes through again: there the
// trivial project runs after every fourth attack.
void ExpectHealthy(Sandbox& sandbox) {
  if (sandbox.Describe().provider == "microvm") {
    static std::atomic<int> attacks{0};
    if (++attacks % 4 != 0) return;
  }
  Request request;
  request.project = ProjectPayload{{}, {{"python3", "-c", "print('healthy')"}}, {}};
  auto result = sandbox.Run(request);
  ASSERT_TRUE(result.ok()) << "the provider no longer runs a trivial project: "
                           << result.error().ToString();
  EXPECT_EQ(result->exit_code, 0) << Summary(*result);
  EXPECT_EQ(result->stdout_bytes, "healthy\n") << Summary(*result);
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

}  // namespace

std::vector<std::string> ProvidersUnderTest() {
  return testing::ProvidersUnderTest(
      {"PLIMSOLL_HOSTILE_PROVIDERS", "PLIMSOLL_CONFORMANCE_PROVIDERS"});
}

const HostFixtures& Host() {
  HostState& state = State();
  std::lock_guard lock(state.mutex);
  if (!state.fixtures) state.fixtures = MakeFixtures(&state.listeners);
  return *state.fixtures;
}

void DestroyHost() {
  HostState& state = State();
  std::lock_guard lock(state.mutex);
  if (!state.fixtures) return;
  for (int fd : {state.listeners.tcp, state.listeners.tcp6, state.listeners.udp,
                 state.listeners.abstract, state.listeners.unix_path}) {
    if (fd >= 0) close(fd);
  }
  state.listeners = Listeners{};
  if (state.fixtures->marker_pid > 0) {
    kill(state.fixtures->marker_pid, SIGKILL);
    waitpid(state.fixtures->marker_pid, nullptr, 0);
  }
  std::error_code error;
  std::filesystem::remove_all(state.fixtures->secret_dir, error);
  state.fixtures.reset();
}

std::string Substitute(std::string text) {
  const HostFixtures& host = Host();
  const std::pair<std::string, std::string> replacements[] = {
      {"{TOKEN}", host.token},
      {"{HOST_MARKER}", host.host_marker},
      {"{HOST_PID}", std::to_string(host.marker_pid)},
      {"{SECRET_PATH}", host.secret_path},
      {"{SECRET}", host.secret_content.substr(0, host.secret_content.size() - 1)},
      {"{TCP_PORT}", std::to_string(host.tcp_port)},
      {"{TCP6_PORT}", std::to_string(host.tcp6_port)},
      {"{UDP_PORT}", std::to_string(host.udp_port)},
      {"{ABSTRACT}", host.abstract_name},
      {"{UNIX_PATH}", host.unix_path},
  };
  for (const auto& [from, to] : replacements) {
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

std::vector<std::string> DrainListeners() {
  Host();
  HostState& state = State();
  std::lock_guard lock(state.mutex);
  std::vector<std::string> reached;
  const std::pair<const char*, int> stream_listeners[] = {
      {"tcp 127.0.0.1", state.listeners.tcp},
      {"tcp [::1]", state.listeners.tcp6},
      {"abstract unix", state.listeners.abstract},
      {"unix path", state.listeners.unix_path}};
  for (const auto& [name, fd] : stream_listeners) {
    if (fd < 0) continue;
    for (int accepted; (accepted = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
      reached.push_back(name);
      close(accepted);
    }
  }
  if (state.listeners.udp >= 0) {
    char buffer[2048];
    while (recv(state.listeners.udp, buffer, sizeof(buffer), MSG_DONTWAIT) >= 0) {
      reached.push_back("udp 127.0.0.1");
    }
  }
  return reached;
}

std::vector<std::string> HostProcessesCarrying(const std::string& needle) {
  std::vector<std::string> carriers;
  std::error_code error;
  const std::string self = std::to_string(getpid());
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    std::string pid = entry.path().filename().string();
    if (pid.empty() || !std::all_of(pid.begin(), pid.end(), ::isdigit) || pid == self) continue;
    std::string cmdline = ReadWholeFile("/proc/" + pid + "/cmdline");
    std::string environ = ReadWholeFile("/proc/" + pid + "/environ");
    std::string comm = ReadWholeFile("/proc/" + pid + "/comm");
    if (cmdline.find(needle) == std::string::npos && environ.find(needle) == std::string::npos &&
        comm.find(needle) == std::string::npos) {
      continue;
    }
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    carriers.push_back(pid + " " + Printable(cmdline, 200));
  }
  return carriers;
}

void CloseAllSandboxes() {
  Registry& registry = Sandboxes();
  std::map<std::string, OpenedSandbox> closing;
  {
    std::lock_guard lock(registry.mutex);
    registry.closed = true;
    closing.swap(registry.opened);
  }
  closing.clear();  // destroys the sandboxes outside the lock
}

std::string Literal(const std::string& text) {
  static const std::string kSpecial = R"(\^$.|?*+()[]{})";
  std::string out;
  for (char c : text) {
    if (kSpecial.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

bool UnderGvisor(const Description& description) {
  for (const auto& [key, value] : description.details) {
    if (key == "runtime" && value == "runsc") return true;
  }
  return false;
}

bool UnderMicrovm(const Description& description) {
  return description.provider == "microvm";
}

bool UnderSoftwareEmulation(const Description& description) {
  return UnderMicrovm(description) && description.tier != Tier::kVm;
}

std::string Denied(const std::string& label, const std::string& errnos) {
  return Literal(label) + ": (" + errnos + ")";
}

Sandbox* OpenOsLevelSandbox(const std::string& provider, std::string* skip_reason, bool* fail) {
  Registry& registry = Sandboxes();
  std::lock_guard lock(registry.mutex);
  if (registry.closed) {
    *skip_reason = "skipped: the suite already closed its sandboxes";
    return nullptr;
  }
  auto it = registry.opened.find(provider);
  if (it == registry.opened.end()) {
    OpenedSandbox entry;
    auto sandbox = Sandbox::Open(provider);
    if (!sandbox.ok()) {
      testing::HostVerdict verdict = testing::JudgeUnavailable(provider, sandbox.error().message());
      entry.skip_reason = verdict.message;
      entry.fail = verdict.fail;
    } else if (Description description = sandbox->Describe(); !AcceptsProjects(description)) {
      entry.skip_reason = "skipped: provider " + provider + " is not OS-level (tier " +
                          std::string(TierName(description.tier)) +
                          ", no project payloads): there is no operating-system wall to attack";
    } else {
      entry.sandbox = std::make_unique<Sandbox>(std::move(*sandbox));
      auto evidence = entry.sandbox->CollectEvidence();
      if (!evidence.ok()) {
        testing::HostVerdict verdict = testing::JudgeUnavailable(
            provider, "its evidence could not be collected: " + evidence.error().message());
        entry.skip_reason = verdict.message;
        entry.fail = verdict.fail;
        entry.sandbox.reset();
      }
    }
    it = registry.opened.emplace(provider, std::move(entry)).first;
  }
  *skip_reason = it->second.skip_reason;
  if (fail != nullptr) *fail = it->second.fail;
  return it->second.sandbox.get();
}

Result RunHostileProject(Sandbox& sandbox, const ProjectPayload& project, int64_t timeout_ms) {
  Request request;
  request.timeout_ms = timeout_ms;
  request.project = project;
  // A result's duration includes a cold start (seconds for a TCG VM), and
  // several verdicts time the run: start it on a warm sandbox.
  if (std::string why = testing::AwaitWarmSandbox(sandbox); !why.empty()) ADD_FAILURE() << why;
  auto start = std::chrono::steady_clock::now();
  auto result = sandbox.Run(request);
  auto elapsed = std::chrono::steady_clock::now() - start;
  if (!result.ok()) {
    ADD_FAILURE() << "the run was refused or failed: " << result.error().ToString();
    return Result{};
  }
  EXPECT_TRUE(CheckExchange(request, *result).ok()) << "the record does not match the exchange";
  EXPECT_EQ(result->kind, PayloadKind::kProject);
  EXPECT_LE(elapsed, std::chrono::milliseconds(timeout_ms) + 10s)
      << "the run outlived its budget of " << timeout_ms << " ms by more than 10 s";
  ExpectNoTokenProcesses();
  ExpectSecretUnchanged();
  std::vector<std::string> reached = DrainListeners();
  EXPECT_TRUE(reached.empty()) << "the guest reached a host listener: " << reached.front();
  ExpectHealthy(sandbox);
  return *result;
}

void HostileTest::SetUp() {
  std::string reason;
  bool fail = false;
  sandbox_ = OpenOsLevelSandbox(GetParam(), &reason, &fail);
  if (sandbox_ == nullptr) {
    if (fail) GTEST_FAIL() << reason;
    GTEST_SKIP() << reason;
  }
  description_ = sandbox_->Describe();
  Host();
}

Result HostileTest::RunProject(const ProjectPayload& project, int64_t timeout_ms) {
  return RunHostileProject(*sandbox_, project, timeout_ms);
}

void ProgramTest::SetUp() {
  // PLIMSOLL_HOSTILE_DUMP=<dir> writes each program's files to <dir>/<name>/
  // (to try one by hand), whether or not a provider can run it.
  if (const char* dump = std::getenv("PLIMSOLL_HOSTILE_DUMP"); dump != nullptr && *dump != '\0') {
    const Program& program = std::get<1>(GetParam());
    std::filesystem::path directory = std::filesystem::path(dump) / program.name;
    std::filesystem::create_directories(directory);
    std::vector<ProjectFile> files = {{"hostile.py", kHelperModule}};
    if (!program.script.empty()) files.push_back({"probe.py", program.script});
    files.insert(files.end(), program.files.begin(), program.files.end());
    for (const ProjectFile& file : files) {
      std::ofstream(directory / file.path, std::ios::binary) << Substitute(file.content);
    }
  }
  std::string reason;
  bool fail = false;
  sandbox_ = OpenOsLevelSandbox(std::get<0>(GetParam()), &reason, &fail);
  if (sandbox_ == nullptr) {
    if (fail) GTEST_FAIL() << reason;
    GTEST_SKIP() << reason;
  }
  description_ = sandbox_->Describe();
  Host();
}

void PrintTo(const Program& program, std::ostream* out) {
  *out << program.name;
}

// Whether the guest image of `sandbox` has `program` on PATH (asked once per
// provider and program).
bool GuestHas(Sandbox& sandbox, const std::string& provider, const std::string& program) {
  static std::mutex mutex;
  static std::map<std::string, bool> known;
  std::lock_guard lock(mutex);
  auto it = known.find(provider + "/" + program);
  if (it != known.end()) return it->second;
  Request request;
  request.project = ProjectPayload{{}, {{"/bin/sh", "-c", "command -v \"$0\"", program}}, {}};
  auto result = sandbox.Run(request);
  bool has = result.ok() && result->exit_code == 0;
  known.emplace(provider + "/" + program, has);
  return has;
}

std::string ProgramTestName(const ::testing::TestParamInfo<ProgramTest::ParamType>& info) {
  // Test names take [A-Za-z0-9_] only: "oci:runsc" -> "oci_runsc".
  std::string provider = std::get<0>(info.param);
  for (char& c : provider) {
    if (c == ':') c = '_';
  }
  return provider + "_" + std::get<1>(info.param).name;
}

TEST_P(ProgramTest, GetsItsVerdict) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "skipped: the programs use x86-64 system call numbers";
#endif
  const Program& program = std::get<1>(GetParam());
  for (const std::string& needed : program.needs) {
    // The guest image carries what SPEC §7 promises (node, python3): one
    // without is a broken image, and a skip would hide the program's verdict.
    ASSERT_TRUE(GuestHas(*sandbox_, std::get<0>(GetParam()), needed))
        << "the guest image of provider " << std::get<0>(GetParam()) << " has no " << needed
        << " on PATH (SPEC §7 says it has)";
  }
  ProjectPayload project;
  project.files.push_back({"hostile.py", Substitute(kHelperModule)});
  if (!program.script.empty()) project.files.push_back({"probe.py", Substitute(program.script)});
  for (const ProjectFile& file : program.files) {
    project.files.push_back({file.path, Substitute(file.content)});
  }
  if (program.steps.empty()) {
    project.steps = {{"python3", "probe.py", Host().token}};
  } else {
    for (const auto& step : program.steps) {
      std::vector<std::string> argv;
      for (const auto& arg : step) argv.push_back(Substitute(arg));
      project.steps.push_back(std::move(argv));
    }
  }
  project.artifacts = program.artifacts;

  Result result = RunHostileProject(*sandbox_, project, program.timeout_ms);
  // The verdict that applies here: the program's own, or the one for this
  // provider's wall.
  DifferentVerdict verdict{.outcome = program.outcome,
                           .exit_code = program.exit_code,
                           .step_count = program.step_count,
                           .stdout_lines = program.stdout_lines,
                           .check = program.check};
  std::string trace = "verdict: " + Substitute(program.verdict);
  if (program.under_gvisor && UnderGvisor(description_)) {
    verdict = *program.under_gvisor;
    trace += "\nunder gVisor: " + Substitute(verdict.difference);
  }
  if (program.under_microvm && UnderMicrovm(description_)) {
    verdict = *program.under_microvm;
    trace += "\nunder microvm: " + Substitute(verdict.difference);
  }
  SCOPED_TRACE(trace + "\nresult: " + Summary(result));
  if (verdict.outcome) {
    ASSERT_TRUE(result.outcome.has_value());
    EXPECT_EQ(ProjectOutcomeName(*result.outcome), ProjectOutcomeName(*verdict.outcome));
  }
  if (verdict.exit_code) {
    EXPECT_EQ(result.exit_code, *verdict.exit_code);
  }
  if (verdict.step_count) {
    EXPECT_EQ(result.steps.size(), *verdict.step_count);
  }
  if (!verdict.stdout_lines.empty()) {
    std::string all_stdout;
    for (const StepResult& step : result.steps) all_stdout += step.stdout_bytes;
    std::vector<std::string> lines = SplitLines(all_stdout);
    for (size_t i = 0; i < std::max(lines.size(), verdict.stdout_lines.size()); ++i) {
      if (i >= lines.size()) {
        ADD_FAILURE() << "missing stdout line " << i + 1 << ", expected /"
                      << verdict.stdout_lines[i] << "/";
      } else if (i >= verdict.stdout_lines.size()) {
        ADD_FAILURE() << "unexpected stdout line " << i + 1 << ": " << Printable(lines[i]);
      } else {
        EXPECT_TRUE(std::regex_match(lines[i], std::regex(verdict.stdout_lines[i])))
            << "stdout line " << i + 1 << ": " << Printable(lines[i]) << "\n  expected /"
            << verdict.stdout_lines[i] << "/";
      }
    }
  }
  if (verdict.check) verdict.check(result, description_);
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ProgramTest);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HostileTest);

const char* const kHelperModule =
    R"py("""Helpers every hostile program imports (tests/hostile/hostile.h)."""
import ctypes
import errno
import os
import sys

TOKEN = "{TOKEN}"
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def errname(number):
    return errno.errorcode.get(number, str(number))


def _argument(value):
    if isinstance(value, bool) or value is None:
        return ctypes.c_long(int(bool(value)))
    if isinstance(value, int):
        return ctypes.c_long(value)
    return value


def syscall(number, *args):
    """The raw system call; raises OSError the way os.* functions do."""
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), *[_argument(a) for a in args])
    if result == -1:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def attempt(label, function):
    """Runs function(); prints '<label>: ok' or '<label>: <ERRNO NAME>'."""
    try:
        value = function()
    except OSError as error:
        print(f"{label}: {errname(error.errno)}", flush=True)
        return None
    print(f"{label}: ok", flush=True)
    return value


def other_pids():
    """The process IDs this program can see in /proc, except its own."""
    me = os.getpid()
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me)


def read(path, limit=1 << 20):
    with open(path, "rb") as f:
        return f.read(limit)


def interfaces():
    """The network interfaces this program can see (/proc/net/dev), sorted."""
    with open("/proc/net/dev") as f:
        return " ".join(sorted(line.split(":")[0].strip() for line in f.readlines()[2:]))


def way_out(family, kind, proto=0):
    """Tries to leave the sandbox through a new socket(family, kind, proto):
    connects (streams) or sends an ICMP-echo-shaped datagram to a documentation
    address outside any sandbox (192.0.2.1 or 2001:db8::1, port 9). For runtimes
    whose own kernel hands out inet sockets (gVisor's netstack)."""
    import socket
    s = socket.socket(family, kind, proto)
    s.settimeout(2)
    address = ("2001:db8::1", 9) if family == socket.AF_INET6 else ("192.0.2.1", 9)
    try:
        if kind == socket.SOCK_STREAM:
            s.connect(address)
        else:
            s.sendto(b"\x08\0\0\0\0\0\0\0", address)
    finally:
        s.close()
)py";

}  // namespace plimsoll::hostile
