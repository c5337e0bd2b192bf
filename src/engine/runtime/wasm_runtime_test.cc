#include "engine/runtime/wasm_runtime.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <wasm-rt.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

namespace plimsoll::engine::wasm {
namespace {

class WasmRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(EnsureInitialized().ok()); }
};

// Allocation happens inside RunGuarded, as in the engine: a failure traps.
struct AllocateArgs {
  wasm_rt_memory_t* memory;
  uint32_t initial;
  uint32_t max;
};

int GuardedAllocate(wasm_rt_memory_t* memory, uint32_t initial, uint32_t max) {
  AllocateArgs args{memory, initial, max};
  return RunGuarded(
      +[](void* p) {
        auto* a = static_cast<AllocateArgs*>(p);
        wasm_rt_allocate_memory(a->memory, a->initial, a->max);
      },
      &args);
}

TEST_F(WasmRuntimeTest, MemoryGrowsUpToTheRunLimit) {
  RunScope scope({.memory_limit_pages = 4});
  wasm_rt_memory_t memory;
  ASSERT_EQ(GuardedAllocate(&memory, 1, kMaxPages), 0);
  EXPECT_EQ(memory.pages, 1u);
  EXPECT_EQ(memory.max_pages, 4u);  // the run's limit clamps the module's
  EXPECT_EQ(memory.size, kPageSize);
  EXPECT_EQ(ThreadLiveReservations(), 1);
  memory.data[kPageSize - 1] = 7;  // readable and writable

  EXPECT_EQ(wasm_rt_grow_memory(&memory, 2), 1u);
  EXPECT_EQ(memory.pages, 3u);
  memory.data[3 * kPageSize - 1] = 7;
  EXPECT_FALSE(ThreadMemoryGrowRefused());
  EXPECT_EQ(wasm_rt_grow_memory(&memory, 2), UINT32_MAX);
  EXPECT_TRUE(ThreadMemoryGrowRefused());
  EXPECT_EQ(memory.pages, 3u);

  wasm_rt_free_memory(&memory);
  EXPECT_EQ(memory.data, nullptr);
  EXPECT_EQ(ThreadLiveReservations(), 0);
}

TEST_F(WasmRuntimeTest, InitialSizeAboveTheLimitIsAnErrorNotAnAbort) {
  RunScope scope({.memory_limit_pages = 2});
  wasm_rt_memory_t memory;
  EXPECT_EQ(GuardedAllocate(&memory, 3, kMaxPages), WASM_RT_TRAP_OOB);
  EXPECT_EQ(ThreadAllocationErrno(), ENOMEM);
  EXPECT_EQ(memory.data, nullptr);
  EXPECT_EQ(ThreadLiveReservations(), 0);
}

struct Access {
  wasm_rt_memory_t* memory;
  uint64_t offset;
};

TEST_F(WasmRuntimeTest, OutOfBoundsAccessInGuestCodeTraps) {
  RunScope scope({});
  wasm_rt_memory_t memory;
  ASSERT_EQ(GuardedAllocate(&memory, 1, 10), 0);
  for (uint64_t offset : {kPageSize, kPageSize * 2 + 5, (uint64_t{1} << 32) + 100}) {
    Access access{&memory, offset};
    int trap = RunGuarded(
        +[](void* p) {
          auto* a = static_cast<Access*>(p);
          *reinterpret_cast<volatile uint8_t*>(a->memory->data + a->offset) = 1;
        },
        &access);
    EXPECT_EQ(trap, WASM_RT_TRAP_OOB) << "offset " << offset;
  }
  // The instance state is unknown after a trap, but the runtime is fine:
  Access inside{&memory, 10};
  EXPECT_EQ(RunGuarded(
                +[](void* p) {
                  auto* a = static_cast<Access*>(p);
                  a->memory->data[a->offset] = 1;
                },
                &inside),
            0);
  wasm_rt_free_memory(&memory);
}

TEST_F(WasmRuntimeTest, WasmRtTrapReturnsItsCode) {
  RunScope scope({});
  int trap = RunGuarded(
      +[](void*) { wasm_rt_trap(WASM_RT_TRAP_DIV_BY_ZERO); }, nullptr);
  EXPECT_EQ(trap, WASM_RT_TRAP_DIV_BY_ZERO);
}

TEST_F(WasmRuntimeTest, HardDeadlineStopsCodeThatNeverPolls) {
  const auto start = std::chrono::steady_clock::now();
  RunScope scope({.hard_deadline = start + std::chrono::milliseconds(50)});
  ASSERT_TRUE(scope.status().ok());
  int trap = RunGuarded(
      +[](void*) {
        volatile uint64_t spin = 0;
        for (;;) spin = spin + 1;
      },
      nullptr);
  EXPECT_EQ(trap, kTrapHardDeadline);
  EXPECT_TRUE(ThreadHardDeadlineHit());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST_F(WasmRuntimeTest, DeadlineInsideHostCodeIsDeferredToTheImport) {
  const auto start = std::chrono::steady_clock::now();
  RunScope scope({.hard_deadline = start + std::chrono::milliseconds(20)});
  int trap = RunGuarded(
      +[](void*) {
        {
          HostSection host;  // the signal must not longjmp out of here
          std::this_thread::sleep_for(std::chrono::milliseconds(60));
        }
        TrapIfDeadlinePending();
        ADD_FAILURE() << "the pending deadline did not trap";
      },
      nullptr);
  EXPECT_EQ(trap, kTrapHardDeadline);
}

TEST_F(WasmRuntimeTest, EachThreadTrapsOnItsOwn) {
  std::vector<std::thread> threads;
  std::atomic<int> traps{0};
  for (int i = 0; i < 4; i++) {
    threads.emplace_back([&traps] {
      RunScope scope({});
      wasm_rt_memory_t memory;
      if (GuardedAllocate(&memory, 1, 2) != 0) return;
      for (int round = 0; round < 100; round++) {
        Access access{&memory, kPageSize + 8};
        if (RunGuarded(
                +[](void* p) {
                  auto* a = static_cast<Access*>(p);
                  *reinterpret_cast<volatile uint8_t*>(a->memory->data + a->offset) = 1;
                },
                &access) == WASM_RT_TRAP_OOB) {
          traps++;
        }
      }
      wasm_rt_free_memory(&memory);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(traps.load(), 400);
}

using WasmRuntimeDeathTest = WasmRuntimeTest;

TEST_F(WasmRuntimeDeathTest, FaultOutsideGuestMemoryIsNotClaimed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        RunScope scope({});
        wasm_rt_memory_t memory;
        GuardedAllocate(&memory, 1, 2);
        void* elsewhere = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        RunGuarded(
            +[](void* p) { *static_cast<volatile int*>(p) = 1; }, elsewhere);
      },
      "");
}

TEST_F(WasmRuntimeDeathTest, FaultInGuestMemoryFromHostCodeIsNotClaimed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        RunScope scope({});
        wasm_rt_memory_t memory;
        GuardedAllocate(&memory, 1, 2);
        // Not inside RunGuarded: a host bug, which must crash.
        *reinterpret_cast<volatile uint8_t*>(memory.data + 3 * kPageSize) = 1;
      },
      "");
}

long StatusField(const std::string& name) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(name + ":", 0) == 0) return std::stol(line.substr(name.size() + 1));
  }
  return -1;
}

TEST_F(WasmRuntimeTest, MemoriesAreReleasedCompletely) {
  RunScope scope({});
  auto cycle = [] {
    wasm_rt_memory_t memory;
    ASSERT_EQ(GuardedAllocate(&memory, 16, 256), 0);
    ASSERT_NE(wasm_rt_grow_memory(&memory, 16), UINT32_MAX);
    for (uint64_t page = 0; page < 32; page++) memory.data[page * kPageSize] = 1;
    wasm_rt_free_memory(&memory);
  };
  for (int i = 0; i < 100; i++) cycle();
  const long vm_before = StatusField("VmSize");
  const long rss_before = StatusField("VmRSS");
  for (int i = 0; i < 20000; i++) cycle();  // 20000 x 8 GiB would not fit
  const long vm_after = StatusField("VmSize");
  const long rss_after = StatusField("VmRSS");
  EXPECT_LE(vm_after - vm_before, 1024) << "VmSize grew (kB)";
  EXPECT_LE(rss_after - rss_before, 4096) << "VmRSS grew (kB)";
  EXPECT_EQ(ThreadLiveReservations(), 0);
}

}  // namespace
}  // namespace plimsoll::engine::wasm
