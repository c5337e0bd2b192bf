/* The generated module (quickjs_wasm.c, wasm2c) compiled in this translation
 * unit, plus one way to instantiate it that wasm2c does not offer: from a
 * snapshot (snapshot.h). wasm2c's instantiate builds globals, memory and
 * table from the module's initial values; starting from a snapshot keeps the
 * prepared instance's globals and gives the new instance a private
 * copy-on-write view of the prepared memory, while the imports and the table
 * (whose entries point at their own instance) are built for the new
 * instance exactly as wasm2c builds them. Including the generated C here
 * (rather than editing it) lets this function call its static init_*
 * helpers; the generated file is never compiled on its own. */
#include "quickjs_wasm.c"

#include "engine/runtime/wasm_image.h"
#include "engine/quickjs_instance.h"

void Z_quickjs_instantiate_from_image(Z_quickjs_instance_t* instance,
                                      const Z_quickjs_instance_t* prepared,
                                      const plimsoll_wasm_image* image,
                                      struct Z_plimsoll_instance_t* Z_plimsoll_instance,
                                      struct Z_wasi_snapshot_preview1_instance_t*
                                          Z_wasi_snapshot_preview1_instance) {
  assert(wasm_rt_is_initialized());
  assert(s_module_initialized);
  *instance = *prepared; /* every global as the prepared instance left it */
  instance->w2c_memory = (wasm_rt_memory_t){0};
  instance->w2c_T0 = (wasm_rt_funcref_table_t){0};
  init_instance_import(instance, Z_plimsoll_instance, Z_wasi_snapshot_preview1_instance);
  plimsoll_wasm_rt_allocate_memory_from_image(&instance->w2c_memory, image,
                                              prepared->w2c_memory.max_pages);
  init_tables(instance);
  init_data_instances(instance);
  init_elem_instances(instance);
}
