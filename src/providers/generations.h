// A provider's configurations, one generation each: no configuration serves
// a run before its own smoke test passed.
//
// A configuration is what a provider prepares from the host before it can
// run anything (the image tree it holds open, the compiled seccomp program,
// the cgroup layout, the runtime binary, the VM artifacts). Preflight only
// checks the host; each smoke test prepares a fresh configuration and hands
// it to Candidate():
//   - the same key as the serving one (the usual answer): the serving
//     generation is tested again, and the fresh one is dropped;
//   - another key: the fresh one becomes a new generation, numbered one
//     above the highest so far, and serves only once Promote() is called
//     after its smoke test passed.
// Runs take Serving(); a shared_ptr keeps a configuration alive while a run
// or a pooled sandbox started with it is in flight, so a retired generation
// needs no list and is released with its last user.
//
// `Config` is any type with `std::string Key() const`: equal keys mean the
// same configuration (e.g. image identity and tree inode, policy digest,
// runtime version).
//
// Usage (in a provider):
//   auto fresh = PrepareFromHost();                      // no side effects
//   auto candidate = generations_.Candidate(std::move(*fresh));
//   Evidence evidence = Check(*candidate.config);       // the smoke test
//   evidence.generation = candidate.number;
//   if (evidence.AllChecksPassed()) generations_.Promote(candidate);
//   ...
//   auto serving = generations_.Serving();               // in Run
//   if (!serving) return Refusal(kEnvironment, "no configuration passed its smoke test yet");
//
// Thread-safety: every method may be called from any thread.
#ifndef PLIMSOLL_PROVIDERS_GENERATIONS_H_
#define PLIMSOLL_PROVIDERS_GENERATIONS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "plimsoll/error.h"

namespace plimsoll {

template <typename Config>
class Generations {
 public:
  struct Generation {
    uint64_t number = 0;  // from 1; 0 with no configuration
    std::shared_ptr<const Config> config;
    explicit operator bool() const { return config != nullptr; }
  };

  // The generation whose smoke test passed last; empty before any did.
  Generation Serving() const {
    std::lock_guard lock(mutex_);
    return serving_;
  }

  // What a smoke test should check, given a configuration freshly prepared
  // from the host: the serving generation when `fresh` has its key, else
  // `fresh` as a new generation (a pending candidate with the same key is
  // reused, so two smoke tests of one change share its number).
  Generation Candidate(std::shared_ptr<const Config> fresh) {
    std::lock_guard lock(mutex_);
    std::string key = fresh->Key();
    if (serving_ && serving_.config->Key() == key) return serving_;
    if (pending_ && pending_.config->Key() == key) return pending_;
    pending_ = Generation{++highest_, std::move(fresh)};
    return pending_;
  }

  // After `candidate` passed its smoke test: it serves from now on, unless a
  // newer generation already does. Returns whether the serving generation
  // changed (a warm pool then refills with the new one).
  bool Promote(const Generation& candidate) {
    std::lock_guard lock(mutex_);
    if (!candidate || candidate.number <= serving_.number) return false;
    serving_ = candidate;
    if (pending_.number <= candidate.number) pending_ = Generation{};
    return true;
  }

 private:
  mutable std::mutex mutex_;
  Generation serving_;
  Generation pending_;
  uint64_t highest_ = 0;
};

// The refusal of a run that finds no tested configuration, or one whose
// identity is not the one the request requires (Provider::Run's contract).
// `identity` is the serving configuration's environment.
inline Status CheckServingEnvironment(bool serving, std::string_view provider,
                                      std::string_view identity, std::string_view required) {
  if (!serving) {
    return Refusal(NotDispatched::kEnvironment,
                   "The " + std::string(provider) +
                       " provider has no configuration whose smoke test passed yet.");
  }
  if (!required.empty() && required != identity) {
    return Refusal(NotDispatched::kEnvironment,
                   "The request requires environment " + std::string(required) + "; the " +
                       std::string(provider) + " provider's tested configuration has " +
                       (identity.empty() ? std::string("none") : std::string(identity)) + ".");
  }
  return Status::Ok();
}

}  // namespace plimsoll

#endif  // PLIMSOLL_PROVIDERS_GENERATIONS_H_
