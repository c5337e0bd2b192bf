// plimsoll-http-bench: plimsolld measured from a second process over real
// HTTP on loopback, with a lean client (tools/http_client.h: raw sockets,
// keep-alive, one send() per request, Content-Length framing). It starts the
// daemon itself (--daemon PATH, flags after `--`), measures, and stops it.
// Sampler lines for bench/run.py (bench/README.md):
//
//   --mode latency     one keep-alive connection, requests one at a time:
//     NAME               POST /v1/runs, send to whole answer (ms per request)
//     NAME.healthz       GET /healthz on the same connection, interleaved
//                        (the HTTP round trip without a run: the floor)
//     NAME.client_cpu    this client's CPU time per run request (ms), so its
//                        own share of NAME is known
//   --mode throughput  --connections C keep-alive connections, each with one
//                      request in flight (closed loop), driven by one epoll
//                      thread; time cut into --window-ms windows, --warmup
//                      windows untimed then --runs timed ones:
//     NAME               wall ms per completed run in each window
//                        (1000 / runs per second: 1.0 ms = 1000 runs/s)
//     NAME.latency       send-to-answer time of every run in the timed windows
//     NAME.daemon_cpu    the daemon's CPU ms (user + system) per run, per window
//     NAME.client_cpu    this client's CPU ms per run, per window
//
// Every answer is checked: status 200, the request ID echoed, exit_code 0.
// Anything else fails the scenario with an "error" line (e.g. a capacity
// refusal means the daemon's flags shed load: fix the flags, do not count it).
//
//   plimsoll-http-bench --daemon PATH --mode latency|throughput --scenario NAME
//       [--runs N] [--warmup N] [--connections C] [--window-ms MS] [--code JS]
//       -- [plimsolld flags, e.g. --provider embedded --dev --run-workers 2]
//
// Runs/warm-ups: --runs/--warmup, else $PLIMSOLL_BENCH_RUNS/_WARMUP, else
// 1000/50 (latency) or 10/2 windows (throughput). A human summary goes to
// stderr. Exit status: 0; 1 when the daemon or a request failed; 2 for usage.
#include <sys/epoll.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tools/daemon_process.h"
#include "tools/http_client.h"
#include "tools/sampler_output.h"

namespace {

using plimsoll::bench::Answer;
using plimsoll::bench::Connection;
using plimsoll::bench::DaemonProcess;
using plimsoll::bench::PrintSamples;
using Clock = std::chrono::steady_clock;

constexpr auto kAnswerTimeout = std::chrono::seconds(60);

struct Options {
  std::string daemon;
  std::string mode;
  std::string scenario;
  long runs = -1;
  long warmup = -1;
  long connections = 16;
  long window_ms = 1000;
  std::string code = "console.log(6*7)";
  std::vector<std::string> daemon_args;
};

int Usage(const std::string& message) {
  std::fprintf(stderr,
               "plimsoll-http-bench: %s\nusage: plimsoll-http-bench --daemon PATH --mode "
               "latency|throughput --scenario NAME [--runs N] [--warmup N] [--connections C] "
               "[--window-ms MS] [--code JS] -- [plimsolld flags]\n",
               message.c_str());
  return 2;
}

int Fail(const std::string& scenario, const std::string& reason) {
  plimsoll::bench::PrintError(scenario, reason);
  std::fprintf(stderr, "plimsoll-http-bench: %s\n", reason.c_str());
  return 1;
}

double Milliseconds(Clock::duration duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

double CpuMilliseconds(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

std::string JsonCode(std::string_view code) {
  return R"({"protocol": 1, "javascript": {"code": )" + plimsoll::bench::JsonString(code) + "}}";
}

// "" when `answer` is a successful run (or health check) for `id`.
std::string CheckAnswer(const Answer& answer, const std::string& id, bool run) {
  std::string head = run ? "POST /v1/runs" : "GET /healthz";
  if (answer.status != 200) {
    return head + " answered " + std::to_string(answer.status) + ": " + answer.body.substr(0, 300);
  }
  if (answer.request_id != id) return head + ": the request ID was not echoed";
  if (run && answer.body.find("\"exit_code\":0") == std::string::npos) {
    return head + ": the run did not exit 0: " + answer.body.substr(0, 300);
  }
  return "";
}

// One request on a blocking connection; "" on success.
std::string RoundTrip(Connection& connection, const std::string& request, const std::string& id,
                      bool run) {
  std::string error;
  if (!connection.Send(request, &error)) return error;
  Answer answer;
  auto deadline = Clock::now() + kAnswerTimeout;
  while (!connection.TakeAnswer(&answer, &error)) {
    if (!error.empty() || !connection.Receive(deadline, &error)) return error;
  }
  return CheckAnswer(answer, id, run);
}

int MeasureLatency(const Options& options, DaemonProcess& daemon) {
  const std::string& name = options.scenario;
  long runs = options.runs >= 0 ? options.runs : 1000;
  long warmup = options.warmup >= 0 ? options.warmup : 50;
  Connection connection;
  std::string error;
  if (!connection.Connect(daemon.port(), /*nonblocking=*/false, &error)) return Fail(name, error);
  std::string body = JsonCode(options.code);

  std::vector<double> run_ms, health_ms, client_cpu_ms;
  uint64_t counter = 0;
  for (long i = 0; i < warmup + runs; ++i) {
    std::string id = plimsoll::bench::RequestId(++counter);
    std::string request = plimsoll::bench::RunRequest(body, id);
    double cpu_before = CpuMilliseconds(CLOCK_THREAD_CPUTIME_ID);
    auto start = Clock::now();
    std::string failure = RoundTrip(connection, request, id, /*run=*/true);
    auto elapsed = Clock::now() - start;
    double cpu = CpuMilliseconds(CLOCK_THREAD_CPUTIME_ID) - cpu_before;
    if (!failure.empty()) return Fail(name, "request " + std::to_string(i) + ": " + failure);

    std::string health_id = plimsoll::bench::RequestId(++counter);
    std::string health = plimsoll::bench::GetRequest("/healthz", health_id);
    auto health_start = Clock::now();
    failure = RoundTrip(connection, health, health_id, /*run=*/false);
    auto health_elapsed = Clock::now() - health_start;
    if (!failure.empty()) return Fail(name, "health check " + std::to_string(i) + ": " + failure);

    if (i < warmup) continue;
    run_ms.push_back(Milliseconds(elapsed));
    health_ms.push_back(Milliseconds(health_elapsed));
    client_cpu_ms.push_back(cpu);
  }
  PrintSamples(name, "ms", run_ms);
  PrintSamples(name + ".healthz", "ms", health_ms);
  PrintSamples(name + ".client_cpu", "ms", client_cpu_ms);
  std::sort(run_ms.begin(), run_ms.end());
  std::sort(client_cpu_ms.begin(), client_cpu_ms.end());
  std::fprintf(stderr, "latency: %ld runs, median %.3f ms, client CPU median %.4f ms\n", runs,
               run_ms[run_ms.size() / 2], client_cpu_ms[client_cpu_ms.size() / 2]);
  return 0;
}

// One connection of the closed loop: one request in flight at a time.
struct LoadConnection {
  Connection connection;
  std::string id;
  std::string request;
  size_t sent = 0;
  Clock::time_point started;
};

int MeasureThroughput(const Options& options, DaemonProcess& daemon) {
  const std::string& name = options.scenario;
  long windows = options.runs >= 0 ? options.runs : 10;
  long warmup = options.warmup >= 0 ? options.warmup : 2;
  std::string body = JsonCode(options.code);
  int poller = epoll_create1(EPOLL_CLOEXEC);
  if (poller < 0) return Fail(name, "epoll_create1 failed");

  std::vector<std::unique_ptr<LoadConnection>> connections;
  uint64_t counter = 0;
  std::string error;
  auto send_next = [&](LoadConnection& load) -> bool {
    load.id = plimsoll::bench::RequestId(++counter);
    load.request = plimsoll::bench::RunRequest(body, load.id);
    load.sent = 0;
    load.started = Clock::now();
    while (load.sent < load.request.size()) {  // ~150 bytes: the socket takes it at once
      long wrote =
          load.connection.SendSome(std::string_view(load.request).substr(load.sent), &error);
      if (wrote < 0) return false;
      load.sent += static_cast<size_t>(wrote);
    }
    return true;
  };
  for (long i = 0; i < options.connections; ++i) {
    auto load = std::make_unique<LoadConnection>();
    if (!load->connection.Connect(daemon.port(), /*nonblocking=*/true, &error)) {
      return Fail(name, error);
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.ptr = load.get();
    epoll_ctl(poller, EPOLL_CTL_ADD, load->connection.fd(), &event);
    connections.push_back(std::move(load));
  }
  for (auto& load : connections) {
    if (!send_next(*load)) return Fail(name, error);
  }

  auto window = std::chrono::milliseconds(options.window_ms);
  std::vector<double> per_run_ms, latency_ms, daemon_cpu_ms, client_cpu_ms;
  long total_runs = 0;
  double timed_seconds = 0;
  for (long index = 0; index < warmup + windows; ++index) {
    bool timed = index >= warmup;
    long completed = 0;
    double daemon_cpu_before = daemon.CpuSeconds();
    double client_cpu_before = CpuMilliseconds(CLOCK_PROCESS_CPUTIME_ID);
    auto start = Clock::now();
    auto end = start + window;
    epoll_event events[64];
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
      if (left.count() <= 0) break;
      int ready = epoll_wait(poller, events, 64, static_cast<int>(left.count()));
      for (int e = 0; e < ready; ++e) {
        auto& load = *static_cast<LoadConnection*>(events[e].data.ptr);
        if (!load.connection.ReceiveAvailable(&error)) return Fail(name, error);
        Answer answer;
        while (load.connection.TakeAnswer(&answer, &error)) {
          std::string failure = CheckAnswer(answer, load.id, /*run=*/true);
          if (!failure.empty()) return Fail(name, failure);
          ++completed;
          if (timed) latency_ms.push_back(Milliseconds(Clock::now() - load.started));
          if (!send_next(load)) return Fail(name, error);
        }
        if (!error.empty()) return Fail(name, error);
      }
    }
    double elapsed_ms = Milliseconds(Clock::now() - start);
    if (completed == 0) {
      return Fail(name,
                  "no run completed in a window of " + std::to_string(options.window_ms) + " ms");
    }
    if (!timed) continue;
    total_runs += completed;
    timed_seconds += elapsed_ms / 1e3;
    per_run_ms.push_back(elapsed_ms / static_cast<double>(completed));
    daemon_cpu_ms.push_back((daemon.CpuSeconds() - daemon_cpu_before) * 1e3 /
                            static_cast<double>(completed));
    client_cpu_ms.push_back((CpuMilliseconds(CLOCK_PROCESS_CPUTIME_ID) - client_cpu_before) /
                            static_cast<double>(completed));
  }
  PrintSamples(name, "ms", per_run_ms);
  PrintSamples(name + ".latency", "ms", latency_ms);
  PrintSamples(name + ".daemon_cpu", "ms", daemon_cpu_ms);
  PrintSamples(name + ".client_cpu", "ms", client_cpu_ms);
  std::fprintf(stderr,
               "throughput: %ld runs in %.1f s = %.0f runs/s over %ld connections "
               "(daemon CPU %.3f ms/run, client CPU %.3f ms/run, medians per window)\n",
               total_runs, timed_seconds, static_cast<double>(total_runs) / timed_seconds,
               options.connections, daemon_cpu_ms[daemon_cpu_ms.size() / 2],
               client_cpu_ms[client_cpu_ms.size() / 2]);
  std::printf("throughput: %.0f runs/s\n", static_cast<double>(total_runs) / timed_seconds);
  return 0;
}

bool ParseCount(const char* text, long* out) {
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < 0) return false;
  *out = value;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  options.runs = plimsoll::bench::EnvCount("PLIMSOLL_BENCH_RUNS", -1);
  options.warmup = plimsoll::bench::EnvCount("PLIMSOLL_BENCH_WARMUP", -1);
  int i = 1;
  for (; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) return Usage("every flag takes a value");
    const char* value = argv[++i];
    bool ok = true;
    if (flag == "--daemon") {
      options.daemon = value;
    } else if (flag == "--mode") {
      options.mode = value;
    } else if (flag == "--scenario") {
      options.scenario = value;
    } else if (flag == "--code") {
      options.code = value;
    } else if (flag == "--runs") {
      ok = ParseCount(value, &options.runs);
    } else if (flag == "--warmup") {
      ok = ParseCount(value, &options.warmup);
    } else if (flag == "--connections") {
      ok = ParseCount(value, &options.connections) && options.connections > 0;
    } else if (flag == "--window-ms") {
      ok = ParseCount(value, &options.window_ms) && options.window_ms > 0;
    } else {
      return Usage("unknown flag " + std::string(flag));
    }
    if (!ok) return Usage("bad value for " + std::string(flag));
  }
  for (; i < argc; ++i) options.daemon_args.emplace_back(argv[i]);
  if (options.daemon.empty() || options.scenario.empty()) {
    return Usage("--daemon and --scenario are required");
  }
  if (options.mode != "latency" && options.mode != "throughput") {
    return Usage("--mode is latency or throughput");
  }
  if (options.runs == 0) return Usage("--runs must be at least 1");

  DaemonProcess daemon;
  std::string error;
  if (!daemon.Start(options.daemon, options.daemon_args, &error)) {
    return Fail(options.scenario, error);
  }
  int status = options.mode == "latency" ? MeasureLatency(options, daemon)
                                         : MeasureThroughput(options, daemon);
  int exit = daemon.Stop();
  if (status == 0 && exit != 0) {
    return Fail(options.scenario,
                "plimsolld exited with status " + std::to_string(exit) + " after the measurement");
  }
  return status;
}
