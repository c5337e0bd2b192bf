/* Internal interface between the guest driver's files (wasm32 and native). */
#ifndef PLIMSOLL_ENGINE_GUEST_DRIVER_H_
#define PLIMSOLL_ENGINE_GUEST_DRIVER_H_

#include <stddef.h>
#include <stdint.h>

#include "abi.h"
#include "quickjs.h"

/* Writes all bytes to fd 1 or 2 (the host captures and caps them). */
void driver_write(int fd, const char* bytes, size_t length);

/* Defines globalThis.console (log/info/debug -> stdout, warn/error ->
 * stderr). Returns 0, or -1 with an exception pending. */
int driver_install_console(JSContext* ctx, JSValueConst global);

/* Prints "<prefix><error>" and its stack to stderr, as node does for an
 * uncaught exception. Does not consume `exception`. */
void driver_print_uncaught(JSContext* ctx, JSValueConst exception, const char* prefix);

/* Formats `value` as console.log formats a non-string argument (node's
 * inspect, one line), objects below `max_depth` as [Object] and arrays past
 * `max_items` as "... N more items". Returns the text or JS_EXCEPTION. */
JSValue driver_inspect(JSContext* ctx, JSValueConst value, int max_depth, int max_items);

/* Classifies a thrown value (consumed), reports it on stderr and returns the
 * exit code (PLIMSOLL_EXIT_*). */
int driver_report_exception(JSContext* ctx, JSValue exception, const char* prefix);

/* ---- timers.c ---- */

/* The monotonic clock the host shares, in ms. */
double driver_monotonic_ms(void);
/* Sleeps (in the host) until driver_monotonic_ms() >= `monotonic_ms`; 1 when
 * the run's soft deadline came first (the run is then timed out), else 0. */
int driver_sleep_until(double monotonic_ms);
/* Defines setTimeout, setInterval, clearTimeout, clearInterval and
 * queueMicrotask on `global`. 0, or -1 with an exception pending. */
int driver_install_timers(JSContext* ctx, JSValueConst global);
/* Waits for the earliest timer and fires it. -1 to go on, 0 when no timer
 * is left, else an exit code. */
int driver_run_next_timer(JSContext* ctx);
/* setTimeout(callback, delay) for a timer that does not keep the run alive
 * (as a Node timer after unref()): the run may end with it pending. */
JSValue driver_add_unref_timer(JSContext* ctx, int argc, JSValueConst* argv);
void driver_release_timers(JSContext* ctx);

/* ---- web.c ---- */

/* Defines the web APIs (performance, crypto, TextEncoder, URL, ...; see
 * web.c) on `global`, most of them loaded on first use. 0, or -1 with an
 * exception pending. */
int driver_install_web(JSContext* ctx, JSValueConst global);
/* Sets the run's time origin (performance.now() and timeOrigin) to now:
 * called by driver_install_web and when a run starts from a snapshot. */
void driver_start_web_run(void);
void driver_release_web(JSContext* ctx);

/* Runs a script, or a session's cells (see abi.h); exported from the wasm
 * module. */
void* plimsoll_alloc(uint32_t size);
void plimsoll_free(void* pointer);
int32_t plimsoll_run(const char* code, uint32_t length, uint32_t js_memory_limit, uint32_t flags);
int32_t plimsoll_prepare(uint32_t js_memory_limit, uint32_t flags);
int32_t plimsoll_run_prepared(const char* code, uint32_t length, uint32_t js_memory_limit);
int32_t plimsoll_session_adopt(uint32_t js_memory_limit);
int32_t plimsoll_session_open(uint32_t js_memory_limit, uint32_t flags);
int32_t plimsoll_session_cell(const char* code, uint32_t length);

#endif /* PLIMSOLL_ENGINE_GUEST_DRIVER_H_ */
