/* Internal interface between the guest driver's files (wasm32 and native). */
#ifndef PLIMSOLL_ENGINE_GUEST_DRIVER_H_
#define PLIMSOLL_ENGINE_GUEST_DRIVER_H_

#include <stddef.h>
#include <stdint.h>

#include "quickjs.h"

/* Writes all bytes to fd 1 or 2 (the host captures and caps them). */
void driver_write(int fd, const char* bytes, size_t length);

/* Defines globalThis.console (log/info/debug -> stdout, warn/error ->
 * stderr). Returns 0, or -1 with an exception pending. */
int driver_install_console(JSContext* ctx, JSValueConst global);

/* Prints "<prefix><error>" and its stack to stderr, as node does for an
 * uncaught exception. Does not consume `exception`. */
void driver_print_uncaught(JSContext* ctx, JSValueConst exception, const char* prefix);

/* Runs a script (see abi.h); exported from the wasm module. */
void* plimsoll_alloc(uint32_t size);
int32_t plimsoll_run(const char* code, uint32_t length, uint32_t js_memory_limit, double budget_ms);

#endif /* PLIMSOLL_ENGINE_GUEST_DRIVER_H_ */
