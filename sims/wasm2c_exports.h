// Wasm2cExports: the table of one wasm2c-translated plant module's exports
// (plant_abi.h's functions under wasm2c's names, plus the module's own
// init_module/instantiate/free/_initialize/memory), so code over any plant
// is written once as a template on the module's instance type. The runner's
// Wasm2cPlant (src/trial/wasm2c_plant.h) and the plant tests'
// PlantUnderTest (plant_under_test.h) take one.
//
// Usage (in a file that includes the generated NAME_wasm.h):
//   static const auto kExports = PLIMSOLL_WASM2C_PLANT_EXPORTS(cartpole);
//   // kExports is a Wasm2cExports<Z_cartpole_instance_t>
#ifndef PLIMSOLL_SIMS_WASM2C_EXPORTS_H_
#define PLIMSOLL_SIMS_WASM2C_EXPORTS_H_

#include <cstdint>

#include "wasm-rt.h"

namespace plimsoll::sims {

template <typename Instance>
struct Wasm2cExports {
  void (*init_module)();
  void (*instantiate)(Instance*);
  void (*free)(Instance*);
  void (*initialize)(Instance*);  // the reactor's _initialize
  wasm_rt_memory_t* (*memory)(Instance*);
  uint32_t (*abi_version)(Instance*);
  uint32_t (*buffer)(Instance*);
  uint32_t (*param_count)(Instance*);
  uint32_t (*state_width)(Instance*);
  uint32_t (*input_count)(Instance*);
  double (*tick_seconds)(Instance*);
  double (*end_seconds)(Instance*);
  uint32_t (*init)(Instance*, uint32_t);
  uint32_t (*read_state)(Instance*);
  uint32_t (*step)(Instance*);
  uint32_t (*ticks)(Instance*);
  double (*score)(Instance*);
};

// The export table of the plant module NAME (wasm2c's names for it, from
// the generated NAME_wasm.h, which the plant file includes).
#define PLIMSOLL_WASM2C_PLANT_EXPORTS(NAME)                                                       \
  ::plimsoll::sims::Wasm2cExports<Z_##NAME##_instance_t> {                                        \
    .init_module = Z_##NAME##_init_module, .instantiate = Z_##NAME##_instantiate,                 \
    .free = Z_##NAME##_free, .initialize = Z_##NAME##Z__initialize, .memory = Z_##NAME##Z_memory, \
    .abi_version = Z_##NAME##Z_plant_abi_version, .buffer = Z_##NAME##Z_plant_buffer,             \
    .param_count = Z_##NAME##Z_plant_param_count, .state_width = Z_##NAME##Z_plant_state_width,   \
    .input_count = Z_##NAME##Z_plant_input_count, .tick_seconds = Z_##NAME##Z_plant_tick_seconds, \
    .end_seconds = Z_##NAME##Z_plant_end_seconds, .init = Z_##NAME##Z_plant_init,                 \
    .read_state = Z_##NAME##Z_plant_read_state, .step = Z_##NAME##Z_plant_step,                   \
    .ticks = Z_##NAME##Z_plant_ticks, .score = Z_##NAME##Z_plant_score,                           \
  }

}  // namespace plimsoll::sims

#endif  // PLIMSOLL_SIMS_WASM2C_EXPORTS_H_
