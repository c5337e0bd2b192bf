#include "guest/session_channel.h"

#include <sys/random.h>
#include <sys/statvfs.h>

#include "guest/exchange.h"
#include "guest/protocol.h"

namespace plimsoll::guest {

Expected<Result> SessionChannel::Call(int channel, const Request& request,
                                      std::chrono::steady_clock::time_point report_deadline,
                                      Status* exchange_failure, GrantedCalls* calls) {
  std::string key(kReportKeyBytes, '\0');
  if (getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
    return Refusal(NotDispatched::kEnvironment, "No randomness for the report key.");
  }
  auto job = JobFromRequest(request, limits_, std::move(key));
  if (!job.ok()) return job.error();
  if (extras_.nproc) job->nproc = *extras_.nproc;
  job->seccomp_filter = extras_.seccomp_filter;
  job->host_calls = calls != nullptr;
  if (job->cell) job->cell->number = ++cells_;
  auto start = std::chrono::steady_clock::now();
  Result result;
  result.isolation = tier_;
  result.environment = environment_;
  result.kind = *request.kind();
  Report report;
  *exchange_failure =
      ExchangeJob(channel, *job, request, report_deadline, &result, &report, calls);
  result.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  std::lock_guard lock(mutex_);
  interpreters_ = exchange_failure->ok()
                      ? report.interpreters.value_or(std::vector<std::string>{})
                      : std::vector<std::string>{};
  return result;
}

std::vector<std::string> SessionChannel::InterpretersAlive() const {
  std::lock_guard lock(mutex_);
  return interpreters_;
}

void SessionChannel::Forget() {
  std::lock_guard lock(mutex_);
  interpreters_.clear();
}

int64_t WorkBytesUsed(pid_t init) {
  if (init <= 0) return 0;
  struct statvfs work {};
  std::string path = "/proc/" + std::to_string(init) + "/root" + kWorkDirectory;
  if (statvfs(path.c_str(), &work) != 0) return 0;
  return static_cast<int64_t>((work.f_blocks - work.f_bfree) * work.f_frsize);
}

}  // namespace plimsoll::guest
