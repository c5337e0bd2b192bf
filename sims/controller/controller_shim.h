/* The C interface between a compiled C controller's module and its host
 * (controller_host.cc): docs/exams.md, "C controllers".
 *
 * plimsoll-cc translates the controller's WebAssembly module with wasm2c
 * (module name `controller`) and compiles controller_shim.c beside the
 * generated C, with PLIMSOLL_STATE_WIDTH and PLIMSOLL_INPUT_COUNT defined
 * for the plant. The host, compiled once with plimsoll's wasm2c runtime,
 * reaches the module only through these functions, so it never depends on
 * the generated instance type.
 *
 * The module's exchange buffer (exported as `plimsoll_buffer`, made by the
 * glue plimsoll-cc adds): PLIMSOLL_EXCHANGE_DOUBLES float64 values, the
 * state at [0, width), the inputs the controller answers at
 * [PLIMSOLL_INPUTS_AT, PLIMSOLL_INPUTS_AT + inputs).
 *
 * Every call except the shape and size queries runs guest code: the host
 * makes it inside plimsoll::engine::wasm::RunGuarded. */
#ifndef PLIMSOLL_SIMS_CONTROLLER_CONTROLLER_SHIM_H_
#define PLIMSOLL_SIMS_CONTROLLER_CONTROLLER_SHIM_H_

#include <stddef.h>
#include <stdint.h>

#include "wasm-rt.h"

#define PLIMSOLL_EXCHANGE_DOUBLES 512
#define PLIMSOLL_INPUTS_AT 256

#ifdef __cplusplus
extern "C" {
#endif

/* The plant's shape the controller was compiled for. */
uint32_t plimsoll_controller_state_width(void);
uint32_t plimsoll_controller_input_count(void);

/* The instance's size and alignment, for the host to allocate it. */
size_t plimsoll_controller_instance_size(void);
size_t plimsoll_controller_instance_align(void);

/* Once per process, before anything else. */
void plimsoll_controller_init_module(void);
/* Instantiates the module in `instance` and runs its _initialize. */
void plimsoll_controller_start(void* instance);
void plimsoll_controller_free(void* instance);
wasm_rt_memory_t* plimsoll_controller_memory(void* instance);
/* The exchange buffer's guest address. */
uint32_t plimsoll_controller_buffer(void* instance);
/* One tick: the state is in the buffer; the inputs are there after. */
void plimsoll_controller_control(void* instance, uint32_t tick);

#ifdef __cplusplus
}
#endif

#endif /* PLIMSOLL_SIMS_CONTROLLER_CONTROLLER_SHIM_H_ */
