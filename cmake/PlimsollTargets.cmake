# Helpers every CMakeLists.txt in the tree uses, so flags live in one place.
#
#   plimsoll_library(NAME SOURCES a.cc b.cc DEPS other_lib ...)
#   plimsoll_test(NAME SOURCES a_test.cc DEPS lib ...)   # GoogleTest via CTest
#   plimsoll_executable(NAME SOURCES main.cc DEPS lib ...)

set(PLIMSOLL_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wnull-dereference
    -Wimplicit-fallthrough -Werror=return-type)

if(PLIMSOLL_SANITIZE)
  # No vptr check: UBSan probes the object's vtable through a pipe, so in a
  # process out of file descriptors (the EMFILE fault test, a daemon under
  # descriptor exhaustion) every checked virtual call is reported "invalid
  # vptr" whatever the object (docs/reliability.md, "Faults"). A check that
  # fails by the fd table, not by the code, cannot gate `make test`.
  set(PLIMSOLL_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize=vptr
      -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # Clang's `function` check (a call through a pointer of another function
    # type; GCC has no such check) cannot be emitted for a coroutine by
    # Clang 14 ("Cannot represent a difference across sections"), and the
    # daemon's connections are coroutines. Off, so both compilers check the same.
    list(APPEND PLIMSOLL_SANITIZER_FLAGS -fno-sanitize=function)
  endif()
  add_compile_options(${PLIMSOLL_SANITIZER_FLAGS})
  add_link_options(${PLIMSOLL_SANITIZER_FLAGS})
endif()

function(_plimsoll_common target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${PLIMSOLL_WARNINGS}>)
  target_include_directories(${target} PUBLIC
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
endfunction()

function(plimsoll_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  _plimsoll_common(${name})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

function(plimsoll_executable name)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  _plimsoll_common(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  if(ARG_OUTPUT_NAME)
    set_target_properties(${name} PROPERTIES OUTPUT_NAME ${ARG_OUTPUT_NAME})
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
endfunction()

# Where the gtest binaries write their XML reports (one per binary).
set(PLIMSOLL_TEST_RESULTS_DIR "${CMAKE_BINARY_DIR}/test-results" CACHE INTERNAL
    "gtest XML reports, read by scripts/skip-summary")

# One precompiled header for every test binary: each test file parses
# GoogleTest, gMock and nlohmann/json, which is about 4 s of a 16 s compile
# under the sanitizers (2 cores, GCC 12), and there are ~150 of them. The PCH
# is built once, by plimsoll_test_pch, and reused by every plimsoll_test
# target (the compile flags are the same tree-wide). A test file still
# includes what it uses: the release preset compiles the same sources, and
# PLIMSOLL_TEST_PCH=OFF checks that they stand alone.
option(PLIMSOLL_TEST_PCH "Compile the tests with one shared precompiled header" ON)

function(_plimsoll_test_pch_target out)
  if(NOT TARGET plimsoll_test_pch)
    # An executable, like the tests, so it is compiled with their flags (-fPIE
    # included: GCC refuses a PCH made with other code-generation settings).
    set(_source "${PROJECT_BINARY_DIR}/plimsoll_test_pch.cc")
    if(NOT EXISTS "${_source}")
      file(WRITE "${_source}"
           "// The donor of the tests' precompiled header (cmake/PlimsollTargets.cmake).\n"
           "int main() { return 0; }\n")
    endif()
    add_executable(plimsoll_test_pch "${_source}")
    _plimsoll_common(plimsoll_test_pch)
    target_link_libraries(plimsoll_test_pch PRIVATE GTest::gtest GTest::gmock nlohmann_json::nlohmann_json)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
      # Without a timestamp in it, Clang's PCH is reusable from the compiler
      # cache (ccache then hashes the PCH's contents, not when it was made).
      target_compile_options(plimsoll_test_pch PRIVATE -Xclang -fno-pch-timestamp)
    endif()
    target_precompile_headers(plimsoll_test_pch PRIVATE
      <gtest/gtest.h> <gmock/gmock.h> <nlohmann/json.hpp>
      <string> <string_view> <vector> <map> <optional> <memory> <functional> <chrono>)
  endif()
  set(${out} plimsoll_test_pch PARENT_SCOPE)
endfunction()

# Tests are labelled so suites can be run on their own: `ctest -L unit`.
function(plimsoll_test name)
  cmake_parse_arguments(ARG "" "LABEL;TIMEOUT" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  _plimsoll_common(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  if(PLIMSOLL_TEST_PCH)
    _plimsoll_test_pch_target(_pch)
    target_link_libraries(${name} PRIVATE nlohmann_json::nlohmann_json)
    target_precompile_headers(${name} REUSE_FROM ${_pch})
  endif()
  add_test(NAME ${name} COMMAND ${name})
  # Every case's verdict, skips with their reasons, for the skip summary
  # `make test` prints after ctest (scripts/skip-summary).
  set_tests_properties(${name} PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "GTEST_OUTPUT=xml:${PLIMSOLL_TEST_RESULTS_DIR}/")
endfunction()
