// PlantUnderTest: one instance of a wasm2c-translated plant module, for the
// plant tests (sims/NAME/NAME_test.cc), which call its exports directly and
// check their raw answers: the PLANT_* codes of plant_abi.h, which the
// runner's Wasm2cPlant (src/trial/wasm2c_plant.h) turns into errors. Built
// from the module's export table (wasm2c_exports.h); does what every plant
// test needs before its first check: the once-per-module init_module, a
// RunScope, instantiate and _initialize, the ABI version and the exchange
// buffer's place in linear memory. Every call runs guarded.
//
// For tests only: it includes <gtest/gtest.h> and reports what goes wrong
// underneath a test (a trap, a runtime that would not start, another ABI
// version, a buffer outside memory) as a googletest failure of the running
// test (ADD_FAILURE, EXPECT_EQ). After a failed start ok() is false and the
// calls answer PLANT_ERROR_NOT_READY (or 0) without entering the module.
//
// Usage:
//   const auto kExports = PLIMSOLL_WASM2C_PLANT_EXPORTS(cartpole);
//   testing::PlantUnderTest<Z_cartpole_instance_t> plant(kExports);
//   ASSERT_TRUE(plant.ok());
//   EXPECT_EQ(plant.Init(scenario), PLANT_OK);
//   std::array<double, 4> state;
//   EXPECT_EQ(plant.ReadState(state), 4);
//   EXPECT_EQ(plant.Step(force), PLANT_RUNNING);
//
// A plant test names its plant with PlantOf, which reads the state as an
// std::array (and is default-constructible, as the shared checks need):
//   using CartPolePlant = testing::PlantOf<kExports, 4>;
//   CartPolePlant plant;
//   const CartPolePlant::State state = plant.ReadState();
//
// Each instance holds a wasm RunScope of its own (memory limited to 16
// pages, no hard deadline): one alive per thread at a time (RunScope does
// not nest).
#ifndef PLIMSOLL_SIMS_PLANT_UNDER_TEST_H_
#define PLIMSOLL_SIMS_PLANT_UNDER_TEST_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>

#include "engine/runtime/wasm_runtime.h"
#include "plant_abi.h"
#include "wasm-rt.h"
#include "wasm2c_exports.h"

namespace plimsoll::sims::testing {

template <typename Instance>
class PlantUnderTest {
 public:
  // `exports` must outlive the plant (a static table).
  explicit PlantUnderTest(const Wasm2cExports<Instance>& exports)
      : exports_(exports), scope_(Options()) {
    if (!ModuleReady(exports_) || !scope_.status().ok()) {
      ADD_FAILURE() << "the wasm runtime could not be initialised";
      return;
    }
    // A plant module imports nothing: instantiate takes the instance alone
    // (PLIMSOLL_WASM2C_PLANT_EXPORTS stops compiling if one ever gains one).
    instantiated_ = true;  // free() is safe on a partly built instance
    Call([this] {
      exports_.instantiate(&instance_);
      exports_.initialize(&instance_);
    });
    int32_t version = 0;
    uint32_t address = 0;
    Call([&] {
      version = static_cast<int32_t>(exports_.abi_version(&instance_));
      address = exports_.buffer(&instance_);
    });
    EXPECT_EQ(version, PLANT_ABI_VERSION);
    wasm_rt_memory_t* memory = exports_.memory(&instance_);
    const uint64_t end = uint64_t{address} + sizeof(double) * PLANT_BUFFER_DOUBLES;
    if (memory == nullptr || address % alignof(double) != 0 || end > memory->size) {
      ADD_FAILURE() << "the exchange buffer at " << address << " is not inside linear memory";
      return;
    }
    buffer_ = memory->data + address;
  }
  ~PlantUnderTest() {
    if (instantiated_) exports_.free(&instance_);
  }
  PlantUnderTest(const PlantUnderTest&) = delete;
  PlantUnderTest& operator=(const PlantUnderTest&) = delete;

  // Whether the instance started: every check of its start passed.
  bool ok() const { return buffer_ != nullptr; }

  // plant_init with `params` written to the buffer and their count.
  int32_t Init(std::span<const double> params) {
    if (!ok()) return PLANT_ERROR_NOT_READY;
    if (params.size() > PLANT_BUFFER_DOUBLES) {
      ADD_FAILURE() << params.size() << " parameters do not fit the exchange buffer";
      return PLANT_ERROR_COUNT;
    }
    if (!params.empty()) std::memcpy(buffer_, params.data(), params.size_bytes());
    return InitWithCount(static_cast<int32_t>(params.size()));
  }
  // plant_init with `count` and nothing written (for the count checks).
  int32_t InitWithCount(int32_t count) {
    if (!ok()) return PLANT_ERROR_NOT_READY;
    uint32_t result = 0;
    Call([&] { result = exports_.init(&instance_, static_cast<uint32_t>(count)); });
    return static_cast<int32_t>(result);
  }

  // plant_read_state's answer. When it is the state's width and that is
  // state.size(), `state` gets the state; otherwise it is filled with NaN.
  int32_t ReadState(std::span<double> state) {
    std::fill(state.begin(), state.end(), std::numeric_limits<double>::quiet_NaN());
    if (!ok()) return PLANT_ERROR_NOT_READY;
    uint32_t answer = 0;
    Call([&] { answer = exports_.read_state(&instance_); });
    const int32_t width = static_cast<int32_t>(answer);
    if (width >= 0 && static_cast<size_t>(width) == state.size() &&
        state.size() <= PLANT_BUFFER_DOUBLES) {
      std::memcpy(state.data(), buffer_, state.size_bytes());
    }
    return width;
  }

  // plant_step with `inputs` written to the buffer; `applied` (if not
  // empty) gets the first applied.size() values the plant left there: the
  // inputs as it applied them.
  int32_t Step(std::span<const double> inputs, std::span<double> applied = {}) {
    if (!ok()) return PLANT_ERROR_NOT_READY;
    if (inputs.size() > PLANT_BUFFER_DOUBLES || applied.size() > PLANT_BUFFER_DOUBLES) {
      ADD_FAILURE() << "Step was given more values than the exchange buffer holds";
      return PLANT_ERROR_COUNT;
    }
    std::memcpy(buffer_, inputs.data(), inputs.size_bytes());
    uint32_t result = 0;
    Call([&] { result = exports_.step(&instance_); });
    if (!applied.empty()) std::memcpy(applied.data(), buffer_, applied.size_bytes());
    return static_cast<int32_t>(result);
  }
  // The same for a plant with one input; `applied` (if not null) gets it
  // as the plant applied it.
  int32_t Step(double input, double* applied = nullptr) {
    return Step(std::span<const double>(&input, 1),
                applied == nullptr ? std::span<double>() : std::span<double>(applied, 1));
  }

  int32_t ParamCount() { return static_cast<int32_t>(Get<uint32_t>(exports_.param_count)); }
  int32_t StateWidth() { return static_cast<int32_t>(Get<uint32_t>(exports_.state_width)); }
  int32_t InputCount() { return static_cast<int32_t>(Get<uint32_t>(exports_.input_count)); }
  double TickSeconds() { return Get<double>(exports_.tick_seconds); }
  double EndSeconds() { return Get<double>(exports_.end_seconds); }
  int32_t Ticks() { return static_cast<int32_t>(Get<uint32_t>(exports_.ticks)); }
  double Score() { return Get<double>(exports_.score); }

 private:
  static engine::wasm::RunOptions Options() {
    engine::wasm::RunOptions options;
    options.memory_limit_pages = 16;  // a plant needs 2 (stack, data)
    return options;
  }

  // The runtime, then the module's function types: once per module.
  static bool ModuleReady(const Wasm2cExports<Instance>& exports) {
    static const bool ready = [&exports] {
      if (!engine::wasm::EnsureInitialized().ok()) return false;
      exports.init_module();
      return true;
    }();
    return ready;
  }

  // Runs fn() as guest code; a trap is a test failure.
  template <typename Fn>
  void Call(Fn fn) {
    const int trap =
        engine::wasm::RunGuarded([](void* argument) { (*static_cast<Fn*>(argument))(); }, &fn);
    if (trap != 0) ADD_FAILURE() << "the plant trapped: code " << trap;
  }

  template <typename T>
  T Get(T (*function)(Instance*)) {
    if (!ok()) return T{};
    T value{};
    Call([&] { value = function(&instance_); });
    return value;
  }

  const Wasm2cExports<Instance>& exports_;
  engine::wasm::RunScope scope_;  // before the instance: its memory lives in this scope
  Instance instance_ = {};
  bool instantiated_ = false;
  uint8_t* buffer_ = nullptr;
};

namespace internal {
template <typename Exports>
struct InstanceOf;
template <typename Instance>
struct InstanceOf<Wasm2cExports<Instance>> {
  using type = Instance;
};
}  // namespace internal

// The plant of the export table kExports (a static Wasm2cExports, from
// PLIMSOLL_WASM2C_PLANT_EXPORTS) with a state of kStateWidth values:
// default-constructible, and its ReadState() answers the state as a State.
// A plant with several inputs may derive from it to add a Step for an
// std::array of inputs.
template <const auto& kExports>
using PlantUnderTestOf =
    PlantUnderTest<typename internal::InstanceOf<std::remove_cvref_t<decltype(kExports)>>::type>;

template <const auto& kExports, size_t kStateWidth>
class PlantOf : public PlantUnderTestOf<kExports> {
  using Base = PlantUnderTestOf<kExports>;

 public:
  using State = std::array<double, kStateWidth>;

  PlantOf() : Base(kExports) {}

  // The state (NaN unless read); `result` gets plant_read_state's answer.
  State ReadState(int32_t* result = nullptr) {
    State state;
    const int32_t answer = Base::ReadState(state);
    if (result != nullptr) *result = answer;
    return state;
  }
};

}  // namespace plimsoll::sims::testing

#endif  // PLIMSOLL_SIMS_PLANT_UNDER_TEST_H_
