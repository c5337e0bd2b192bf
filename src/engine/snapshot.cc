// Making the engine's snapshot. See snapshot.h.
#include "engine/snapshot.h"

#include <chrono>
#include <memory>
#include <mutex>

#include "engine/guest/abi.h"
#include "engine/host_imports.h"
#include "engine/instance_support.h"
#include "engine/runtime/wasm_runtime.h"

namespace plimsoll::engine {
namespace {

// Generous: preparing takes well under a millisecond on this hardware.
constexpr std::chrono::seconds kPrepareTimeout{10};

struct PrepareState {
  Z_quickjs_instance_t instance;
  Z_plimsoll_instance_t plimsoll_imports;
  Z_wasi_snapshot_preview1_instance_t wasi_imports;
  HostContext* context;
  uint32_t flags;
  int exit_code;
};

void PrepareInGuest(void* argument) {
  PrepareState& state = *static_cast<PrepareState*>(argument);
  Z_quickjs_instantiate(&state.instance, &state.plimsoll_imports, &state.wasi_imports);
  state.context->memory = Z_quickjsZ_memory(&state.instance);
  Z_quickjsZ__initialize(&state.instance);
  // Every run sets its own limit (at least this one) before its script.
  state.exit_code = Z_quickjsZ_plimsoll_prepare(&state.instance,
                                                static_cast<u32>(kMinimumMemoryBytes), state.flags);
}

Expected<std::unique_ptr<Snapshot>> MakeSnapshot(uint32_t flags) {
  PLIMSOLL_RETURN_IF_ERROR(EnsureModuleInitialized());
  HostContext context;
  context.output_cap_bytes = 4096;
  context.soft_deadline = std::chrono::steady_clock::now() + kPrepareTimeout;

  wasm::RunOptions options;  // no page limit below the module's own maximum
  options.hard_deadline = context.soft_deadline + kPrepareTimeout;
  auto state = std::make_unique<PrepareState>();
  state->plimsoll_imports.context = &context;
  state->wasi_imports.context = &context;
  state->context = &context;
  state->flags = flags;
  state->exit_code = -1;

  Expected<std::unique_ptr<Snapshot>> result =
      Failure(ErrorCode::kInternal, "The engine's snapshot was not made.");
  {
    wasm::RunScope scope(options);
    if (!scope.status().ok()) return scope.status().error();
    const int trap = wasm::RunGuarded(PrepareInGuest, state.get());
    const wasm_rt_memory_t* memory = context.memory;
    if (trap != 0 || state->exit_code != kExitOk || memory == nullptr) {
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
