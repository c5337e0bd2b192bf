// Making the engine's snapshot. See snapshot.h.
#include "engine/snapshot.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "engine/guest/abi.h"
#include "engine/host_imports.h"
#include "engine/instance_support.h"
#include "engine/runtime/wasm_runtime.h"

namespace plimsoll::engine {
namespace {

// Generous: preparing takes well under a millisecond on this hardware.
constexpr std::chrono::seconds kPrepareTimeout{10};

// Two small scripts unlike each other. A run writes few pages (about a
// dozen: the top of the shadow stack, the allocator's state and the free
// heap it carves new objects from); the pages either script wrote are the
// ones a run is likely to write, and a gap of one or two pages between them
// is filled in so that one madvise covers the stretch.
constexpr std::string_view kCalibrationScripts[] = {
    "console.log(6*7)",
    "const xs = [3, 1, 2].map(x => x * 2).sort(); JSON.stringify({xs, s: 'a' + xs.length})",
};

// The pages a run of `code` started from `snapshot` writes (empty when it
// failed or pagemap is unreadable).
// What calibration and preparation run under: the smallest memory limit
// (every run sets its own), a small output cap, a generous deadline.
Limits PrepareLimits() {
  Limits limits;
  limits.memory_bytes = kMinimumMemoryBytes;
  limits.output_cap_bytes = 4096;
  limits.deadline = std::chrono::steady_clock::now() + kPrepareTimeout;
  limits.hard_grace = kPrepareTimeout;
  return limits;
}

std::vector<uint32_t> CalibrationRun(const Snapshot& snapshot, std::string_view code) {
  HostContext context;
  auto run = std::make_unique<RunState>();
  const Limits limits = PrepareLimits();
  ArmRun(*run, context, code, limits);
  run->snapshot = &snapshot;
  wasm::RunOptions options;  // the page limit is the module's own, as when preparing
  options.hard_deadline = context.soft_deadline + limits.hard_grace;
  std::vector<uint32_t> written;
  {
    wasm::RunScope scope(options);
    if (scope.status().ok() && wasm::RunGuarded(RunInGuest, run.get()) == 0 &&
        run->exit_code == kExitOk && context.memory != nullptr) {
      written = snapshot.memory.WrittenPages(context.memory->data);
    }
  }
  context.memory = nullptr;
  Z_quickjs_free(&run->instance);
  return written;
}

// Sets the image's hot pages: what any calibration run wrote, small gaps
// filled.
void Calibrate(Snapshot& snapshot) {
  constexpr uint32_t kLargestGapFilled = 2;
  std::vector<uint32_t> any;
  for (std::string_view script : kCalibrationScripts) {
    std::vector<uint32_t> written = CalibrationRun(snapshot, script);
    std::vector<uint32_t> both;
    std::set_union(any.begin(), any.end(), written.begin(), written.end(),
                   std::back_inserter(both));
    any = std::move(both);
  }
  std::vector<uint32_t> hot;
  for (uint32_t page : any) {
    if (!hot.empty() && page > hot.back() + 1 && page - hot.back() - 1 <= kLargestGapFilled) {
      for (uint32_t gap = hot.back() + 1; gap < page; gap++) hot.push_back(gap);
    }
    hot.push_back(page);
  }
  snapshot.memory.SetHotPages(hot);
}

Expected<std::unique_ptr<Snapshot>> MakeSnapshot(uint32_t flags) {
  PLIMSOLL_RETURN_IF_ERROR(EnsureModuleInitialized());
  HostContext context;
  auto state = std::make_unique<RunState>();
  Limits limits = PrepareLimits();
  limits.web_apis = (flags & PLIMSOLL_RUN_NO_WEB_APIS) == 0;
  ArmRun(*state, context, {}, limits);
  // No page limit below the module's own maximum: the prepared instance's
  // memory keeps that maximum, and each run's own limit clamps it.
  wasm::RunOptions options;
  options.hard_deadline = context.soft_deadline + limits.hard_grace;

  Expected<std::unique_ptr<Snapshot>> result =
      Failure(ErrorCode::kInternal, "The engine's snapshot was not made.");
  {
    wasm::RunScope scope(options);
    if (!scope.status().ok()) return scope.status().error();
    const int trap = wasm::RunGuarded(PrepareInGuest, state.get());
    const wasm_rt_memory_t* memory = context.memory;
    if (trap != 0 || !state->prepared || memory == nullptr) {
      result = Failure(ErrorCode::kInternal,
                       "Preparing the engine's snapshot failed (trap " + std::to_string(trap) +
                           ", exit " + std::to_string(state->exit_code) + "): " +
                           context.output[1].substr(0, 200));
    } else if (!context.output[0].empty() || !context.output[1].empty()) {
      result = Failure(ErrorCode::kInternal, "Preparing the engine's snapshot printed output.");
    } else {
      auto image = wasm::MemoryImage::Capture(memory->data, memory->pages);
      if (!image.ok()) {
        result = image.error();
      } else {
        result = std::unique_ptr<Snapshot>(new Snapshot{std::move(*image), state->instance});
      }
    }
  }
  context.memory = nullptr;
  Z_quickjs_free(&state->instance);  // safe on a partly built instance
  if (result.ok()) Calibrate(**result);
  return result;
}

}  // namespace

Expected<const Snapshot*> SnapshotFor(uint32_t flags) {
  // One slot per value of the flags (PLIMSOLL_RUN_NO_WEB_APIS is the only bit).
  static_assert(PLIMSOLL_RUN_NO_WEB_APIS == 1u);
  constexpr uint32_t kSlots = 2;
  if (flags >= kSlots) {
    return Failure(ErrorCode::kInvalidArgument, "No engine snapshot for these run flags.");
  }
  static std::once_flag once[kSlots];
  static Expected<std::unique_ptr<Snapshot>>* made[kSlots] = {};
  std::call_once(once[flags], [flags] {
    made[flags] = new Expected<std::unique_ptr<Snapshot>>(MakeSnapshot(flags));  // process-long
  });
  if (!made[flags]->ok()) return made[flags]->error();
  return static_cast<const Snapshot*>(made[flags]->value().get());
}

}  // namespace plimsoll::engine
