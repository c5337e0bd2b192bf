// Destroying finished containers off the answer's path.
//
// Once a run's sealed report is in, the container is handed here: one
// background thread destroys it (OciSandbox::Destroy: the agent has already
// exited by then, so this mostly waits for the runtime to remove its state).
// Bounded: with `max_pending` already waiting, Add() destroys the container
// itself, so a host that cannot keep up slows its callers instead of piling
// up containers. The destructor destroys everything still queued; after a
// crash, the provider's Reconcile() finds the rest.
//
// Thread-safety: Add() and Drain() may be called from any thread.
//
// Usage:
//   Destroyer destroyer(32);
//   destroyer.Add(std::move(sandbox));  // returns at once
#ifndef PLIMSOLL_PROVIDERS_OCI_DESTROYER_H_
#define PLIMSOLL_PROVIDERS_OCI_DESTROYER_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "providers/oci/oci_sandbox.h"

namespace plimsoll::oci {

class Destroyer {
 public:
  explicit Destroyer(size_t max_pending);
  Destroyer(const Destroyer&) = delete;
  Destroyer& operator=(const Destroyer&) = delete;
  ~Destroyer();

  void Add(std::unique_ptr<OciSandbox> sandbox);
  // Returns once every container handed over so far is destroyed.
  void Drain();
  size_t Pending() const;
  // The last cleanup problem, "" when none.
  std::string LastError() const;

 private:
  void Work();
  void DestroyOne(OciSandbox& sandbox);

  const size_t max_pending_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable drained_;
  std::deque<std::unique_ptr<OciSandbox>> queue_;
  size_t in_progress_ = 0;
  bool stopping_ = false;
  std::string last_error_;
  std::thread worker_;  // started on the first Add()
};

}  // namespace plimsoll::oci

#endif  // PLIMSOLL_PROVIDERS_OCI_DESTROYER_H_
