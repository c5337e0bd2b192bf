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
// "qjs: stdout truncated at N bytes".
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "engine/engine.h"

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

int Usage(const char* message) {
  std::fprintf(stderr,
               "qjs: %s\nusage: qjs [--timeout-ms N] [--memory-bytes N] "
               "[--output-cap N] [FILE | -]\n",
               message);
  return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
  plimsoll::engine::Limits limits;
  limits.output_cap_bytes = size_t{16} << 20;
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

  std::string code;
  int fd = path == "-" ? STDIN_FILENO : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || !ReadAll(fd, code)) {
    std::fprintf(stderr, "qjs: cannot read %s: %s\n", path.c_str(), std::strerror(errno));
    return kUsageError;
  }
  if (fd != STDIN_FILENO) close(fd);

  limits.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto outcome = plimsoll::engine::EvaluateJavascript(code, limits);
  if (!outcome.ok()) {
    std::fprintf(stderr, "qjs: %s\n", outcome.error().ToString().c_str());
    return outcome.error().not_dispatched() ? kUsageError : kEngineError;
  }
  WriteAll(STDOUT_FILENO, outcome->stdout_bytes);
  WriteAll(STDERR_FILENO, outcome->stderr_bytes);
  for (int stream = 0; stream < 2; stream++) {
    bool truncated = stream == 0 ? outcome->stdout_truncated : outcome->stderr_truncated;
    if (truncated) {
      std::string note = std::string("qjs: ") + (stream == 0 ? "stdout" : "stderr") +
                         " truncated at " + std::to_string(limits.output_cap_bytes) + " bytes\n";
      WriteAll(STDERR_FILENO, note);
    }
  }
  return outcome->exit_code;
}
