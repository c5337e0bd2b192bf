/* The shim plimsoll-cc compiles beside a controller's wasm2c output
 * (controller_shim.h says why). Needs -DPLIMSOLL_STATE_WIDTH=W
 * -DPLIMSOLL_INPUT_COUNT=I and the directory holding controller_wasm.h. */
#include "controller_shim.h"

#include <stdalign.h>

#include "controller_wasm.h"

#if !defined(PLIMSOLL_STATE_WIDTH) || !defined(PLIMSOLL_INPUT_COUNT)
#error "plimsoll-cc defines PLIMSOLL_STATE_WIDTH and PLIMSOLL_INPUT_COUNT"
#endif

uint32_t plimsoll_controller_state_width(void) {
  return PLIMSOLL_STATE_WIDTH;
}
uint32_t plimsoll_controller_input_count(void) {
  return PLIMSOLL_INPUT_COUNT;
}

size_t plimsoll_controller_instance_size(void) {
  return sizeof(Z_controller_instance_t);
}
size_t plimsoll_controller_instance_align(void) {
  return alignof(Z_controller_instance_t);
}

void plimsoll_controller_init_module(void) {
  Z_controller_init_module();
}

void plimsoll_controller_start(void* instance) {
  Z_controller_instantiate((Z_controller_instance_t*)instance);
  Z_controllerZ__initialize((Z_controller_instance_t*)instance);
}

void plimsoll_controller_free(void* instance) {
  Z_controller_free((Z_controller_instance_t*)instance);
}

wasm_rt_memory_t* plimsoll_controller_memory(void* instance) {
  return Z_controllerZ_memory((Z_controller_instance_t*)instance);
}

uint32_t plimsoll_controller_buffer(void* instance) {
  return Z_controllerZ_plimsoll_buffer((Z_controller_instance_t*)instance);
}

void plimsoll_controller_control(void* instance, uint32_t tick) {
  Z_controllerZ_plimsoll_control((Z_controller_instance_t*)instance, tick);
}
