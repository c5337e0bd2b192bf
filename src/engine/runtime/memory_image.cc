// MemoryImage: a sealed memfd holding a linear memory. See memory_image.h.
#include "engine/runtime/memory_image.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

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
  uint64_t done = 0;
  while (done < bytes) {
    ssize_t written = pwrite(fd.get(), data + done, bytes - done, static_cast<off_t>(done));
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return SystemError("writing the engine's memory image", errno);
    done += static_cast<uint64_t>(written);
  }
  if (fcntl(fd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return SystemError("sealing the engine's memory image", errno);
  }
  return MemoryImage(std::move(fd), pages);
}

}  // namespace plimsoll::engine::wasm
