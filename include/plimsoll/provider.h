// The Provider interface: one sandbox backend (SPEC §1, DESIGN.md).
//
// Everything above it (the daemon, the CLI, the conformance suite) is
// provider-agnostic. A provider builds the wall, runs validated requests
// inside it and collects the evidence that its tier rests on. It never
// claims a tier its evidence does not support.
//
// Lifecycle: construct (cheap, no side effects) -> Reconcile() (remove what
// a crashed predecessor left) -> Preflight() (cheap checks: binaries,
// configuration) -> SmokeTest() (a real throwaway run that checks the wall
// from inside; its Evidence is the tier) -> Run() many times, from many
// threads -> destroy.
//
// Usage (most callers use plimsoll::Sandbox, which adds validation, floors
// and records on top):
//
//   auto provider = plimsoll::MakeProvider("embedded", plimsoll::Limits{});
//   if (!provider.ok()) { std::cerr << provider.error().message(); return 2; }
//   auto evidence = (*provider)->SmokeTest(Deadline::clock::now() + 10s);
#ifndef PLIMSOLL_PROVIDER_H_
#define PLIMSOLL_PROVIDER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plimsoll/error.h"
#include "plimsoll/granted_calls.h"
#include "plimsoll/limits.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"
#include "plimsoll/tier.h"

namespace plimsoll {

using Deadline = std::chrono::steady_clock::time_point;

// One check of the wall, made from inside a sandbox (SPEC §6).
struct EvidenceCheck {
  std::string name;  // e.g. "root_read_only"
  bool passed = false;
  std::string detail;  // what was observed
};

// What a tier rests on: configuration, what the backend reports, and checks
// made from inside. Not attestation: no hardware proof is involved.
struct Evidence {
  Tier tier = Tier::kUnknown;
  std::string summary;  // one sentence: why this tier
  // Backend identity: e.g. {"engine", "QuickJS 2025-04-26"}, {"runtime", "runc 1.1.5"}.
  std::vector<std::pair<std::string, std::string>> facts;
  std::vector<EvidenceCheck> checks;
  int64_t collected_unix_ms = 0;
  // The configuration the checks were made with. A provider that prepares
  // its configuration from the host (image, seccomp program, cgroup layout,
  // runtime binary, VM artifacts) numbers each distinct one from 1; 0 means
  // the provider has one fixed configuration (embedded, disabled).
  uint64_t generation = 0;
  // That configuration's environment identity; "" for providers whose
  // description says it (Sandbox falls back to Describe().environment).
  std::string environment;

  bool AllChecksPassed() const;
};

struct Capabilities {
  std::vector<PayloadKind> payloads;  // what Run accepts
  bool sessions = false;
  bool grants = false;
};

// A warm pool's state, for providers that start sandboxes ahead (`linux`, `oci`, `microvm`):
// shown by `describe` (as a detail) and by the daemon's metrics.
struct PoolState {
  size_t size = 0;       // configured
  size_t ready = 0;      // started, healthy, waiting for a run
  bool enabled = false;  // serving (only on confirmed evidence)
  uint64_t handed_out = 0;
  uint64_t found_empty = 0;  // runs that started their own sandbox instead
  uint64_t unhealthy = 0;    // destroyed before use because a check failed
  uint64_t start_failures = 0;
};

// What `describe` shows (SPEC §4).
struct Description {
  std::string provider;
  Tier tier = Tier::kUnknown;  // the tier the provider would claim; evidence decides
  std::string environment;     // image / engine identity, "" when none
  // The name requests select this image by (Request::image); set by the
  // Sandbox (Sandbox::NameImage), "" when it has none. Providers leave it.
  std::string image;
  Capabilities capabilities;
  Limits limits;
  // Extra backend facts for `describe` (pool state, accelerator, ...).
  std::vector<std::pair<std::string, std::string>> details;
  // Set by providers with a warm pool.
  std::optional<PoolState> pool;
};

// A kept sandbox (SPEC §9), made by Provider::OpenSession and owned by a
// plimsoll::Session, which validates requests, calls it one call at a time,
// chains the records and ends it. Destroying it destroys the sandbox and
// everything in it.
class ProviderSession {
 public:
  virtual ~ProviderSession() = default;
  ProviderSession(const ProviderSession&) = delete;
  ProviderSession& operator=(const ProviderSession&) = delete;

  // The tier and environment identity of this sandbox, fixed when it was
  // made (a new configuration serves new sessions, never this one).
  virtual Tier tier() const = 0;
  virtual std::string environment() const = 0;

  // Runs a validated request: a cell (in the kept interpreter of its
  // language, started on first use) or any payload the provider's Run
  // accepts, in the kept sandbox. Results and errors as Provider::Run; a
  // cell's result carries `cell`. When it returns, no process of the guest
  // is left but the kept interpreters.
  virtual Expected<Result> Run(const Request& request, Deadline deadline) = 0;

  // A session call naming a grant profile whose allow_in_sessions is on
  // (SPEC §8, §9): as Run, and the guest reaches `calls` for this call only
  // (a kept interpreter that keeps a reference to host.* reaches nothing in
  // the next call without a grant). The default refuses `unsupported`.
  virtual Expected<Result> RunGranted(const Request& request, Deadline deadline,
                                      GrantedCalls& calls);

  // Re-reads the wall from the host side before a call (per provider what
  // applies: the sandbox's init alive, its seccomp mode, uid map, cgroup).
  // An error says what differs; the session then ends `boundary_failed`.
  virtual Status CheckBoundary() = 0;

  // Bytes the session's files take (its /work); 0 where there is none.
  virtual int64_t DiskUsedBytes() = 0;

  // The languages whose interpreter is alive, e.g. {"javascript"}.
  virtual std::vector<std::string> InterpretersAlive() = 0;

 protected:
  ProviderSession() = default;
};

// What a provider needs to make a session's sandbox.
struct SessionSpec {
  std::string environment;  // "" or the identity the sandbox must have
  int64_t disk_bytes = 0;   // the /work bound the session is held to
};

class Provider {
 public:
  virtual ~Provider() = default;
  Provider(const Provider&) = delete;
  Provider& operator=(const Provider&) = delete;

  // The provider's name as SANDBOX_PROVIDER spells it. Thread-safe.
  virtual std::string_view name() const = 0;

  // Cheap and side-effect free. Thread-safe.
  virtual Description Describe() const = 0;

  // Removes leftovers of a crashed predecessor (processes, mounts, cgroups,
  // sockets, VMs). Called once before serving.
  virtual Status Reconcile() = 0;

  // Cheap, read-only readiness checks (binaries present, image readable,
  // policy compiles); also run by /readyz. Never installs what it finds:
  // runs keep the configuration whose smoke test passed. Must not start a
  // sandbox.
  virtual Status Preflight() = 0;

  // Prepares the host's current configuration (a new generation when it
  // differs from the serving one), starts a throwaway sandbox with it and
  // checks the wall from inside. Only a configuration whose every check
  // passed serves the runs that follow (warm pools are refilled with it);
  // until then runs keep the previous tested one. Returns the evidence
  // (whose tier may be lower than the claimed one, with its generation and
  // environment) or an error when the sandbox could not be confirmed.
  // Sandbox serialises calls; a provider must tolerate concurrent ones.
  virtual Expected<Evidence> SmokeTest(Deadline deadline) = 0;

  // Runs one request that has passed ValidateRequest (so `timeout_ms` is
  // resolved) in the serving configuration; before any smoke test passed it
  // refuses `environment`, and so it does when `request.environment` is set
  // and is not the serving configuration's identity (checked together with
  // choosing it, so a configuration changing meanwhile cannot slip in).
  // Thread-safe. Returns a Result for anything that ran (non-zero exits and
  // timeouts included), a Refusal when nothing ran, or an unmarked error when
  // a failure came after code may have started. `result.record` is left
  // empty: the Sandbox fills it.
  virtual Expected<Result> Run(const Request& request, Deadline deadline) = 0;

  // Grants (SPEC §8) are optional; Capabilities::grants says whether a
  // provider has them. Run() for a request naming a grant profile: the guest
  // reaches `calls` (plimsoll/granted_calls.h) and nothing else outside the
  // sandbox, and a run without a grant has no path to it at all. `calls`
  // outlives the call. The default refuses `unsupported` (nothing ran).
  // The Sandbox puts the call trace on the result; a provider leaves it.
  virtual Expected<Result> RunGranted(const Request& request, Deadline deadline,
                                      GrantedCalls& calls);

  // Sessions (SPEC §9) are optional; Capabilities::sessions says whether a
  // provider has them. Makes a kept sandbox in the serving configuration
  // (refusing `environment` as Run does). The default refuses `unsupported`
  // (nothing ran). Thread-safe.
  virtual Expected<std::unique_ptr<ProviderSession>> OpenSession(const SessionSpec& spec,
                                                                 Deadline deadline);

 protected:
  Provider() = default;
};

// The provider names this build knows, in a stable order.
std::vector<std::string_view> ProviderNames();

// What a provider is built with beyond its limits.
struct ProviderOptions {
  // The guest image directory (docs/guest-images.md) an OS-level provider
  // runs; "" = image::LocateDefaultImage() ($PLIMSOLL_IMAGE, the build tree's,
  // the cache's current). A provider that runs no guest image (disabled,
  // embedded) or cannot take another one yet (microvm: its artifacts are built
  // from one image) refuses a non-empty one (kInvalidArgument).
  std::string image_directory;
};

// Builds a provider by name. An unknown name is an error whose message lists
// the valid names. No side effects beyond construction.
Expected<std::unique_ptr<Provider>> MakeProvider(std::string_view name, const Limits& limits,
                                                 const ProviderOptions& options = {});

// The provider name chosen by the environment: SANDBOX_PROVIDER, or
// "disabled" when it is unset or empty (so code execution is never on by
// accident).
std::string ProviderNameFromEnvironment();

}  // namespace plimsoll

#endif  // PLIMSOLL_PROVIDER_H_
