# The guest image (docs/guest-images.md): our static binaries and the image.
#
#   guest_binaries  a nested Release build of this same source tree, without
#                   sanitizers and linked -static, in <source>/build/guest
#                   (shared by every preset, so the ~50 s compile of the
#                   wasm2c output happens once). It builds only `qjs`,
#                   `plimsoll_guest`, `plimsoll-trial` (the exam
#                   runner, src/trial/), and `plimsoll-cc` and
#                   `plimsoll-wasm-controller` (C controllers,
#                   src/trial/controller/) and `plimsoll-model` (module
#                   runs, src/trial/), and copies them to
#                   PLIMSOLL_GUEST_BIN_DIR under their in-image names.
#   guest_image     `plimsoll image build` into PLIMSOLL_IMAGE_DIR
#                   (<build>/image); part of `all`, cached after the first
#                   build (mmdebstrap, ~40 s, needs root and the network).
#   guest_image_data  the same for the `data` variant into
#                   PLIMSOLL_DATA_IMAGE_DIR (<build>/image-data): the base
#                   plus the Python data stack (~65 s and ~115 MB of
#                   wheels the first time, cached like the base).
#   plimsoll_test_uses_image(TEST)  gives a test PLIMSOLL_IMAGE.
#   plimsoll_test_uses_data_image(TEST)  gives it the data image instead
#                   (and the base as PLIMSOLL_BASE_IMAGE).
#
# The nested build configures with PLIMSOLL_GUEST_BUILD=ON, which turns this
# file off inside it (no recursion) and records which guest targets exist.
include_guard(GLOBAL)

option(PLIMSOLL_GUEST_IMAGE "Build the guest binaries and the guest image as part of all" ON)
option(PLIMSOLL_GUEST_BUILD "Internal: this is the nested static build of the guest binaries" OFF)

set(PLIMSOLL_GUEST_BUILD_DIR "${PROJECT_SOURCE_DIR}/build/guest" CACHE PATH
    "Where the static guest binaries are built (shared by all presets)")
set(PLIMSOLL_GUEST_BIN_DIR "${PLIMSOLL_GUEST_BUILD_DIR}/image-bin" CACHE INTERNAL
    "The static qjs and plimsoll-guest, under their in-image names")
set(PLIMSOLL_IMAGE_DIR "${CMAKE_BINARY_DIR}/image" CACHE INTERNAL "The guest image this build tree makes")
set(PLIMSOLL_DATA_IMAGE_DIR "${CMAKE_BINARY_DIR}/image-data" CACHE INTERNAL
    "The data variant of the guest image this build tree makes")

# Gives tests that run inside the guest image its location.
# Tests that start OS-level sandboxes find the image through PLIMSOLL_IMAGE,
# and never run at the same time as each other: sandboxes of one host share
# the mapped host uids and the cgroup parent, and these tests check the host
# for leftover processes and cgroups before and after.
function(plimsoll_test_uses_image test)
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "PLIMSOLL_IMAGE=${PLIMSOLL_IMAGE_DIR}")
  set_property(TEST ${test} APPEND PROPERTY RESOURCE_LOCK plimsoll_sandboxes)
endfunction()

function(plimsoll_test_uses_data_image test)
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT
               "PLIMSOLL_IMAGE=${PLIMSOLL_DATA_IMAGE_DIR}" "PLIMSOLL_BASE_IMAGE=${PLIMSOLL_IMAGE_DIR}")
  set_property(TEST ${test} APPEND PROPERTY RESOURCE_LOCK plimsoll_sandboxes)
endfunction()

if(PLIMSOLL_GUEST_BUILD)
  # Inside the nested build: after every directory is configured (the agent
  # may be defined anywhere), list the guest targets and their files.
  function(_plimsoll_record_guest_targets)
    set(_lines "")
    foreach(_pair "qjs=qjs" "plimsoll_guest=plimsoll-guest" "plimsoll_trial_main=plimsoll-trial"
                  "plimsoll_cc_main=plimsoll-cc"
                  "plimsoll_wasm_controller_main=plimsoll-wasm-controller"
                  "plimsoll_model_main=plimsoll-model")
      string(REPLACE "=" ";" _pair "${_pair}")
      list(GET _pair 0 _target)
      list(GET _pair 1 _name)
      if(TARGET ${_target})
        string(APPEND _lines "${_target} ${_name} $<TARGET_FILE:${_target}>\n")
      endif()
    endforeach()
    file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/guest-targets.txt" CONTENT "${_lines}")
  endfunction()
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _plimsoll_record_guest_targets)
  return()
endif()

if(NOT PLIMSOLL_GUEST_IMAGE)
  return()
endif()

find_program(PLIMSOLL_FLOCK flock REQUIRED)

add_custom_target(guest_binaries ALL
  COMMAND "${PLIMSOLL_FLOCK}" "${PLIMSOLL_GUEST_BUILD_DIR}.lock"
          "${CMAKE_COMMAND}"
          "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}"
          "-DBINARY_DIR=${PLIMSOLL_GUEST_BUILD_DIR}"
          "-DBIN_DIR=${PLIMSOLL_GUEST_BIN_DIR}"
          "-DQUICKJS_SOURCE_DIR=${QUICKJS_SOURCE_DIR}"
          "-DGENERATOR=${CMAKE_GENERATOR}"
          "-DREFERENCE_WASM=${CMAKE_BINARY_DIR}/generated/engine/quickjs.wasm"
          -P "${PROJECT_SOURCE_DIR}/cmake/BuildGuestBinaries.cmake"
  COMMENT "Building the static guest binaries in ${PLIMSOLL_GUEST_BUILD_DIR}"
  USES_TERMINAL
  VERBATIM)

add_custom_target(guest_image ALL
  COMMAND "$<TARGET_FILE:plimsoll_cli_main>" image build
          --output "${PLIMSOLL_IMAGE_DIR}"
          --guest-bin "${PLIMSOLL_GUEST_BIN_DIR}"
          --recipe "${PROJECT_SOURCE_DIR}/image/variants/base/recipe"
  COMMENT "Building the guest image in ${PLIMSOLL_IMAGE_DIR} (cached after the first build)"
  USES_TERMINAL
  VERBATIM)
add_dependencies(guest_image guest_binaries plimsoll_cli_main)

add_custom_target(guest_image_data ALL
  COMMAND "$<TARGET_FILE:plimsoll_cli_main>" image build
          --output "${PLIMSOLL_DATA_IMAGE_DIR}"
          --guest-bin "${PLIMSOLL_GUEST_BIN_DIR}"
          --recipe "${PROJECT_SOURCE_DIR}/image/variants/data/recipe"
  COMMENT "Building the data variant of the guest image in ${PLIMSOLL_DATA_IMAGE_DIR} (cached)"
  USES_TERMINAL
  VERBATIM)
# After the base: the two bootstraps would otherwise share the network and the two cores.
add_dependencies(guest_image_data guest_image)
