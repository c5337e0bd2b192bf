// qjs: runs one JavaScript snippet through the embedded engine (the same
// wasm module, generated C and host shim as the `embedded` provider), so the
// guest image gives the same bytes as the process tier.
//
//   qjs [--timeout-ms N] [--memory-bytes N] [--output-cap N] [FILE | -]
//
// Reads the script from FILE, or stdin when FILE is absent or "-". Writes the
// captured stdout and stderr to its own, exits with the run's exit code
// (0, 1, 124 timeout, 137 out of memory; 2 for usage errors, 70 when the
// engine itself cannot run). A truncated stream is followed, on stderr, by
// "qjs: stdout truncated at N bytes". What display() showed is written to
// $PLIMSOLL_DISPLAYS (the guest agent's displays directory) when it is set.
//
//   qjs --repl-server [--memory-bytes N] [--output-cap N] [--value-cap N]
//
// A session's kept JavaScript interpreter (src/guest/agent/kept_interpreter.h
// has the protocol): one engine::JavascriptSession serving cells read as
// frames on fd 3 and answered on fd 4 (a 4-byte big-endian length, then
// JSON), each cell's stdout and stderr written to fd 1 and 2 before its
// answer. A request is {code, cell, timeout_ms, value_cap_bytes?,
// memory_bytes?} (the caps come from the command line; the agent sends the
// same ones); an answer {exit_code, value?, value_truncated,
// interpreter_started, state_kept}. EOF at a frame boundary: exit 0; a
// malformed frame: one line on stderr, exit 3.
//
//   qjs --controller FILE [--memory-bytes N] [--tick-timeout-ms N] [--load-timeout-ms N]
//
// An exam controller (docs/exams.md): FILE defines `function control(...state)`
// (engine/controller.h). Then, for each line on stdin (the plant's state,
// numbers separated by spaces), control is called and its answer written to
// stdout as one line, at once (unbuffered). What control prints goes to
// stderr, so it never mixes with the answers. EOF on stdin: exit 0. The
// script's load fails: exit 1 (2 for usage errors and an unreadable FILE).
// control throws: exit 1; runs past --tick-timeout-ms (default 2000, the
// runner's deadline): exit 124; a state line that is not numbers: exit 3.
// No limit on the number of ticks or on the whole run: the runner has them.
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/working_memory.h"
#include "engine/controller.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "engine/socket_host_call.h"
#include "guest/host_calls.h"

namespace {

constexpr int kUsageError = 2;
constexpr int kEngineError = 70;  // EX_SOFTWARE

bool ParseSize(std::string_view text, size_t& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(written));
  }
}

// Reads all of fd; false on a read error.
bool ReadAll(int fd, std::string& out) {
  char buffer[65536];
  for (;;) {
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got == 0) return true;
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    out.append(buffer, static_cast<size_t>(got));
  }
}

// The displays of a run or a cell as files in $PLIMSOLL_DISPLAYS, the
// directory the guest agent reads (src/guest/displays.h): each written under
// a dot-name, then renamed into place, named so that they sort in the order
// shown; an empty "truncated" when the engine dropped some. Nothing without
// the variable (qjs outside a sandbox). A display that cannot be written is
// lost; the run is not.
void WriteDisplays(const std::vector<plimsoll::Display>& displays, bool truncated) {
  const char* directory = std::getenv("PLIMSOLL_DISPLAYS");
  if (directory == nullptr || *directory == '\0') return;
  static unsigned sequence = 0;  // per process: a session's cells continue it
  auto write_file = [&](const std::string& name, std::string_view bytes) {
    std::string partial = std::string(directory) + "/." + name;
    int fd = open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return;
    WriteAll(fd, bytes);
    close(fd);
    if (rename(partial.c_str(), (std::string(directory) + "/" + name).c_str()) != 0) {
      unlink(partial.c_str());
    }
  };
  for (const plimsoll::Display& display : displays) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    char name[64];
    std::snprintf(name, sizeof name, "%020lld-%07d-%06u",
                  static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec,
                  static_cast<int>(getpid()), ++sequence);
    write_file(name, display.mime + "\n" + display.data);
  }
  if (truncated) write_file("truncated", "");
}

int Usage(const char* message) {
  std::fprintf(stderr,
               "qjs: %s\nusage: qjs [--timeout-ms N] [--memory-bytes N] "
               "[--output-cap N] [FILE | -]\n",
               message);
  return kUsageError;
}

constexpr int kProtocolError = 3;
constexpr size_t kMaxRequestBytes = size_t{16} << 20;

// Reads exactly `size` bytes; false at EOF before any byte (`*clean`) or inside.
bool ReadExactly(int fd, char* data, size_t size, bool* clean) {
  size_t got = 0;
  *clean = false;
  while (got < size) {
    ssize_t n = read(fd, data + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *clean = got == 0;
      return false;
    }
    got += static_cast<size_t>(n);
  }
  return true;
}

int ProtocolFailure(const std::string& why) {
  std::fprintf(stderr, "qjs --repl-server: %s\n", why.c_str());
  return kProtocolError;
}

int ServeRepl(const plimsoll::engine::SessionLimits& limits) {
  // The channel moves out of reach first (as python_repl.py does).
  int requests = fcntl(3, F_DUPFD_CLOEXEC, 100);
  int answers = fcntl(4, F_DUPFD_CLOEXEC, 100);
  if (requests < 0 || answers < 0) return ProtocolFailure("fds 3 and 4 must be open");
  close(3);
  close(4);
  auto session = plimsoll::engine::JavascriptSession::Start(limits);
  if (!session.ok()) return ProtocolFailure(session.error().ToString());
  for (;;) {
    unsigned char header[4];
    bool clean = false;
    if (!ReadExactly(requests, reinterpret_cast<char*>(header), 4, &clean)) {
      return clean ? 0 : ProtocolFailure("the request channel ended inside a frame");
    }
    size_t length = size_t{header[0]} << 24 | size_t{header[1]} << 16 | size_t{header[2]} << 8 |
                    size_t{header[3]};
    if (length > kMaxRequestBytes) return ProtocolFailure("a request frame is over 16 MiB");
    std::string body(length, '\0');
    if (!ReadExactly(requests, body.data(), length, &clean)) {
      return ProtocolFailure("the request channel ended inside a frame");
    }
    nlohmann::json request = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!request.is_object() || !request.contains("code") || !request["code"].is_string() ||
        !request.contains("timeout_ms") || !request["timeout_ms"].is_number_unsigned()) {
      return ProtocolFailure("a request is {code, timeout_ms, ...}");
    }
    for (const auto& [key, value] : request.items()) {
      if (key != "code" && key != "cell" && key != "timeout_ms" && key != "value_cap_bytes" &&
          key != "memory_bytes") {
        return ProtocolFailure("a request has the unknown field " + key);
      }
    }
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(request["timeout_ms"].get<uint64_t>());
    // A granted call: the agent's relay listens for this cell only (a kept
    // reference to host.* in a later cell without a grant finds no socket).
    plimsoll::engine::HostCallHandler host_call;
    if (access(plimsoll::guest::kHostCallSocket, F_OK) == 0) {
      host_call = plimsoll::engine::SocketHostCall(plimsoll::guest::kHostCallSocket, deadline);
    }
    auto cell = (*session)->RunCell(request["code"].get<std::string>(), deadline, &host_call);
    nlohmann::json answer;
    if (!cell.ok()) {
      // Nothing of the cell ran (a cell above the memory limit, no instance).
      std::string message = "qjs: " + cell.error().message() + "\n";
      WriteAll(STDERR_FILENO, message);
      answer = {{"exit_code", 1},
                {"value_truncated", false},
                {"interpreter_started", false},
                {"state_kept", (*session)->interpreter_alive()}};
    } else {
      WriteAll(STDOUT_FILENO, cell->outcome.stdout_bytes);
      WriteAll(STDERR_FILENO, cell->outcome.stderr_bytes);
      WriteDisplays(cell->outcome.displays, cell->outcome.displays_truncated);
      answer = {{"exit_code", cell->outcome.exit_code},
                {"value_truncated", cell->value_truncated},
                {"interpreter_started", cell->interpreter_started},
                {"state_kept", cell->state_kept}};
      if (cell->value) answer["value"] = *cell->value;
    }
    std::string bytes = answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    unsigned char out_header[4] = {static_cast<unsigned char>(bytes.size() >> 24),
                                   static_cast<unsigned char>(bytes.size() >> 16),
                                   static_cast<unsigned char>(bytes.size() >> 8),
                                   static_cast<unsigned char>(bytes.size())};
    WriteAll(answers, std::string_view(reinterpret_cast<char*>(out_header), 4));
    WriteAll(answers, bytes);
  }
}

constexpr size_t kMaxStateLineBytes = 64 * 1024;

int ControllerFailure(int exit_code, const std::string& why) {
  WriteAll(STDERR_FILENO, "qjs --controller: " + why + "\n");
  return exit_code;
}

// Splits a state line into numbers (from_chars: also "nan", "inf").
bool ParseState(std::string_view line, std::vector<double>& state) {
  state.clear();
  while (!line.empty()) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    double value = 0;
    const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (error != std::errc()) return false;
    state.push_back(value);
    line.remove_prefix(static_cast<size_t>(end - line.data()));
    if (!line.empty() && line.front() != ' ' && line.front() != '\t' && line.front() != '\r')
      return false;
  }
  return !state.empty();
}

int ServeController(int argc, char** argv) {
  plimsoll::engine::SessionLimits limits;
  size_t tick_timeout_ms = 2000;
  size_t load_timeout_ms = 10000;
  std::string path;
  for (int i = 2; i < argc; i++) {
    std::string_view argument = argv[i];
    size_t* target = argument == "--memory-bytes"      ? &limits.memory_bytes
                     : argument == "--tick-timeout-ms" ? &tick_timeout_ms
                     : argument == "--load-timeout-ms" ? &load_timeout_ms
                                                       : nullptr;
    if (target != nullptr) {
      if (i + 1 >= argc || !ParseSize(argv[++i], *target))
        return Usage("a --controller option needs a number");
    } else if (path.empty() && !(argument.size() > 1 && argument[0] == '-')) {
      path = std::string(argument);
    } else {
      return Usage(
          "--controller takes FILE [--memory-bytes N] [--tick-timeout-ms N] [--load-timeout-ms N]");
    }
  }
  if (path.empty()) return Usage("--controller needs the controller's FILE");
  std::string script;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || !ReadAll(fd, script)) {
    std::fprintf(stderr, "qjs: cannot read %s: %s\n", path.c_str(), std::strerror(errno));
    return kUsageError;
  }
  close(fd);
  using Clock = std::chrono::steady_clock;
  auto controller = plimsoll::engine::JavascriptController::Load(
      script, limits, Clock::now() + std::chrono::milliseconds(load_timeout_ms));
  if (!controller.ok()) return ControllerFailure(1, controller.error().message());

  std::string pending;
  std::vector<double> state;
  char buffer[4096];
  for (;;) {
    size_t newline;
    while ((newline = pending.find('\n')) == std::string::npos) {
      if (pending.size() > kMaxStateLineBytes)
        return ControllerFailure(3, "a state line is over 64 KiB");
      const ssize_t got = read(STDIN_FILENO, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0)
        return ControllerFailure(3, std::string("reading stdin: ") + std::strerror(errno));
      if (got == 0) return 0;  // the runner is done (an unterminated tail is no state)
      pending.append(buffer, static_cast<size_t>(got));
    }
    const std::string line = pending.substr(0, newline);
    pending.erase(0, newline + 1);
    if (!ParseState(line, state))
      return ControllerFailure(3, "the state line \"" + line.substr(0, 200) + "\" is not numbers");
    std::string printed;
    auto answer =
        (*controller)
            ->Answer(state, Clock::now() + std::chrono::milliseconds(tick_timeout_ms), &printed);
    WriteAll(STDERR_FILENO, printed);
    if (!answer.ok()) {
      return ControllerFailure(
          answer.error().code() == plimsoll::ErrorCode::kDeadlineExceeded ? 124 : 1,
          answer.error().message());
    }
    WriteAll(STDOUT_FILENO, *answer + "\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "--controller") return ServeController(argc, argv);
  if (argc >= 2 && std::string_view(argv[1]) == "--repl-server") {
    plimsoll::engine::SessionLimits limits;
    for (int i = 2; i < argc; i++) {
      std::string_view argument = argv[i];
      size_t* target = argument == "--memory-bytes" ? &limits.memory_bytes
                       : argument == "--output-cap" ? &limits.output_cap_bytes
                       : argument == "--value-cap"  ? &limits.value_cap_bytes
                                                    : nullptr;
      if (target == nullptr || i + 1 >= argc || !ParseSize(argv[++i], *target)) {
        return Usage("--repl-server takes --memory-bytes, --output-cap and --value-cap N");
      }
    }
    return ServeRepl(limits);
  }
  plimsoll::engine::Limits limits;
  limits.output_cap_bytes = size_t{16} << 20;
  // One run per process: making the snapshot would cost more than it saves.
  limits.from_snapshot = false;
  size_t timeout_ms = static_cast<size_t>(plimsoll::engine::kDefaultTimeout.count());
  std::string path = "-";
  for (int i = 1; i < argc; i++) {
    std::string_view argument = argv[i];
    auto value = [&](size_t& out) {
      if (i + 1 >= argc) return false;
      return ParseSize(argv[++i], out);
    };
    if (argument == "--timeout-ms") {
      if (!value(timeout_ms)) return Usage("--timeout-ms needs a number");
    } else if (argument == "--memory-bytes") {
      if (!value(limits.memory_bytes)) return Usage("--memory-bytes needs a number");
    } else if (argument == "--output-cap") {
      if (!value(limits.output_cap_bytes)) return Usage("--output-cap needs a number");
    } else if (argument == "--help" || argument == "-h") {
      Usage("runs a JavaScript snippet in plimsoll's embedded engine");
      return 0;
    } else if (argument.size() > 1 && argument[0] == '-') {
      return Usage("unknown option");
    } else {
      path = std::string(argument);
    }
  }

  // A granted run: the agent's relay listens (guest/host_calls.h) from
  // before the step starts; without it, host.call throws "no_grant" as in
  // the embedded engine. Asked now, not after the script: a prestarted qjs
  // (which serves no granted run: prestart.h) makes the lookup while it
  // waits, and under gVisor it goes to the image's file system.
  const bool granted = access(plimsoll::guest::kHostCallSocket, F_OK) == 0;

  // A script from stdin may be a while coming (a pooled sandbox's qjs is
  // started before its job): the instance is made and QuickJS initialised
  // while waiting, so that work and its page faults are off the run's path.
  // Without it (it failed), the run makes its own instance as usual.
  std::unique_ptr<plimsoll::engine::PreparedInstance> prepared;
  if (path == "-") {
    auto made = plimsoll::engine::PreparedInstance::Prepare(limits);
    if (made.ok()) prepared = std::move(*made);
    // While the script has not come yet (a prestarted qjs): the script's and
    // the outcome's heap blocks and the 64 KiB read buffer below
    // (base/working_memory.h). A script already waiting on stdin would only
    // wait for this.
    pollfd input{STDIN_FILENO, POLLIN, 0};
    if (poll(&input, 1, 0) == 0) {
      plimsoll::PrefaultWorkingMemory(size_t{1} << 20, size_t{128} << 10);
    }
  }

  std::string code;
  int fd = path == "-" ? STDIN_FILENO : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || !ReadAll(fd, code)) {
    std::fprintf(stderr, "qjs: cannot read %s: %s\n", path.c_str(), std::strerror(errno));
    return kUsageError;
  }
  if (fd != STDIN_FILENO) close(fd);

  limits.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  if (granted) {
    limits.host_call =
        plimsoll::engine::SocketHostCall(plimsoll::guest::kHostCallSocket, limits.deadline);
  }
  auto outcome = prepared != nullptr ? prepared->Run(code, limits)
                                     : plimsoll::engine::EvaluateJavascript(code, limits);
  if (!outcome.ok()) {
    std::fprintf(stderr, "qjs: %s\n", outcome.error().ToString().c_str());
    return outcome.error().not_dispatched() ? kUsageError : kEngineError;
  }
  WriteAll(STDOUT_FILENO, outcome->stdout_bytes);
  WriteAll(STDERR_FILENO, outcome->stderr_bytes);
  WriteDisplays(outcome->displays, outcome->displays_truncated);
  for (int stream = 0; stream < 2; stream++) {
    bool truncated = stream == 0 ? outcome->stdout_truncated : outcome->stderr_truncated;
    if (truncated) {
      std::string note = std::string("qjs: ") + (stream == 0 ? "stdout" : "stderr") +
                         " truncated at " + std::to_string(limits.output_cap_bytes) + " bytes\n";
      WriteAll(STDERR_FILENO, note);
    }
  }
  // Everything left is memory and timers the exit releases anyway: the
  // instance's reservation, this thread's alternate signal stack and
  // deadline timer. Under gVisor each release is a system call the run
  // would wait for (the agent reaps the step before it reports), so the
  // process leaves at once; nothing is buffered (every write above is
  // write(2), stderr is unbuffered).
  _exit(outcome->exit_code);
}
