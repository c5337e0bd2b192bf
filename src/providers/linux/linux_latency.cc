// plimsoll-linux-latency: runs one snippet N times through the linux
// provider and prints p50/p95/p99 of the end-to-end latency (Sandbox::Run).
// The benchmark suite (make bench) owns the comparison with raw baselines;
// this is the provider author's quick check.
//
//   plimsoll-linux-latency [--await-pool-ms N] [N] [javascript code]
//
// The provider's warm pool (SANDBOX_LINUX_POOL_SIZE, docs/linux-provider.md)
// is on unless that variable says 0. Runs are paced by the pool: before
// every run (untimed) the tool waits until the pool is full again, at most
// --await-pool-ms (default 2000; 0: no pacing, back to back), so each timed
// run is one that finds a sandbox ready, as a run on a host that is not
// saturated does, and the refill of the last run does not land on the next
// one's samples. With the pool off there is nothing to wait for. At the end
// the pool's counters and how many runs started with a full pool go to
// stderr ("pool: ...", "await_pool: ..."): a run that found the pool empty
// built its own sandbox and is among the samples all the same.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "plimsoll/sandbox.h"

namespace {

// Waits until the pool is full (or `limit` passed); whether it was.
bool AwaitFullPool(const plimsoll::Sandbox& sandbox, std::chrono::milliseconds limit) {
  auto give_up = std::chrono::steady_clock::now() + limit;
  for (;;) {
    auto pool = sandbox.Describe().pool;
    if (!pool || pool->size == 0) return false;
    if (pool->enabled && pool->ready >= pool->size) return true;
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace

int main(int argc, char** argv) {
  long await_pool_ms = 2000;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--await-pool-ms") == 0 && i + 1 < argc) {
      await_pool_ms = std::atol(argv[++i]);
    } else {
      positional.emplace_back(argv[i]);
    }
  }
  int count = positional.size() > 0 ? std::atoi(positional[0].c_str()) : 200;
  std::string code = positional.size() > 1 ? positional[1] : "console.log(6*7)";
  if (count <= 0 || await_pool_ms < 0) {
    std::fprintf(stderr, "usage: plimsoll-linux-latency [--await-pool-ms N] [N] [code]\n");
    return 2;
  }
  auto sandbox = plimsoll::Sandbox::Open("linux");
  if (!sandbox.ok()) return 2;
  auto evidence = sandbox->CollectEvidence();
  if (!evidence.ok()) {
    std::fprintf(stderr, "%s\n", evidence.error().ToString().c_str());
    return 2;
  }
  auto initial = sandbox->Describe().pool;
  const bool pooled = initial && initial->size > 0;
  std::vector<double> millis;
  plimsoll::Request request;
  request.javascript = plimsoll::JavascriptPayload{code};
  int full_pool_runs = 0;
  for (int i = 0; i < count; ++i) {
    if (pooled && await_pool_ms > 0 &&
        AwaitFullPool(*sandbox, std::chrono::milliseconds(await_pool_ms))) {
      ++full_pool_runs;
    }
    auto start = std::chrono::steady_clock::now();
    auto result = sandbox->Run(request);
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (!result.ok() || result->exit_code != 0) {
      std::fprintf(stderr, "run %d failed\n", i);
      return 1;
    }
    millis.push_back(std::chrono::duration<double, std::milli>(elapsed).count());
  }
  std::sort(millis.begin(), millis.end());
  auto at = [&](double q) { return millis[static_cast<size_t>(q * (millis.size() - 1))]; };
  std::printf("runs %d  p50 %.2f ms  p95 %.2f ms  p99 %.2f ms  min %.2f ms\n", count, at(0.5),
              at(0.95), at(0.99), millis.front());
  for (const auto& [key, value] : sandbox->Describe().details) {
    if (key == "pool") std::fprintf(stderr, "plimsoll-linux-latency: pool %s\n", value.c_str());
  }
  if (pooled) {
    std::fprintf(stderr,
                 "plimsoll-linux-latency: await_pool %d of %d timed runs started with a full pool "
                 "(waited at most %ld ms before each)\n",
                 full_pool_runs, count, await_pool_ms);
  }
  return 0;
}
