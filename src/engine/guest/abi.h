/* The contract between the guest module (QuickJS + driver.c, compiled to
 * wasm32-wasi) and its host (host_imports.cc). Plain C: this header is read
 * by clang for wasm32 and by the host's C++ compiler.
 *
 * Exports of the module (besides the WASI reactor's `_initialize`):
 *   plimsoll_alloc(size) -> guest pointer (0 on failure); the host copies the
 *       script there.
 *   plimsoll_run(code, length, js_memory_limit, budget_ms) -> exit code
 *       (PLIMSOLL_EXIT_*). `budget_ms` is the run's soft time budget, used
 *       only for virtual timers (a timer due after it means "timed out").
 *
 * Imports from module "plimsoll" (beside WASI's fd_write, clock_time_get,
 * random_get, proc_exit, args/environ and the EBADF answers):
 *   deadline_reached() -> 1 once the soft deadline has passed, else 0.
 *       QuickJS's interrupt handler polls it.
 *   host_call(request, length) -> PLIMSOLL_HOST_OK and a JSON response, or a
 *       negative PLIMSOLL_HOST_* code and a message. Either way the answer's
 *       length is what host_response_length() returns afterwards.
 *   host_response_length() -> bytes of the last answer.
 *   host_response_read(buffer, length) -> bytes copied of the last answer.
 */
#ifndef PLIMSOLL_ENGINE_GUEST_ABI_H_
#define PLIMSOLL_ENGINE_GUEST_ABI_H_

/* Exit codes of a run (SPEC §2). */
#define PLIMSOLL_EXIT_OK 0
#define PLIMSOLL_EXIT_UNCAUGHT 1
#define PLIMSOLL_EXIT_TIMEOUT 124
#define PLIMSOLL_EXIT_OUT_OF_MEMORY 137

/* Answers of host_call. */
#define PLIMSOLL_HOST_OK 0
#define PLIMSOLL_HOST_NO_GRANT (-1) /* the run has no grant: refused */
#define PLIMSOLL_HOST_REFUSED (-2)  /* the grant does not allow this call */
#define PLIMSOLL_HOST_FAILED (-3)   /* the call was allowed but failed */
#define PLIMSOLL_HOST_BAD_REQUEST (-4)

/* Largest request a guest may send through host_call. */
#define PLIMSOLL_HOST_MAX_REQUEST (1 << 20)

#endif /* PLIMSOLL_ENGINE_GUEST_ABI_H_ */
