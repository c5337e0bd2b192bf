/* Force-included (-include) into every guest translation unit (wasm32-wasi).
 *
 * QuickJS 2025-04-26 includes <malloc.h> only for Linux/glibc, Apple and
 * FreeBSD, and falls back to calling malloc_usable_size() undeclared on
 * other systems; wasi-libc declares it in <malloc.h>. The engine's memory
 * limit depends on that function, so it must be the real one. */
#include <malloc.h>
