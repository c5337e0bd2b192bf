# plimsoll_plant(): one plant (SPEC §10), C -> wasm32-wasi reactor -> wasm2c -> native.
#
#   plimsoll_plant(cartpole SOURCES cartpole.c)
#
#   NAME's SOURCES --clang-14 wasm32-wasi, reactor--> NAME.wasm   (the guest image's copy)
#   NAME.wasm --wasm2c -n NAME--> NAME_wasm.c / NAME_wasm.h        (the runner's copy)
#   NAME_wasm.c --host C compiler, -O2, no sanitizers--> plimsoll_plant_NAME
#
# This is the recipe cmake/QuickJSWasm.cmake follows for the JavaScript
# engine, cut down to what a plant needs: a plant imports nothing, allocates
# nothing and needs no shims. Its exports are named in sims/plant_abi.h; the
# wasm2c names are Z_NAMEZ_plant_init(&instance, ...) and so on.
#
# Defines, per plant:
#   plimsoll_plant_NAME        STATIC library of the generated C. PUBLIC:
#                              NAME_wasm.h (as a system header), sims/ (for
#                              plant_abi.h) and the wasm2c runtime.
#   plimsoll_plant_NAME_wasm   custom target producing NAME.wasm
#   global property PLIMSOLL_PLANTS           the plants' names
#   global property PLIMSOLL_PLANT_WASM_NAME  the path of NAME.wasm
#
# Needs, from whoever includes it:
#   PLIMSOLL_WASM_RUNTIME_TARGET  a library implementing wasm2c's wasm-rt.h
#       with plimsoll's runtime (src/engine/runtime/wasm_runtime.cc: defines
#       the per-thread call-depth counter the prelude names, and
#       plimsoll::engine::wasm::RunGuarded for callers). Default:
#       plimsoll_engine, which compiles that file.
#   PLIMSOLL_SANITIZER_FLAGS      (optional) stripped from the generated C.
include_guard(GLOBAL)

find_program(PLIMSOLL_WASM_CLANG NAMES clang-14 clang REQUIRED)
find_program(PLIMSOLL_WASM2C NAMES wasm2c REQUIRED)

if(NOT DEFINED PLIMSOLL_WASM_RUNTIME_TARGET)
  set(PLIMSOLL_WASM_RUNTIME_TARGET plimsoll_engine)
endif()

set(PLIMSOLL_SIMS_DIR "${CMAKE_CURRENT_LIST_DIR}")
get_filename_component(_plimsoll_repo_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(PLIMSOLL_WASM2C_PRELUDE "${_plimsoll_repo_root}/src/engine/runtime/wasm2c_prelude.h")
set(PLIMSOLL_SIMS_GENERATED_DIR "${CMAKE_BINARY_DIR}/generated/sims")
file(MAKE_DIRECTORY "${PLIMSOLL_SIMS_GENERATED_DIR}")

# A plant's shadow stack: a few frames of arithmetic need far less; first in
# memory (--stack-first) so an overflow traps instead of corrupting data.
set(PLIMSOLL_PLANT_STACK_BYTES 65536)
# The generated code's call-depth limit (wasm2c_prelude.h requires one). A
# plant's calls nest a handful deep (export -> substep -> sin -> __rem_pio2).
set(PLIMSOLL_PLANT_MAX_CALL_DEPTH 256)

# -ffp-contract=off: no fused multiply-add, on either side. wasm has no FMA
# instruction anyway; on the host, GCC contracts a*b+c by default when the
# target has FMA (-march=native, x86-64-v3), which would change the bits of
# the generated C's separate f64.mul and f64.add. -std=c99: plants are C99.
set(PLIMSOLL_PLANT_WASM_FLAGS
    --target=wasm32-wasi -std=c99 -O2 -ffp-contract=off
    -Wall -Wextra -Wpedantic -Werror
    -mexec-model=reactor
    -Wl,-z,stack-size=${PLIMSOLL_PLANT_STACK_BYTES} -Wl,--stack-first
    -Wl,--strip-debug)

function(plimsoll_plant name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  set(_sources)
  foreach(_source IN LISTS ARG_SOURCES)
    get_filename_component(_absolute "${_source}" ABSOLUTE)
    list(APPEND _sources "${_absolute}")
  endforeach()

  set(_wasm "${PLIMSOLL_SIMS_GENERATED_DIR}/${name}.wasm")
  set(_wasm_c "${PLIMSOLL_SIMS_GENERATED_DIR}/${name}_wasm.c")
  set(_wasm_h "${PLIMSOLL_SIMS_GENERATED_DIR}/${name}_wasm.h")

  add_custom_command(
    OUTPUT "${_wasm}"
    COMMAND "${PLIMSOLL_WASM_CLANG}" ${PLIMSOLL_PLANT_WASM_FLAGS}
            -I "${PLIMSOLL_SIMS_DIR}" ${_sources} -o "${_wasm}"
    DEPENDS ${_sources} "${PLIMSOLL_SIMS_DIR}/plant_abi.h" "${PLIMSOLL_SIMS_DIR}/plant_exports.h"
            "${PLIMSOLL_SIMS_DIR}/plant_lifecycle.h"
    COMMENT "Compiling the ${name} plant to wasm32-wasi"
    VERBATIM)
  add_custom_command(
    OUTPUT "${_wasm_c}" "${_wasm_h}"
    COMMAND "${PLIMSOLL_WASM2C}" "${_wasm}" -n ${name} -o "${_wasm_c}"
    DEPENDS "${_wasm}"
    COMMENT "Translating ${name}.wasm to C (wasm2c)"
    VERBATIM)
  add_custom_target(plimsoll_plant_${name}_wasm DEPENDS "${_wasm}" "${_wasm_c}" "${_wasm_h}")

  add_library(plimsoll_plant_${name} STATIC "${_wasm_c}")
  add_dependencies(plimsoll_plant_${name} plimsoll_plant_${name}_wasm)
  # The generated C touches only its own linear memory: compiled optimised,
  # without the sanitizers the debug build adds directory-wide (as the
  # engine's generated C is), and without warnings that are not ours.
  get_target_property(_options plimsoll_plant_${name} COMPILE_OPTIONS)
  if(_options AND PLIMSOLL_SANITIZER_FLAGS)
    list(REMOVE_ITEM _options ${PLIMSOLL_SANITIZER_FLAGS})
    set_target_properties(plimsoll_plant_${name} PROPERTIES COMPILE_OPTIONS "${_options}")
  endif()
  target_compile_options(plimsoll_plant_${name} PRIVATE
    -O2 -g0 -ffp-contract=off -w -include "${PLIMSOLL_WASM2C_PRELUDE}")
  target_compile_definitions(plimsoll_plant_${name} PRIVATE
    WASM_RT_MAX_CALL_STACK_DEPTH=${PLIMSOLL_PLANT_MAX_CALL_DEPTH})
  target_include_directories(plimsoll_plant_${name} SYSTEM PUBLIC "${PLIMSOLL_SIMS_GENERATED_DIR}")
  target_include_directories(plimsoll_plant_${name} PUBLIC "${PLIMSOLL_SIMS_DIR}")
  target_link_libraries(plimsoll_plant_${name} PUBLIC ${PLIMSOLL_WASM_RUNTIME_TARGET})

  set_property(GLOBAL APPEND PROPERTY PLIMSOLL_PLANTS ${name})
  set_property(GLOBAL PROPERTY PLIMSOLL_PLANT_WASM_${name} "${_wasm}")
endfunction()
