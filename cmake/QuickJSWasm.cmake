# The guest module and its translation to C:
#
#   QuickJS + src/engine/guest/*.c --clang-14 wasm32-wasi--> quickjs.wasm
#   quickjs.wasm --wasm2c--> quickjs_wasm.c / quickjs_wasm.h
#   both --cmake -P QuickJSBuildInfo.cmake--> engine_build_info.h (digests)
#   quickjs_wasm.c --host C compiler, -O2, no sanitizers--> object library
#
# quickjs_wasm.c is ~10 MB of C (30-70 s to compile): it is one object per
# build directory and is compiled without sanitizers and with -O2 even in the
# ASan debug build (it touches only its own linear memory; the runtime and the
# host imports it calls are ordinary, sanitized, project code).
#
# Defines:
#   plimsoll_quickjs_wasm2c   OBJECT library (the generated C, compiled
#                             through src/engine/quickjs_instance.c)
#   PLIMSOLL_ENGINE_GENERATED_DIR  holds quickjs_wasm.h, engine_build_info.h
#   plimsoll_strip_sanitizers(target)  helper also used for native QuickJS
include_guard(GLOBAL)
include(QuickJS)

find_program(PLIMSOLL_WASM_CLANG NAMES clang-14 clang REQUIRED)
find_program(PLIMSOLL_WASM2C NAMES wasm2c REQUIRED)

# Guest linear-memory layout: the shadow stack comes first (--stack-first) so
# that overflowing it leaves the memory (a trap), never corrupts data.
set(PLIMSOLL_GUEST_STACK_BYTES 1048576)
# wasm2c's per-thread call-depth limit. Each guest call is one native C call;
# this bounds the native stack the guest can use (measured: see engine_test's
# DeepRecursion test and the report in src/engine/README.md).
set(PLIMSOLL_WASM_MAX_CALL_DEPTH 20000)

set(PLIMSOLL_ENGINE_GENERATED_DIR "${CMAKE_BINARY_DIR}/generated/engine")
file(MAKE_DIRECTORY "${PLIMSOLL_ENGINE_GENERATED_DIR}")

set(_guest_dir "${PROJECT_SOURCE_DIR}/src/engine/guest")
set(_guest_sources ${_guest_dir}/driver.c ${_guest_dir}/console.c ${_guest_dir}/timers.c
    ${_guest_dir}/web.c)
set(_guest_headers ${_guest_dir}/abi.h ${_guest_dir}/driver.h
    ${_guest_dir}/shim/pthread.h ${_guest_dir}/shim/setjmp.h
    ${_guest_dir}/shim/wasi_shim.h)
# The web APIs' JavaScript (guest/web.c), embedded as C arrays.
set(PLIMSOLL_GUEST_WEB_SOURCES
    ${_guest_dir}/web/dom.js ${_guest_dir}/web/encoding.js ${_guest_dir}/web/url.js
    ${_guest_dir}/web/clone.js ${_guest_dir}/web/misc.js ${_guest_dir}/web/table.js)
set(PLIMSOLL_GUEST_WEB_HEADER "${PLIMSOLL_ENGINE_GENERATED_DIR}/web_sources.h")
add_custom_command(
  OUTPUT "${PLIMSOLL_GUEST_WEB_HEADER}"
  COMMAND "${CMAKE_COMMAND}" "-DINPUTS=${PLIMSOLL_GUEST_WEB_SOURCES}"
          "-DOUTPUT=${PLIMSOLL_GUEST_WEB_HEADER}"
          -P "${PROJECT_SOURCE_DIR}/cmake/EmbedWebSources.cmake"
  DEPENDS ${PLIMSOLL_GUEST_WEB_SOURCES} "${PROJECT_SOURCE_DIR}/cmake/EmbedWebSources.cmake"
  COMMENT "Embedding the guest's web APIs (JavaScript)"
  VERBATIM)
list(APPEND _guest_headers "${PLIMSOLL_GUEST_WEB_HEADER}")

set(_wasm "${PLIMSOLL_ENGINE_GENERATED_DIR}/quickjs.wasm")
set(_wasm_c "${PLIMSOLL_ENGINE_GENERATED_DIR}/quickjs_wasm.c")
set(_wasm_h "${PLIMSOLL_ENGINE_GENERATED_DIR}/quickjs_wasm.h")
set(_build_info "${PLIMSOLL_ENGINE_GENERATED_DIR}/engine_build_info.h")

# Flags shared by the wasm build and the native benchmark build of QuickJS.
set(PLIMSOLL_QUICKJS_DEFINES -D_GNU_SOURCE "-DCONFIG_VERSION=\"${QUICKJS_VERSION}\"")

add_custom_command(
  OUTPUT "${_wasm}"
  COMMAND "${PLIMSOLL_WASM_CLANG}" --target=wasm32-wasi -O2
          ${PLIMSOLL_QUICKJS_DEFINES}
          -I "${_guest_dir}/shim" -include "${_guest_dir}/shim/wasi_shim.h"
          -I "${QUICKJS_SOURCE_DIR}" -I "${_guest_dir}" -I "${PLIMSOLL_ENGINE_GENERATED_DIR}"
          -Wno-implicit-const-int-float-conversion
          -mexec-model=reactor
          -Wl,-z,stack-size=${PLIMSOLL_GUEST_STACK_BYTES} -Wl,--stack-first
          -Wl,--strip-debug
          ${QUICKJS_SOURCES} ${_guest_sources}
          -o "${_wasm}"
  DEPENDS ${QUICKJS_SOURCES} ${_guest_sources} ${_guest_headers}
  COMMENT "Compiling QuickJS and the guest driver to wasm32-wasi"
  VERBATIM)

add_custom_command(
  OUTPUT "${_wasm_c}" "${_wasm_h}"
  COMMAND "${PLIMSOLL_WASM2C}" "${_wasm}" -n quickjs -o "${_wasm_c}"
  DEPENDS "${_wasm}"
  COMMENT "Translating quickjs.wasm to C (wasm2c)"
  VERBATIM)

add_custom_command(
  OUTPUT "${_build_info}"
  COMMAND "${CMAKE_COMMAND}" -DWASM=${_wasm} -DWASM2C=${_wasm_c}
          -DOUTPUT=${_build_info} "-DDESCRIPTION=${QUICKJS_DESCRIPTION}"
          -P "${PROJECT_SOURCE_DIR}/cmake/QuickJSBuildInfo.cmake"
  DEPENDS "${_wasm}" "${_wasm_c}" "${PROJECT_SOURCE_DIR}/cmake/QuickJSBuildInfo.cmake"
  COMMENT "Recording the engine's build identity"
  VERBATIM)

add_custom_target(plimsoll_quickjs_generated
  DEPENDS "${_wasm}" "${_wasm_c}" "${_wasm_h}" "${_build_info}" "${PLIMSOLL_GUEST_WEB_HEADER}")

# Removes the sanitizer flags (added directory-wide by PlimsollTargets.cmake)
# from one target and compiles it optimised without debug info.
# -falign-functions=64: the generated C is a few giant functions whose speed
# swung between ~1.4x and ~1.9x native QuickJS from one link to the next with
# code placement alone; aligning function entries made it consistently fast
# (measured in bench/, issue 3). It changes only padding, not semantics; the
# native QuickJS baseline gets the same flags.
function(plimsoll_strip_sanitizers target)
  get_target_property(_options ${target} COMPILE_OPTIONS)
  if(_options AND PLIMSOLL_SANITIZER_FLAGS)
    list(REMOVE_ITEM _options ${PLIMSOLL_SANITIZER_FLAGS})
    set_target_properties(${target} PROPERTIES COMPILE_OPTIONS "${_options}")
  endif()
  target_compile_options(${target} PRIVATE -O2 -g0 -falign-functions=64)
endfunction()

# Compiled through src/engine/quickjs_instance.c, which includes the
# generated C and adds instantiation from a snapshot (engine/snapshot.h).
add_library(plimsoll_quickjs_wasm2c OBJECT "${PROJECT_SOURCE_DIR}/src/engine/quickjs_instance.c")
add_dependencies(plimsoll_quickjs_wasm2c plimsoll_quickjs_generated)
plimsoll_strip_sanitizers(plimsoll_quickjs_wasm2c)
target_compile_definitions(plimsoll_quickjs_wasm2c PRIVATE
  WASM_RT_MAX_CALL_STACK_DEPTH=${PLIMSOLL_WASM_MAX_CALL_DEPTH})
target_compile_options(plimsoll_quickjs_wasm2c PRIVATE
  -include "${PROJECT_SOURCE_DIR}/src/engine/runtime/wasm2c_prelude.h"
  -w)
target_include_directories(plimsoll_quickjs_wasm2c PRIVATE "${PLIMSOLL_ENGINE_GENERATED_DIR}"
  "${PROJECT_SOURCE_DIR}/src")
set_source_files_properties("${PROJECT_SOURCE_DIR}/src/engine/quickjs_instance.c" PROPERTIES
  OBJECT_DEPENDS "${_wasm_c}")
