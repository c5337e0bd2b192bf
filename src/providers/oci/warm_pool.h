// Sandboxes started ahead of the runs that use them (the `oci` provider's
// warm pool).
//
// A background thread keeps up to `size` started sandboxes whose agent
// waits for its job (OciSandbox::Start with pooled = true). Take() hands one
// out for exactly one run; the caller destroys it afterwards, and the thread
// starts a replacement. Every sandbox is checked before it is handed out
// (OciSandbox::Healthy: the runtime runs, the agent has not hung up or
// spoken) and every second while it waits; one that failed is destroyed and
// counted, never handed out.
//
// The pool serves only while enabled: the provider enables it once its
// smoke test confirmed the wall with the same configuration, and disables it
// (destroying every idle sandbox) when a later smoke test does not, so a
// sandbox is never handed out on evidence that could not be re-confirmed.
//
// An empty pool (exhausted, refilling, disabled or failing) makes Take()
// return nothing at once: the caller then starts a sandbox itself, within
// its own deadline (a cold start). The pool never sheds a run; the daemon's
// admission limit does.
//
// Thread-safety: every method may be called from any thread.
//
// Usage:
//   WarmPool pool(2, [&] { return OciSandbox::Start(runtime, config, true, deadline()); },
//                 [&](std::unique_ptr<OciSandbox> s) { destroyer.Add(std::move(s)); });
//   pool.Enable();
//   if (auto sandbox = pool.Take()) { ... } else { /* cold start */ }
#ifndef PLIMSOLL_PROVIDERS_OCI_WARM_POOL_H_
#define PLIMSOLL_PROVIDERS_OCI_WARM_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "plimsoll/error.h"
#include "providers/oci/oci_sandbox.h"

namespace plimsoll::oci {

class WarmPool {
 public:
  using Factory = std::function<Expected<std::unique_ptr<OciSandbox>>()>;
  using Disposer = std::function<void(std::unique_ptr<OciSandbox>)>;

  // `size` 0: the pool never starts anything and Take() always returns
  // nothing. The thread starts on the first Enable().
  WarmPool(size_t size, Factory factory, Disposer disposer);
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;
  ~WarmPool();  // stops the thread and destroys every idle sandbox

  void Enable();
  // Stops serving and refilling; idle sandboxes are destroyed.
  void Disable();

  // A healthy started sandbox, or nullptr when none is ready.
  std::unique_ptr<OciSandbox> Take();

  struct Stats {
    size_t size = 0;
    size_t ready = 0;
    size_t starting = 0;
    bool enabled = false;
    uint64_t handed_out = 0;
    uint64_t empty = 0;      // Take() calls that found nothing
    uint64_t unhealthy = 0;  // destroyed because a check failed
    uint64_t start_failures = 0;
    std::string last_error;  // of the latest failed start, "" after a success
  };
  Stats stats() const;
  // "2 of 2 ready (enabled); 14 handed out, 0 empty, 0 unhealthy, 0 start failures".
  std::string Describe() const;

 private:
  void Work();

  const size_t size_;
  const Factory factory_;
  const Disposer disposer_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<OciSandbox>> ready_;
  Stats stats_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace plimsoll::oci

#endif  // PLIMSOLL_PROVIDERS_OCI_WARM_POOL_H_
