/* The C side of a memory image (memory_image.h): what generated code's
 * companion (src/engine/quickjs_instance.c) calls to give a new instance a
 * private copy-on-write view of an image instead of fresh memory. Plain C:
 * read by the C compiler and by C++.
 *
 * plimsoll_wasm_rt_allocate_memory_from_image(memory, fd, pages, max_pages):
 *   as wasm_rt_allocate_memory(memory, pages, max_pages), but the first
 *   `pages` pages map `fd` (a sealed memfd of exactly pages * 64 KiB bytes)
 *   MAP_PRIVATE: reads see the image, writes go to this instance's own
 *   pages, nothing reaches the file. The rest of the 8 GiB reservation is
 *   PROT_NONE as for any memory; growing adds zero pages. Must be called
 *   under RunGuarded; traps (WASM_RT_TRAP_OOB, the errno kept for
 *   ThreadAllocationErrno) when the pages exceed the run's limit or the
 *   mapping fails. Freed by wasm_rt_free_memory. */
#ifndef PLIMSOLL_ENGINE_RUNTIME_WASM_IMAGE_H_
#define PLIMSOLL_ENGINE_RUNTIME_WASM_IMAGE_H_

#include <stdint.h>
#include <wasm-rt.h>

#ifdef __cplusplus
extern "C" {
#endif

void plimsoll_wasm_rt_allocate_memory_from_image(wasm_rt_memory_t* memory, int image_fd,
                                                 uint32_t image_pages, uint32_t max_pages);

#ifdef __cplusplus
}
#endif

#endif /* PLIMSOLL_ENGINE_RUNTIME_WASM_IMAGE_H_ */
