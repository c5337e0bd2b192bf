// A sealed image of a linear memory: the bytes an initialised instance left
// in its memory, kept in a memfd that nothing can change once sealed, so that
// many later instances can each map it copy-on-write (wasm_image.h) instead of
// initialising again.
//
// Why a memfd and not a heap copy: mapping is O(1) and an instance pays only
// for the pages it touches (a read shares the page cache's copy, a write
// gets its own page), where a memcpy would pay for every page on every run.
// Why sealed: F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL make
// the image immutable for the process's life: no instance, and no bug in the
// host, can change what the next instance starts from.
//
// Usage:
//   auto image = MemoryImage::Capture(memory.data, memory.pages);
//   image->SetHotPages(...);   // optional: what calibration runs all wrote
//   ... per run: plimsoll_wasm_image view = image->View();
//                plimsoll_wasm_rt_allocate_memory_from_image(&m, &view, max);
//
// Thread-safety: immutable after Capture; fd() may be mapped from any thread.
#ifndef PLIMSOLL_ENGINE_RUNTIME_MEMORY_IMAGE_H_
#define PLIMSOLL_ENGINE_RUNTIME_MEMORY_IMAGE_H_

#include <cstdint>
#include <vector>

#include "base/unique_fd.h"
#include "engine/runtime/wasm_image.h"
#include "plimsoll/error.h"

namespace plimsoll::engine::wasm {

class MemoryImage {
 public:
  // Copies `pages` 64 KiB pages from `data` into a new memfd (close-on-exec)
  // and seals it. Fails with the system error of memfd_create, write or
  // fcntl; `pages` must be at least 1.
  static Expected<MemoryImage> Capture(const uint8_t* data, uint32_t pages);

  MemoryImage(MemoryImage&&) = default;
  MemoryImage& operator=(MemoryImage&&) = default;

  int fd() const { return fd_.get(); }
  uint32_t pages() const { return pages_; }

  // The 4 KiB pages (indexes from the start) that an instance made from
  // this image has written since it was mapped at `mapped` (still mapped,
  // in this process): the pages that are its own now rather than the
  // file's, as /proc/self/pagemap tells. Empty when pagemap cannot be read.
  std::vector<uint32_t> WrittenPages(const uint8_t* mapped) const;

  // The pages every instance writes (sorted 4 KiB page indexes, e.g. what
  // several calibration runs all wrote): later instances copy them in up
  // front (wasm_image.h). Set once, before the image is shared.
  void SetHotPages(const std::vector<uint32_t>& pages);
  size_t hot_page_count() const;

  // The view plimsoll_wasm_rt_allocate_memory_from_image takes; valid while
  // this image lives and its hot pages are not set again.
  plimsoll_wasm_image View() const;

 private:
  MemoryImage(base::UniqueFd fd, uint32_t pages) : fd_(std::move(fd)), pages_(pages) {}

  base::UniqueFd fd_;
  uint32_t pages_ = 0;
  std::vector<plimsoll_wasm_page_range> hot_;  // contiguous runs of hot pages
};

}  // namespace plimsoll::engine::wasm

#endif  // PLIMSOLL_ENGINE_RUNTIME_MEMORY_IMAGE_H_
