# cmake -P script run by the guest_binaries target (GuestBinaries.cmake),
# under a flock so that two presets building at once take turns.
#
# Inputs: SOURCE_DIR BINARY_DIR BIN_DIR QUICKJS_SOURCE_DIR GENERATOR
#         REFERENCE_WASM (the calling build's quickjs.wasm, compared below).
cmake_minimum_required(VERSION 3.25)

if(NOT EXISTS "${BINARY_DIR}/CMakeCache.txt")
  message(STATUS "guest binaries: configuring a static Release build in ${BINARY_DIR}")
  set(_quickjs "")
  if(QUICKJS_SOURCE_DIR)
    set(_quickjs "-DQUICKJS_SOURCE_DIR=${QUICKJS_SOURCE_DIR}")
  endif()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
            -DCMAKE_BUILD_TYPE=Release
            -DPLIMSOLL_SANITIZE=OFF
            -DPLIMSOLL_GUEST_BUILD=ON
            -DPLIMSOLL_GUEST_IMAGE=OFF
            -DCMAKE_EXE_LINKER_FLAGS=-static
            -DOPENSSL_USE_STATIC_LIBS=ON
            ${_quickjs}
    RESULT_VARIABLE _result)
  if(NOT _result EQUAL 0)
    file(REMOVE "${BINARY_DIR}/CMakeCache.txt")
    message(FATAL_ERROR "guest binaries: configuring ${BINARY_DIR} failed.")
  endif()
endif()

# The target list is written at generate time; a stale configure (the agent
# was added since) is refreshed by the build tool's own re-run of cmake, so
# read the list after a first no-op build of the re-check.
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" --target build.ninja
                RESULT_VARIABLE _ignored OUTPUT_QUIET ERROR_QUIET)
file(STRINGS "${BINARY_DIR}/guest-targets.txt" _lines)
set(_targets "")
foreach(_line IN LISTS _lines)
  string(REPLACE " " ";" _fields "${_line}")
  list(GET _fields 0 _target)
  list(APPEND _targets ${_target})
endforeach()
if(NOT "plimsoll_guest" IN_LIST _targets)
  message(WARNING "guest binaries: the agent target plimsoll_guest does not exist yet "
                  "(src/guest); building qjs only. The image will have no plimsoll-guest.")
endif()

execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" --target ${_targets}
                RESULT_VARIABLE _result)
if(NOT _result EQUAL 0)
  message(FATAL_ERROR "guest binaries: building ${_targets} in ${BINARY_DIR} failed.")
endif()

file(MAKE_DIRECTORY "${BIN_DIR}")
foreach(_line IN LISTS _lines)
  string(REPLACE " " ";" _fields "${_line}")
  list(GET _fields 1 _name)
  list(GET _fields 2 _file)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${_file}" "${BIN_DIR}/${_name}")
endforeach()
if(NOT "plimsoll_guest" IN_LIST _targets)
  file(REMOVE "${BIN_DIR}/plimsoll-guest")
endif()

# SPEC §7: the guest's qjs runs the same module as the embedded engine.
set(_guest_wasm "${BINARY_DIR}/generated/engine/quickjs.wasm")
if(EXISTS "${REFERENCE_WASM}" AND EXISTS "${_guest_wasm}")
  file(SHA256 "${REFERENCE_WASM}" _reference)
  file(SHA256 "${_guest_wasm}" _guest)
  if(NOT _reference STREQUAL _guest)
    message(WARNING "guest binaries: ${_guest_wasm} differs from ${REFERENCE_WASM}: "
                    "the guest's qjs and the embedded engine run different modules.")
  endif()
endif()
