#include "engine/runtime/memory_image.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wasm-rt.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "engine/runtime/wasm_image.h"
#include "engine/runtime/wasm_runtime.h"

namespace plimsoll::engine::wasm {
namespace {

class MemoryImageTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(EnsureInitialized().ok()); }
};

std::vector<uint8_t> Pattern(uint32_t pages, uint8_t seed) {
  std::vector<uint8_t> bytes(pages * kPageSize);
  for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<uint8_t>(i * 31 + seed);
  return bytes;
}

struct FromImage {
  wasm_rt_memory_t* memory;
  const MemoryImage* image;
  uint32_t max_pages;
};

int GuardedMap(wasm_rt_memory_t* memory, const MemoryImage& image, uint32_t max_pages) {
  FromImage args{memory, &image, max_pages};
  return RunGuarded(
      +[](void* p) {
        auto* a = static_cast<FromImage*>(p);
        const plimsoll_wasm_image view = a->image->View();
        plimsoll_wasm_rt_allocate_memory_from_image(a->memory, &view, a->max_pages);
      },
      &args);
}

TEST_F(MemoryImageTest, EveryInstanceStartsFromTheImageWhateverAnEarlierOneWrote) {
  const std::vector<uint8_t> original = Pattern(3, 7);
  auto image = MemoryImage::Capture(original.data(), 3);
  ASSERT_TRUE(image.ok()) << image.error().ToString();
  EXPECT_EQ(image->pages(), 3u);

  RunScope scope({.memory_limit_pages = 8});
  wasm_rt_memory_t first;
  ASSERT_EQ(GuardedMap(&first, *image, kMaxPages), 0);
  EXPECT_EQ(first.pages, 3u);
  EXPECT_EQ(first.max_pages, 8u);  // the run's limit clamps the module's maximum
  EXPECT_EQ(first.size, 3 * kPageSize);
  EXPECT_EQ(std::memcmp(first.data, original.data(), original.size()), 0);
  std::memset(first.data, 0xAB, original.size());  // every page written
  ASSERT_EQ(wasm_rt_grow_memory(&first, 2), 3u);
  std::memset(first.data + 3 * kPageSize, 0xCD, 2 * kPageSize);

  // A second instance alive at the same time sees the image, not the first's writes.
  wasm_rt_memory_t second;
  ASSERT_EQ(GuardedMap(&second, *image, kMaxPages), 0);
  EXPECT_EQ(std::memcmp(second.data, original.data(), original.size()), 0);
  EXPECT_EQ(second.pages, 3u);
  EXPECT_EQ(ThreadLiveReservations(), 2);
  wasm_rt_free_memory(&first);

  // Grown pages are fresh zeros, never what another instance had there.
  ASSERT_EQ(wasm_rt_grow_memory(&second, 2), 3u);
  for (uint64_t i = 3 * kPageSize; i < 5 * kPageSize; i++) ASSERT_EQ(second.data[i], 0) << i;
  wasm_rt_free_memory(&second);
  EXPECT_EQ(ThreadLiveReservations(), 0);

  // The file itself is unchanged.
  std::vector<uint8_t> file(original.size());
  ASSERT_EQ(pread(image->fd(), file.data(), file.size(), 0), static_cast<ssize_t>(file.size()));
  EXPECT_EQ(file, original);
}

TEST_F(MemoryImageTest, TheImageIsSealedAgainstEveryChange) {
  const std::vector<uint8_t> original = Pattern(1, 1);
  auto image = MemoryImage::Capture(original.data(), 1);
  ASSERT_TRUE(image.ok());
  const int fd = image->fd();
  EXPECT_EQ(fcntl(fd, F_GET_SEALS),
            F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  EXPECT_EQ(pwrite(fd, "x", 1, 0), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(ftruncate(fd, 0), 0);
  EXPECT_NE(ftruncate(fd, 2 * kPageSize), 0);
  EXPECT_EQ(mmap(nullptr, kPageSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), MAP_FAILED);
  EXPECT_NE(fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE), 0);  // sealed against new seals too
  EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
}

TEST_F(MemoryImageTest, AnImageLargerThanTheRunsLimitIsRefusedNotMapped) {
  const std::vector<uint8_t> original = Pattern(4, 2);
  auto image = MemoryImage::Capture(original.data(), 4);
  ASSERT_TRUE(image.ok());
  RunScope scope({.memory_limit_pages = 3});
  wasm_rt_memory_t memory;
  EXPECT_EQ(GuardedMap(&memory, *image, kMaxPages), WASM_RT_TRAP_OOB);
  EXPECT_EQ(ThreadAllocationErrno(), ENOMEM);
  EXPECT_EQ(memory.data, nullptr);
  EXPECT_EQ(ThreadLiveReservations(), 0);
}

TEST_F(MemoryImageTest, BeyondTheImageIsOutOfBounds) {
  const std::vector<uint8_t> original = Pattern(1, 3);
  auto image = MemoryImage::Capture(original.data(), 1);
  ASSERT_TRUE(image.ok());
  RunScope scope({});
  wasm_rt_memory_t memory;
  ASSERT_EQ(GuardedMap(&memory, *image, kMaxPages), 0);
  struct Access {
    wasm_rt_memory_t* memory;
  } access{&memory};
  int trap = RunGuarded(
      +[](void* p) {
        auto* a = static_cast<Access*>(p);
        volatile uint8_t* byte = a->memory->data + kPageSize;  // one past the image
        *byte = 1;
      },
      &access);
  EXPECT_EQ(trap, WASM_RT_TRAP_OOB);
  wasm_rt_free_memory(&memory);
}

TEST_F(MemoryImageTest, WrittenPagesAreTheOnesThisInstanceCopied) {
  const std::vector<uint8_t> original = Pattern(1, 4);  // sixteen 4 KiB pages
  auto image = MemoryImage::Capture(original.data(), 1);
  ASSERT_TRUE(image.ok());
  RunScope scope({});
  wasm_rt_memory_t memory;
  ASSERT_EQ(GuardedMap(&memory, *image, kMaxPages), 0);
  volatile uint8_t sink = memory.data[3 * 4096];  // read only: still the file's page
  (void)sink;
  memory.data[2 * 4096 + 5] = 1;
  memory.data[9 * 4096] = 1;
  EXPECT_EQ(image->WrittenPages(memory.data), (std::vector<uint32_t>{2, 9}));
  wasm_rt_free_memory(&memory);
}

TEST_F(MemoryImageTest, HotPagesAreCopiedInUpFrontWithTheImagesBytes) {
  const std::vector<uint8_t> original = Pattern(1, 5);
  auto image = MemoryImage::Capture(original.data(), 1);
  ASSERT_TRUE(image.ok());
  image->SetHotPages({1, 2, 3, 7});
  EXPECT_EQ(image->hot_page_count(), 4u);
  EXPECT_EQ(image->View().hot_count, 2u);  // two runs: 1-3 and 7
  RunScope scope({});
  wasm_rt_memory_t memory;
  ASSERT_EQ(GuardedMap(&memory, *image, kMaxPages), 0);
  // Already this instance's own pages before anything wrote them (Linux 5.14+).
  EXPECT_EQ(image->WrittenPages(memory.data), (std::vector<uint32_t>{1, 2, 3, 7}));
  EXPECT_EQ(std::memcmp(memory.data, original.data(), original.size()), 0);
  wasm_rt_free_memory(&memory);
}

TEST_F(MemoryImageTest, CaptureRefusesNoPages) {
  uint8_t byte = 0;
  EXPECT_FALSE(MemoryImage::Capture(&byte, 0).ok());
  EXPECT_FALSE(MemoryImage::Capture(nullptr, 1).ok());
}

}  // namespace
}  // namespace plimsoll::engine::wasm
