/* The contract between the guest module (QuickJS + driver.c, compiled to
 * wasm32-wasi) and its host (host_imports.cc). Plain C: this header is read
 * by clang for wasm32 and by the host's C++ compiler.
 *
 * Exports of the module (besides the WASI reactor's `_initialize`):
 *   plimsoll_alloc(size) -> guest pointer (0 on failure); the host copies the
 *       script there.
 *   plimsoll_free(pointer): gives back what plimsoll_alloc returned.
 *   plimsoll_run(code, length, js_memory_limit, flags) -> exit code
 *       (PLIMSOLL_EXIT_*). `flags`: PLIMSOLL_RUN_* bits.
 *   plimsoll_prepare(js_memory_limit, flags) -> exit code: makes a fresh
 *       runtime and context with the globals (as plimsoll_run would) and
 *       keeps it; 0 when it is ready. The host then captures the instance's
 *       memory as an image (engine/snapshot.h) and never runs it again.
 *   plimsoll_run_prepared(code, length, js_memory_limit) -> exit code: in an
 *       instance started from that image, runs the script in the kept
 *       context (this run's memory limit, stack top and time origin; Math.random
 *       seeded afresh), as plimsoll_run. The instance is thrown away after.
 *   plimsoll_session_adopt(js_memory_limit) -> exit code: in an instance
 *       started from that image, makes the prepared context the session's
 *       (as plimsoll_session_open makes a fresh one); 0 when it is ready.
 *   plimsoll_session_open(js_memory_limit, flags) -> exit code: makes the
 *       instance's one kept context (a session, SPEC §9); 0 when it is ready.
 *   plimsoll_session_cell(code, length) -> exit code: runs one cell in the
 *       kept context (its jobs and timers to the end, as a run), then writes
 *       the printed form of the cell's completion value to PLIMSOLL_VALUE_FD
 *       (nothing when it is undefined). After an exit code other than 0 or
 *       PLIMSOLL_EXIT_UNCAUGHT the host throws the instance away.
 *
 * Imports from module "plimsoll" (beside WASI's fd_write, clock_time_get,
 * random_get, proc_exit, args/environ and the EBADF answers):
 *   deadline_reached() -> 1 once the soft deadline has passed, else 0.
 *       QuickJS's interrupt handler polls it.
 *   sleep_until(monotonic_ms) -> 0 once CLOCK_MONOTONIC (as WASI's
 *       clock_time_get reads it, in ms) has reached `monotonic_ms`, or 1 as
 *       soon as the soft deadline has passed (never sleeps past it). The
 *       timers' wait: the host thread sleeps, no CPU is spent.
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

/* The descriptor a session cell's value is written to (beside 1 and 2). */
#define PLIMSOLL_VALUE_FD 3

/* The descriptor display() writes to: each write is one display, its MIME
 * type, "\n", then its bytes. The host keeps at most 16 of them and 4 MiB
 * together, and drops one whose type is malformed (the run's displays). */
#define PLIMSOLL_DISPLAY_FD 4

/* Bits of plimsoll_run's `flags`. */
/* Only the language, console, timers and `host`: no web APIs (the
 * benchmark's baseline for what the web APIs cost at start-up). */
#define PLIMSOLL_RUN_NO_WEB_APIS 1u

/* Answers of host_call. */
#define PLIMSOLL_HOST_OK 0
#define PLIMSOLL_HOST_NO_GRANT (-1) /* the run has no grant: refused */
#define PLIMSOLL_HOST_REFUSED (-2)  /* the grant does not allow this call */
#define PLIMSOLL_HOST_FAILED (-3)   /* the call was allowed but failed */
#define PLIMSOLL_HOST_BAD_REQUEST (-4)

/* Largest request a guest may send through host_call. */
#define PLIMSOLL_HOST_MAX_REQUEST (1 << 20)

#endif /* PLIMSOLL_ENGINE_GUEST_ABI_H_ */
