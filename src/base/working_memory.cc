#include "base/working_memory.h"

#include <alloca.h>
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace plimsoll {
namespace {

constexpr size_t kMaxHeapBytes = size_t{16} << 20;
constexpr size_t kMaxStackBytes = size_t{1} << 20;
constexpr size_t kPageBytes = 4096;

// Touches `bytes` of stack below the caller's frame. Not inlined, so the
// space it takes is released when it returns.
[[gnu::noinline]] void TouchStack(size_t bytes) {
  auto* frame = static_cast<volatile char*>(alloca(bytes));
  for (size_t offset = 0; offset < bytes; offset += kPageBytes) frame[offset] = 0;
  frame[bytes - 1] = 0;
}

}  // namespace

void PrefaultWorkingMemory(size_t heap_bytes, size_t stack_bytes) {
  heap_bytes = std::min(heap_bytes, kMaxHeapBytes);
  stack_bytes = std::min(stack_bytes, kMaxStackBytes);
  if (heap_bytes > 0) {
    mallopt(M_MMAP_THRESHOLD, static_cast<int>(heap_bytes));
    mallopt(M_TRIM_THRESHOLD, static_cast<int>(4 * heap_bytes));
    if (void* block = std::malloc(heap_bytes)) {
      std::memset(block, 0, heap_bytes);
      asm volatile("" : : "r"(block) : "memory");  // the writes happen
      std::free(block);
    }
  }
  if (stack_bytes > 0) TouchStack(stack_bytes);
}

}  // namespace plimsoll
