/* Guest-only shim. wasi-libc (Debian bookworm) ships no <setjmp.h> (wasm
 * setjmp needs exception handling); QuickJS 2025-04-26's dtoa.c includes it
 * but never uses it. Any use would fail to compile, which is what we want. */
#ifndef PLIMSOLL_GUEST_SHIM_SETJMP_H_
#define PLIMSOLL_GUEST_SHIM_SETJMP_H_
#endif
