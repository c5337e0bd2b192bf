// A plant (SPEC §10) as the trial runner drives it: one instance of a
// wasm2c-translated plant module, behind plant_abi.h's contract.
//
// The runner never calls the wasm2c exports itself: it asks the registry
// (plant_registry.h) for a plant by name and drives this interface. Every
// call into guest code runs guarded (engine/runtime/wasm_runtime.h): a trap
// is an Error, after which the instance must not be used again.
//
// Usage:
//   auto plant = CreatePlant("cartpole");          // Expected<unique_ptr<Plant>>
//   auto result = (*plant)->Init(parameters);      // PLANT_OK or a refusal code
//   std::vector<double> state((*plant)->shape().state_width);
//   (*plant)->ReadState(state);
//   auto step = (*plant)->Step(inputs, applied);   // PLANT_RUNNING, _FAILED, ...
//
// Thread-safety: an instance belongs to the thread that created it, and at
// most one instance is alive per thread (it holds the thread's wasm RunScope,
// which does not nest).
#ifndef PLIMSOLL_TRIAL_PLANT_H_
#define PLIMSOLL_TRIAL_PLANT_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "plimsoll/error.h"

namespace plimsoll::trial {

// The plant's constants (plant_abi.h): valid from creation on.
struct PlantShape {
  int32_t param_count = 0;  // a full scenario's length
  int32_t state_width = 0;  // doubles plant_read_state writes
  int32_t input_count = 0;  // doubles plant_step reads
};

class Plant {
 public:
  virtual ~Plant() = default;

  virtual std::string_view name() const = 0;
  virtual const PlantShape& shape() const = 0;

  // plant_init with `parameters` (empty: the default scenario). Returns
  // PLANT_OK or the plant's refusal code (PLANT_ERROR_*); an Error only if
  // the guest trapped or there are more than PLANT_BUFFER_DOUBLES values.
  virtual Expected<int32_t> Init(std::span<const double> parameters) = 0;

  // plant_tick_seconds() and plant_end_seconds(); after a successful Init.
  virtual Expected<double> TickSeconds() = 0;
  virtual Expected<double> EndSeconds() = 0;

  // plant_read_state into `state` (exactly shape().state_width values).
  // An Error if the plant is not ready or answers another width.
  virtual Status ReadState(std::span<double> state) = 0;

  // plant_step with `inputs` (exactly shape().input_count values); the
  // inputs as the plant applied them (clamped) land in `applied` (same
  // size). Returns PLANT_RUNNING, PLANT_FAILED, PLANT_FINISHED or a negative
  // PLANT_ERROR_* (no tick taken).
  virtual Expected<int32_t> Step(std::span<const double> inputs, std::span<double> applied) = 0;

  // plant_ticks() and plant_score().
  virtual Expected<int32_t> Ticks() = 0;
  virtual Expected<double> Score() = 0;
};

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_PLANT_H_
