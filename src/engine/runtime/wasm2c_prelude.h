/* Force-included (-include) before wasm2c's generated C, ahead of wasm-rt.h.
 *
 * wasm2c's stack-depth counter is a plain global in wabt 1.0.32; we run
 * many instances on many threads at once, so it must be per thread. The
 * generated code names it `wasm_rt_call_stack_depth`: this header turns that
 * name into an access to our thread-local counter (initial-exec TLS: one
 * fs-relative load per call, no __tls_get_addr). wasm-rt.h's own
 * `extern uint32_t wasm_rt_call_stack_depth;` then merely redeclares the
 * inline accessor below (a function returning uint32_t*), which C allows.
 *
 * Depth counting (rather than catching the native stack's guard page) keeps
 * the rule "the SIGSEGV handler only claims faults inside guest memory". */
#ifndef PLIMSOLL_ENGINE_RUNTIME_WASM2C_PRELUDE_H_
#define PLIMSOLL_ENGINE_RUNTIME_WASM2C_PRELUDE_H_

#include <stdint.h>

#define WASM_RT_MEMCHECK_SIGNAL_HANDLER 1
#define WASM_RT_USE_STACK_DEPTH_COUNT 1
#ifndef WASM_RT_MAX_CALL_STACK_DEPTH
#error "WASM_RT_MAX_CALL_STACK_DEPTH must be set by the build (QuickJSWasm.cmake)"
#endif

extern __thread uint32_t plimsoll_wasm_call_depth __attribute__((tls_model("initial-exec")));

static inline uint32_t* plimsoll_wasm_call_depth_slot(void) {
  return &plimsoll_wasm_call_depth;
}

#define wasm_rt_call_stack_depth (*plimsoll_wasm_call_depth_slot())

#endif /* PLIMSOLL_ENGINE_RUNTIME_WASM2C_PRELUDE_H_ */
