#include "guest/agent/kept_interpreter.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "guest/agent/reaper.h"
#include "wire/json_reader.h"

namespace plimsoll::guest::agent {
namespace {

using Clock = std::chrono::steady_clock;

// An answer is a few fields around the value; JSON escapes a byte into at
// most 6 (\u00XX), so this bounds an honest one with room to spare.
size_t MaxAnswerBytes(int64_t value_cap_bytes) {
  return static_cast<size_t>(value_cap_bytes) * 6 + 4096;
}

// How long a stopped or killed server gets to show it (a SIGSTOP or SIGKILL
// takes effect within microseconds unless the process is in the kernel).
constexpr auto kSignalSettle = std::chrono::milliseconds(200);

int64_t Milliseconds(Clock::duration duration) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
}

int64_t ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitCannotExecute;
}

// Whether the server has ended, reaping it. A sweep's reaping of every
// child (reaper.h) may have taken its status already: ECHILD says so too.
// Only an exit or a death counts: gVisor's wait reports a stopped child
// even without WUNTRACED.
bool Exited(pid_t pid, int* status) {
  pid_t got = waitpid(pid, status, WNOHANG | __WALL);
  if (got < 0 && errno == ECHILD) {
    *status = 0;
    return true;
  }
  return got == pid && (WIFEXITED(*status) || WIFSIGNALED(*status));
}

std::vector<std::string> ServerArgv(const JobCell& cell, int64_t output_cap_bytes) {
  if (cell.language == "python") return {"python3", "-I", "-c", kPythonReplSource};
  // One byte over the cap, so the agent's own capture sees and flags a cut.
  std::vector<std::string> argv = {kQjsPath,
                                   "--repl-server",
                                   "--output-cap",
                                   std::to_string(output_cap_bytes + 1),
                                   "--value-cap",
                                   std::to_string(cell.value_cap_bytes)};
  if (cell.memory_bytes > 0) {
    argv.insert(argv.end(), {"--memory-bytes", std::to_string(cell.memory_bytes)});
  }
  return argv;
}

std::string Request(const JobCell& cell, int64_t timeout_ms) {
  wire::Json request{{"code", cell.code},
                     {"value_cap_bytes", cell.value_cap_bytes},
                     {"cell", cell.number}};
  if (cell.language == "javascript") request["timeout_ms"] = timeout_ms;
  return request.dump(-1, ' ', false, wire::Json::error_handler_t::replace);
}

struct Answer {
  int64_t exit_code = 0;
  std::optional<std::string> value;
  bool value_truncated = false;
  bool interpreter_ended = false;
  std::optional<bool> interpreter_started;  // javascript's server says
  std::optional<bool> state_kept;
};

// Strict: the server is untrusted (a cell can write on its fd 4).
std::optional<Answer> ParseAnswer(std::string_view bytes, const JobCell& cell, std::string* why) {
  wire::Problem problem;
  auto parsed = wire::ParseJsonBody(bytes, problem);
  if (!parsed || !parsed->is_object()) {
    *why = problem ? *problem.message : "the answer is not a JSON object";
    return std::nullopt;
  }
  wire::FieldReader fields(*parsed, "", problem, /*null_is_absent=*/false);
  fields.RejectUnknown({"exit_code", "value", "value_truncated", "interpreter_ended",
                        "interpreter_started", "state_kept"});
  Answer answer;
  answer.exit_code = fields.Integer("exit_code", wire::kRequired);
  if (parsed->contains("value")) answer.value = fields.String("value", wire::kRequired);
  if (parsed->contains("value_truncated")) {
    answer.value_truncated = fields.Boolean("value_truncated", wire::kRequired);
  }
  if (parsed->contains("interpreter_ended")) {
    answer.interpreter_ended = fields.Boolean("interpreter_ended", wire::kRequired);
  }
  if (parsed->contains("interpreter_started")) {
    answer.interpreter_started = fields.Boolean("interpreter_started", wire::kRequired);
  }
  if (parsed->contains("state_kept")) {
    answer.state_kept = fields.Boolean("state_kept", wire::kRequired);
  }
  if (!problem && (answer.exit_code < 0 || answer.exit_code > 255)) {
    problem.Set("exit_code is out of range");
  }
  if (!problem && answer.value &&
      answer.value->size() > static_cast<size_t>(cell.value_cap_bytes)) {
    problem.Set("the value is longer than its cap");
  }
  if (problem) {
    *why = *problem.message;
    return std::nullopt;
  }
  return answer;
}

// Reads what the pipes hold now, until both are empty (or closed).
void DrainNow(base::UniqueFd& out, OutputCapture& out_capture, base::UniqueFd& err,
              OutputCapture& err_capture) {
  for (int round = 0; round < 64 && (out.valid() || err.valid()); ++round) {
    pollfd fds[2] = {{out.get(), POLLIN, 0}, {err.get(), POLLIN, 0}};
    if (poll(fds, 2, 0) <= 0) return;
    if (out.valid()) Drain(out, out_capture);
    if (err.valid()) Drain(err, err_capture);
  }
}

// Discards what a stopped server's pipes still hold (written after its
// last answer, by something it ran in the background).
void DiscardPending(base::UniqueFd& fd) {
  OutputCapture discard;
  for (int round = 0; round < 64 && fd.valid(); ++round) {
    pollfd pending{fd.get(), POLLIN, 0};
    if (poll(&pending, 1, 0) <= 0) return;
    Drain(fd, discard);
  }
}

}  // namespace

KeptInterpreter::~KeptInterpreter() {
  Kill();
}

void KeptInterpreter::Kill() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, __WALL) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  requests_.Reset();
  answers_.Reset();
  stdout_.Reset();
  stderr_.Reset();
  pidfd_.Reset();
}

void KeptInterpreter::Freeze() {
  if (pid_ <= 0) return;
  if (kill(pid_, SIGSTOP) != 0) {
    Kill();
    return;
  }
  auto until = Clock::now() + kSignalSettle;
  for (;;) {
    int status = 0;
    if (Exited(pid_, &status)) {  // it died meanwhile
      pid_ = -1;
      Kill();
      return;
    }
    char state = ProcessState(pid_);
    if (state == 'T' || state == 't' || Clock::now() >= until) return;
    usleep(100);
  }
}

bool KeptInterpreter::Start(const JobCell& cell, const StepOptions& options, CellRun* run) {
  int requests[2], answers[2];
  if (pipe2(requests, O_CLOEXEC) != 0) return false;
  base::UniqueFd request_read(requests[0]), request_write(requests[1]);
  if (pipe2(answers, O_CLOEXEC) != 0) return false;
  base::UniqueFd answer_read(answers[0]), answer_write(answers[1]);
  StepOptions server_options = options;
  server_options.ignore_hangup = true;  // kept_interpreter.h: stopped between calls
  Launched launched = LaunchStep(ServerArgv(cell, options.output_cap_bytes), server_options,
                                 {request_read.get(), answer_write.get()});
  if (launched.pid < 0) {
    run->result.exit_code = launched.exit_code;
    run->result.stderr_bytes = "plimsoll-guest: the " + language_ +
                               " interpreter cannot start: " + launched.failure + "\n";
    return false;
  }
  pid_ = launched.pid;
  requests_ = std::move(request_write);
  answers_ = std::move(answer_read);
  fcntl(answers_.get(), F_SETFL, fcntl(answers_.get(), F_GETFL) | O_NONBLOCK);
  stdout_ = std::move(launched.stdout_read);
  stderr_ = std::move(launched.stderr_read);
  pidfd_.Reset(static_cast<int>(syscall(SYS_pidfd_open, pid_, 0)));
  return true;
}

CellRun KeptInterpreter::Run(const JobCell& cell, const StepOptions& options,
                             Clock::time_point deadline, Clock::time_point wrap_up) {
  CellRun run;
  run.result.command = CellCommand(language_);
  auto started = Clock::now();
  bool fresh = false;
  int early_status = 0;
  if (pid_ > 0 && Exited(pid_, &early_status)) {
    // It died between calls (killed from outside): a fresh one takes over.
    pid_ = -1;
    Kill();
  }
  if (pid_ > 0) {
    // Whatever it wrote after its last answer (a thread of the last cell,
    // before the stop) is not this cell's; a closed answer channel (EOF
    // closes the descriptor) means it cannot answer: a fresh one takes over.
    DiscardPending(answers_);
    if (!answers_.valid()) Kill();
  }
  if (pid_ <= 0) {
    if (!Start(cell, options, &run)) {
      if (run.result.exit_code == 0) {
        run.result.exit_code = kExitCannotExecute;
        run.result.stderr_bytes = "plimsoll-guest: the " + language_ +
                                  " interpreter cannot start: " + std::strerror(errno) + "\n";
      }
      return run;
    }
    fresh = true;
  } else {
    DiscardPending(stdout_);
    DiscardPending(stderr_);
    kill(pid_, SIGCONT);
  }

  // The soft deadline qjs keeps: the job's budget less the grace the host
  // added for it (job.cc), so qjs answers 124 before the agent must kill.
  int64_t budget = Milliseconds(deadline - Clock::now());
  int64_t soft = std::max<int64_t>(1, budget - kJavascriptGraceMs);
  OutputCapture out{options.output_cap_bytes, {}, false};
  OutputCapture err{options.output_cap_bytes, {}, false};
  std::string answer_bytes;
  std::optional<Answer> answer;
  std::string broken;  // why the server broke the protocol, when it did
  bool exited = false;
  bool answer_eof = false;
  int status = 0;

  Status sent = WriteFrame(requests_.get(), Request(cell, soft), deadline);
  if (!sent.ok()) {
    // The server is gone or not reading: its exit (below) or the deadline says which.
    if (Clock::now() < deadline) broken = "it did not take the cell (" + sent.error().message() + ")";
  }
  const size_t max_answer = MaxAnswerBytes(cell.value_cap_bytes);
  while (!answer && broken.empty() && !exited) {
    pollfd fds[4] = {{stdout_.get(), POLLIN, 0},
                     {stderr_.get(), POLLIN, 0},
                     {answers_.get(), POLLIN, 0},
                     {pidfd_.get(), POLLIN, 0}};
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    int64_t tick = pidfd_.valid() ? 100 : 10;
    poll(fds, 4, static_cast<int>(std::clamp<int64_t>(left, 0, tick)));
    if (stdout_.valid()) Drain(stdout_, out);
    if (stderr_.valid()) Drain(stderr_, err);
    char buffer[65536];
    for (;;) {
      ssize_t got = read(answers_.get(), buffer, sizeof buffer);
      if (got > 0) {
        answer_bytes.append(buffer, static_cast<size_t>(got));
        if (answer_bytes.size() > max_answer + 4) {
          broken = "its answer is longer than " + std::to_string(max_answer) + " bytes";
          break;
        }
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got == 0) answer_eof = true;
      break;  // EAGAIN, or EOF
    }
    if (broken.empty() && answer_bytes.size() >= 4) {
      auto length = static_cast<size_t>(static_cast<unsigned char>(answer_bytes[0])) << 24 |
                    static_cast<size_t>(static_cast<unsigned char>(answer_bytes[1])) << 16 |
                    static_cast<size_t>(static_cast<unsigned char>(answer_bytes[2])) << 8 |
                    static_cast<size_t>(static_cast<unsigned char>(answer_bytes[3]));
      if (length > max_answer) {
        broken = "it announced an answer of " + std::to_string(length) + " bytes";
      } else if (answer_bytes.size() > 4 + length) {
        broken = "it wrote more than one answer";
      } else if (answer_bytes.size() == 4 + length) {
        answer = ParseAnswer(std::string_view(answer_bytes).substr(4), cell, &broken);
      }
    }
    if (Exited(pid_, &status)) exited = true;
    if (answer_eof && !answer && broken.empty() && !exited) {
      // The channel closes as a server exits; one that closed it and lives
      // on cannot answer (and would wake this loop at once until the
      // deadline).
      auto until = std::min(Clock::now() + kSignalSettle, deadline);
      while (!exited && Clock::now() < until) {
        usleep(200);
        exited = Exited(pid_, &status);
      }
      if (!exited) broken = "it closed its answer channel";
    }
    if (!answer && broken.empty() && !exited && Clock::now() >= deadline) {
      run.timed_out = true;
      break;
    }
  }
  if (exited) pid_ = -1;
  if (answer && answer->interpreter_ended && !exited) {
    // It ends itself after such an answer; give it the wrap-up to do so.
    auto until = std::min(Clock::now() + kSignalSettle, wrap_up);
    while (Clock::now() < until) {
      if (Exited(pid_, &status)) {
        exited = true;
        pid_ = -1;
        break;
      }
      usleep(200);
    }
  }
  // The answer was written after the cell's output was flushed, so that
  // output is in the pipes now; after an exit, read them to the end.
  if (answer || exited) DrainNow(stdout_, out, stderr_, err);
  if (run.timed_out || !broken.empty() || (answer && answer->interpreter_ended && pid_ > 0)) {
    DrainNow(stdout_, out, stderr_, err);
    Kill();
  }
  if (pid_ <= 0) Kill();  // a server that is gone: close its descriptors

  run.result.duration_ms = Milliseconds(Clock::now() - started);
  run.result.stdout_bytes = std::move(out.bytes);
  run.result.stderr_bytes = std::move(err.bytes);
  run.result.stdout_truncated = out.truncated;
  run.result.stderr_truncated = err.truncated;
  run.cell.interpreter_started = fresh;
  if (run.timed_out) {
    run.result.timed_out = true;
    run.result.exit_code = kExitTimedOut;
  } else if (!broken.empty()) {
    run.result.exit_code = 1;
    std::string note = "plimsoll-guest: the " + language_ + " interpreter broke its channel (" +
                       broken + "); it was ended, and the next cell starts a fresh one.\n";
    if (run.result.stderr_bytes.size() + note.size() <= static_cast<size_t>(out.cap)) {
      run.result.stderr_bytes += note;
    } else {
      run.result.stderr_truncated = true;
    }
  } else if (answer) {
    run.result.exit_code = answer->exit_code;
    run.cell.value = std::move(answer->value);
    run.cell.value_truncated = answer->value_truncated;
    if (answer->interpreter_started) run.cell.interpreter_started = *answer->interpreter_started;
  } else {
    run.result.exit_code = ExitCodeOf(status);  // it died before answering
  }
  // javascript's server may have thrown its instance away (124, 137) and
  // lives on: it says so; otherwise a living server kept everything.
  run.cell.state_kept = pid_ > 0 && (answer && answer->state_kept ? *answer->state_kept : true);
  return run;
}

}  // namespace plimsoll::guest::agent
