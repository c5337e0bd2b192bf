/* The C side of a memory image (memory_image.h): what the generated code's
 * companion (src/engine/quickjs_instance.c) calls to give a new instance a
 * private copy-on-write view of an image instead of fresh memory. Plain C:
 * read by the C compiler and by C++.
 *
 * plimsoll_wasm_rt_allocate_memory_from_image(memory, image, max_pages):
 *   as wasm_rt_allocate_memory(memory, image->pages, max_pages), but the
 *   first image->pages pages map image->fd (a sealed memfd of exactly that
 *   many 64 KiB pages) MAP_PRIVATE: reads see the image, writes go to this
 *   instance's own pages, nothing reaches the file. The pages of
 *   image->hot (ranges of 4 KiB pages a run is likely to write) are copied in
 *   up front, one madvise(MADV_POPULATE_WRITE) per range instead of one
 *   fault per page (and no TLB shootdown for a read-then-written page); a
 *   kernel without it (before 5.14) leaves them to fault as usual. The rest
 *   of the 8 GiB reservation is PROT_NONE as for any memory; growing adds
 *   zero pages. Must be called under RunGuarded; traps (WASM_RT_TRAP_OOB,
 *   the errno kept for ThreadAllocationErrno) when the pages exceed the
 *   run's limit or the mapping fails. Freed by wasm_rt_free_memory. */
#ifndef PLIMSOLL_ENGINE_RUNTIME_WASM_IMAGE_H_
#define PLIMSOLL_ENGINE_RUNTIME_WASM_IMAGE_H_

#include <stdint.h>
#include <wasm-rt.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plimsoll_wasm_page_range {
  uint32_t first; /* 4 KiB page index from the start of the memory */
  uint32_t count;
} plimsoll_wasm_page_range;

typedef struct plimsoll_wasm_image {
  int fd;
  uint32_t pages; /* 64 KiB wasm pages */
  const plimsoll_wasm_page_range* hot;
  uint32_t hot_count;
} plimsoll_wasm_image;

void plimsoll_wasm_rt_allocate_memory_from_image(wasm_rt_memory_t* memory,
                                                 const plimsoll_wasm_image* image,
                                                 uint32_t max_pages);

#ifdef __cplusplus
}
#endif

#endif /* PLIMSOLL_ENGINE_RUNTIME_WASM_IMAGE_H_ */
