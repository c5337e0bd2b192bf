# QuickJS's source, fetched at configure time by scripts/fetch-quickjs (Debian
# trixie's source package quickjs 2025.04.26-1, checksum-pinned, cached under
# ${PLIMSOLL_CACHE:-$HOME/.cache/plimsoll}) and unpacked into the build tree.
# Never committed.
#
# Sets:
#   QUICKJS_SOURCE_DIR   the unpacked tree (override with -DQUICKJS_SOURCE_DIR=
#                        for an offline build from an already verified tree)
#   QUICKJS_VERSION      "2025-04-26"
#   QUICKJS_DESCRIPTION  human-readable identity for EngineIdentity
#   QUICKJS_SOURCES      the files the engine compiles (no quickjs-libc.c:
#                        the driver provides console and timers itself)
# (No include guard: the variables are directory-scoped, so every directory
# that needs them includes this file; the fetch itself runs once, as
# QUICKJS_SOURCE_DIR is cached.)

set(QUICKJS_DEBIAN_VERSION "2025.04.26-1")
set(QUICKJS_VERSION "2025-04-26")
set(QUICKJS_DESCRIPTION "QuickJS ${QUICKJS_VERSION} (Debian source package quickjs ${QUICKJS_DEBIAN_VERSION})")

set(_quickjs_dest "${CMAKE_BINARY_DIR}/_deps/quickjs-${QUICKJS_DEBIAN_VERSION}")
# Fetch when no tree was given, or when the build's own unpacked tree was
# removed since the last configure.
if(NOT QUICKJS_SOURCE_DIR OR (QUICKJS_SOURCE_DIR STREQUAL _quickjs_dest AND NOT EXISTS "${_quickjs_dest}/VERSION"))
  execute_process(
    COMMAND "${PROJECT_SOURCE_DIR}/scripts/fetch-quickjs" "${_quickjs_dest}"
    RESULT_VARIABLE _quickjs_result)
  if(NOT _quickjs_result EQUAL 0)
    message(FATAL_ERROR "Fetching QuickJS failed (scripts/fetch-quickjs ${_quickjs_dest}).")
  endif()
  set(QUICKJS_SOURCE_DIR "${_quickjs_dest}" CACHE PATH "Unpacked QuickJS source tree" FORCE)
endif()

file(READ "${QUICKJS_SOURCE_DIR}/VERSION" _quickjs_tree_version)
string(STRIP "${_quickjs_tree_version}" _quickjs_tree_version)
if(NOT _quickjs_tree_version STREQUAL QUICKJS_VERSION)
  message(FATAL_ERROR "QuickJS tree ${QUICKJS_SOURCE_DIR} is ${_quickjs_tree_version}, expected ${QUICKJS_VERSION}.")
endif()

set(QUICKJS_SOURCES
  ${QUICKJS_SOURCE_DIR}/quickjs.c
  ${QUICKJS_SOURCE_DIR}/libregexp.c
  ${QUICKJS_SOURCE_DIR}/libunicode.c
  ${QUICKJS_SOURCE_DIR}/cutils.c
  ${QUICKJS_SOURCE_DIR}/dtoa.c)

# The one patch (applied to the build tree's unpacked copy, idempotently):
# QuickJS 2025-04-26 reports call-stack exhaustion as
# `InternalError: stack overflow`; every other engine (and SPEC's conformance
# suite) reports it as `RangeError: Maximum call stack size exceeded`, which
# is what scripts test for with `e instanceof RangeError`. No build flag or
# shim header can reach this static function, so one line is replaced.
set(_quickjs_stack_from "return JS_ThrowInternalError(ctx, \"stack overflow\");")
set(_quickjs_stack_to "return JS_ThrowRangeError(ctx, \"Maximum call stack size exceeded\");")
file(READ "${QUICKJS_SOURCE_DIR}/quickjs.c" _quickjs_c)
string(FIND "${_quickjs_c}" "${_quickjs_stack_to}" _quickjs_patched)
if(_quickjs_patched EQUAL -1)
  string(FIND "${_quickjs_c}" "${_quickjs_stack_from}" _quickjs_at)
  if(_quickjs_at EQUAL -1)
    message(FATAL_ERROR "QuickJS: the stack-overflow line to patch was not found in ${QUICKJS_SOURCE_DIR}/quickjs.c.")
  endif()
  string(REPLACE "${_quickjs_stack_from}" "${_quickjs_stack_to}" _quickjs_c "${_quickjs_c}")
  file(WRITE "${QUICKJS_SOURCE_DIR}/quickjs.c" "${_quickjs_c}")
endif()
set(QUICKJS_DESCRIPTION "${QUICKJS_DESCRIPTION}, stack overflow reported as RangeError")
