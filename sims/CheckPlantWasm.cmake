# The CTest plant_wasm_sha256 (sims/CMakeLists.txt): each built plant's
# NAME.wasm has the SHA-256 sims/plant_wasm.sha256 pins.
#
#   cmake -DPINS=sims/plant_wasm.sha256 -DWASM_DIR=build/generated/sims
#         -DPLANTS="cartpole;shower" -P sims/CheckPlantWasm.cmake
#
# Fails, naming every plant whose bytes differ or that has no pin.
cmake_minimum_required(VERSION 3.25)
foreach(_required PINS WASM_DIR PLANTS)
  if(NOT DEFINED ${_required})
    message(FATAL_ERROR "CheckPlantWasm.cmake needs -D${_required}=...")
  endif()
endforeach()

file(STRINGS "${PINS}" _lines REGEX "^[0-9a-f]+  [a-z0-9_]+\\.wasm$")
set(_failures "")
foreach(_plant IN LISTS PLANTS)
  set(_wasm "${WASM_DIR}/${_plant}.wasm")
  set(_pinned "")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "^([0-9a-f]+)  ${_plant}\\.wasm$")
      set(_pinned "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  if(NOT EXISTS "${_wasm}")
    string(APPEND _failures "\n  ${_plant}: ${_wasm} is not built")
  elseif(_pinned STREQUAL "")
    string(APPEND _failures "\n  ${_plant}: no line for ${_plant}.wasm in ${PINS}")
  else()
    file(SHA256 "${_wasm}" _actual)
    if(_actual STREQUAL _pinned)
      message(STATUS "${_plant}.wasm: ${_actual} (pinned)")
    else()
      string(APPEND _failures "\n  ${_plant}.wasm: ${_actual}, pinned ${_pinned}")
    endif()
  endif()
endforeach()
if(_failures)
  message(FATAL_ERROR "plant modules differ from ${PINS}:${_failures}\n"
          "If the change is meant to change the plant, say so in the commit and update the pin.")
endif()
