// MemoryImage: a sealed memfd holding a linear memory. See memory_image.h.
#include "engine/runtime/memory_image.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/runtime/wasm_runtime.h"

namespace plimsoll::engine::wasm {

Expected<MemoryImage> MemoryImage::Capture(const uint8_t* data, uint32_t pages) {
  if (data == nullptr || pages == 0 || pages > kMaxPages) {
    return Failure(ErrorCode::kInvalidArgument, "A memory image needs 1 to 65536 pages of memory.");
  }
  base::UniqueFd fd(memfd_create("plimsoll-engine-image", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) return SystemError("memfd_create for the engine's memory image", errno);
  const uint64_t bytes = uint64_t{pages} * kPageSize;
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    return SystemError("ftruncate of the engine's memory image", errno);
  }
  // Only the pages that hold something are written: the rest stay holes of
  // the file, which read as zeros (most of the guest's shadow stack, the
  // heap's free tail), so capturing costs what the instance used.
  constexpr uint64_t kChunk = 4096;
  static constexpr uint8_t kZeros[kChunk] = {};
  uint64_t offset = 0;
  while (offset < bytes) {
    if (std::memcmp(data + offset, kZeros, kChunk) == 0) {
      offset += kChunk;
      continue;
    }
    uint64_t end = offset + kChunk;  // a run of non-zero chunks, one write
    while (end < bytes && std::memcmp(data + end, kZeros, kChunk) != 0) end += kChunk;
    while (offset < end) {
      ssize_t written = pwrite(fd.get(), data + offset, end - offset, static_cast<off_t>(offset));
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) return SystemError("writing the engine's memory image", errno);
      offset += static_cast<uint64_t>(written);
    }
  }
  if (fcntl(fd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return SystemError("sealing the engine's memory image", errno);
  }
  return MemoryImage(std::move(fd), pages);
}

std::vector<uint32_t> MemoryImage::WrittenPages(const uint8_t* mapped) const {
  constexpr uint64_t kSmallPage = 4096;
  constexpr uint64_t kPresent = uint64_t{1} << 63;
  constexpr uint64_t kFileOrSharedAnonymous = uint64_t{1} << 61;
  const uint64_t count = uint64_t{pages_} * kPageSize / kSmallPage;
  std::vector<uint64_t> entries(count);
  base::UniqueFd pagemap(open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
  if (!pagemap.valid()) return {};
  const uint64_t first = reinterpret_cast<uintptr_t>(mapped) / kSmallPage;
  const ssize_t want = static_cast<ssize_t>(count * sizeof(uint64_t));
  if (pread(pagemap.get(), entries.data(), want, static_cast<off_t>(first * sizeof(uint64_t))) !=
      want) {
    return {};
  }
  std::vector<uint32_t> written;
  for (uint64_t i = 0; i < count; i++) {
    // Present and no longer the file's page: this mapping's own copy.
    if ((entries[i] & kPresent) && !(entries[i] & kFileOrSharedAnonymous)) {
      written.push_back(static_cast<uint32_t>(i));
    }
  }
  return written;
}

void MemoryImage::SetHotPages(const std::vector<uint32_t>& pages) {
  hot_.clear();
  for (uint32_t page : pages) {
    if (!hot_.empty() && hot_.back().first + hot_.back().count == page) {
      hot_.back().count++;
    } else {
      hot_.push_back({page, 1});
    }
  }
}

size_t MemoryImage::hot_page_count() const {
  size_t total = 0;
  for (const auto& range : hot_) total += range.count;
  return total;
}

plimsoll_wasm_image MemoryImage::View() const {
  return plimsoll_wasm_image{fd_.get(), pages_, hot_.data(), static_cast<uint32_t>(hot_.size())};
}

}  // namespace plimsoll::engine::wasm
