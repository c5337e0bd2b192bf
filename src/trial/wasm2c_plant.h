// Wasm2cPlant: the Plant interface over one wasm2c-translated plant module.
// Each plant file fills a Wasm2cExports table with its generated names
// (Z_NAME_instantiate, Z_NAMEZ_plant_init, ...) and calls Create; the
// template does the rest (guarded calls, the exchange buffer, the checks).
//
// Usage (cartpole_plant.cc; PLIMSOLL_WASM2C_PLANT_EXPORTS, in sims/
// wasm2c_exports.h, fills the table from the module's name):
//   static const auto kExports = PLIMSOLL_WASM2C_PLANT_EXPORTS(cartpole);
//   return Wasm2cPlant<Z_cartpole_instance_t>::Create("cartpole", kExports);
//
// A plant module imports nothing, so instantiate takes the instance alone.
// The instance holds the creating thread's wasm RunScope (memory limited to
// kPlantMemoryPages; no hard deadline): one plant alive per thread.
#ifndef PLIMSOLL_TRIAL_WASM2C_PLANT_H_
#define PLIMSOLL_TRIAL_WASM2C_PLANT_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "engine/runtime/wasm_runtime.h"
#include "plant_abi.h"
#include "plimsoll/error.h"
#include "trial/plant.h"
#include "wasm-rt.h"
#include "wasm2c_exports.h"

namespace plimsoll::trial {

// A plant's memory never grows (plant_abi.h): its stack and data fit in a
// few pages. The limit only bounds a broken module.
inline constexpr uint32_t kPlantMemoryPages = 16;

template <typename Instance>
class Wasm2cPlant final : public Plant {
 public:
  // `exports` must outlive the plant (a static table).
  static Expected<std::unique_ptr<Plant>> Create(std::string_view name,
                                                 const sims::Wasm2cExports<Instance>& exports) {
    PLIMSOLL_RETURN_IF_ERROR(engine::wasm::EnsureInitialized());
    static const bool module_ready = (exports.init_module(), true);  // once per module
    (void)module_ready;
    std::unique_ptr<Wasm2cPlant> plant(new Wasm2cPlant(name, exports));
    PLIMSOLL_RETURN_IF_ERROR(plant->Start());
    return std::unique_ptr<Plant>(std::move(plant));
  }

  ~Wasm2cPlant() override {
    if (instantiated_) exports_.free(&instance_);
  }
  Wasm2cPlant(const Wasm2cPlant&) = delete;
  Wasm2cPlant& operator=(const Wasm2cPlant&) = delete;

  std::string_view name() const override { return name_; }
  const PlantShape& shape() const override { return shape_; }

  Expected<int32_t> Init(std::span<const double> parameters) override {
    if (parameters.size() > PLANT_BUFFER_DOUBLES) {
      return Refusal(NotDispatched::kRequest, ErrorCode::kInvalidArgument,
                     "The scenario has " + std::to_string(parameters.size()) +
                         " parameters; a plant takes at most " +
                         std::to_string(PLANT_BUFFER_DOUBLES) + ".");
    }
    PLIMSOLL_RETURN_IF_ERROR(CheckUsable());
    if (!parameters.empty()) std::memcpy(Buffer(), parameters.data(), parameters.size_bytes());
    uint32_t result = 0;
    PLIMSOLL_RETURN_IF_ERROR(Call("plant_init", [&] {
      result = exports_.init(&instance_, static_cast<uint32_t>(parameters.size()));
    }));
    return static_cast<int32_t>(result);
  }

  Expected<double> TickSeconds() override {
    return GetDouble("plant_tick_seconds", exports_.tick_seconds);
  }
  Expected<double> EndSeconds() override {
    return GetDouble("plant_end_seconds", exports_.end_seconds);
  }
  Expected<double> Score() override { return GetDouble("plant_score", exports_.score); }

  Expected<int32_t> Ticks() override {
    PLIMSOLL_RETURN_IF_ERROR(CheckUsable());
    uint32_t ticks = 0;
    PLIMSOLL_RETURN_IF_ERROR(Call("plant_ticks", [&] { ticks = exports_.ticks(&instance_); }));
    return static_cast<int32_t>(ticks);
  }

  Status ReadState(std::span<double> state) override {
    PLIMSOLL_RETURN_IF_ERROR(CheckUsable());
    uint32_t width = 0;
    PLIMSOLL_RETURN_IF_ERROR(
        Call("plant_read_state", [&] { width = exports_.read_state(&instance_); }));
    if (static_cast<int32_t>(width) != shape_.state_width ||
        state.size() != static_cast<size_t>(shape_.state_width)) {
      return Failure(ErrorCode::kInternal, "The " + name_ + " plant's plant_read_state answered " +
                                               std::to_string(static_cast<int32_t>(width)) +
                                               " for a state of width " +
                                               std::to_string(shape_.state_width) + ".");
    }
    std::memcpy(state.data(), Buffer(), state.size_bytes());
    return Status::Ok();
  }

  Expected<int32_t> Step(std::span<const double> inputs, std::span<double> applied) override {
    PLIMSOLL_RETURN_IF_ERROR(CheckUsable());
    if (inputs.size() != static_cast<size_t>(shape_.input_count) ||
        applied.size() != inputs.size()) {
      return Failure(ErrorCode::kInternal, "Step was given the wrong number of inputs.");
    }
    std::memcpy(Buffer(), inputs.data(), inputs.size_bytes());
    uint32_t result = 0;
    PLIMSOLL_RETURN_IF_ERROR(Call("plant_step", [&] { result = exports_.step(&instance_); }));
    std::memcpy(applied.data(), Buffer(), applied.size_bytes());
    return static_cast<int32_t>(result);
  }

 private:
  Wasm2cPlant(std::string_view name, const sims::Wasm2cExports<Instance>& exports)
      : name_(name), exports_(exports), scope_(Options()) {}

  static engine::wasm::RunOptions Options() {
    engine::wasm::RunOptions options;
    options.memory_limit_pages = kPlantMemoryPages;
    return options;
  }

  Status Start() {
    PLIMSOLL_RETURN_IF_ERROR(scope_.status());
    instantiated_ = true;  // free() is safe on a partly built instance
    uint32_t version = 0, address = 0, params = 0, width = 0, inputs = 0;
    PLIMSOLL_RETURN_IF_ERROR(Call("instantiate", [&] {
      exports_.instantiate(&instance_);
      exports_.initialize(&instance_);
      version = exports_.abi_version(&instance_);
      address = exports_.buffer(&instance_);
      params = exports_.param_count(&instance_);
      width = exports_.state_width(&instance_);
      inputs = exports_.input_count(&instance_);
    }));
    if (version != PLANT_ABI_VERSION) {
      return Broken("was built for plant ABI version " + std::to_string(version) + ", not " +
                    std::to_string(PLANT_ABI_VERSION));
    }
    wasm_rt_memory_t* memory = exports_.memory(&instance_);
    const uint64_t end = uint64_t{address} + sizeof(double) * PLANT_BUFFER_DOUBLES;
    if (memory == nullptr || address % alignof(double) != 0 || end > memory->size) {
      return Broken("has its exchange buffer outside its linear memory");
    }
    auto fits = [](uint32_t count) { return count >= 1 && count <= PLANT_BUFFER_DOUBLES; };
    if (params > PLANT_BUFFER_DOUBLES || !fits(width) || !fits(inputs)) {
      return Broken("reports a shape outside the exchange buffer");
    }
    buffer_ = memory->data + address;
    shape_ = {static_cast<int32_t>(params), static_cast<int32_t>(width),
              static_cast<int32_t>(inputs)};
    return Status::Ok();
  }

  uint8_t* Buffer() { return buffer_; }

  Status CheckUsable() const {
    if (buffer_ == nullptr) {
      return Failure(ErrorCode::kInternal,
                     "The " + name_ + " plant is not usable (it trapped or never started).");
    }
    return Status::Ok();
  }

  Status Broken(const std::string& what) {
    buffer_ = nullptr;
    return Failure(ErrorCode::kInternal, "The " + name_ + " plant module " + what + ".");
  }

  template <typename Fn>
  Status Call(std::string_view what, Fn fn) {
    const int trap =
        engine::wasm::RunGuarded([](void* argument) { (*static_cast<Fn*>(argument))(); }, &fn);
    if (trap == 0) return Status::Ok();
    buffer_ = nullptr;  // never call into a trapped instance again
    return Broken("trapped in " + std::string(what) + " (trap code " + std::to_string(trap) + ")");
  }

  Expected<double> GetDouble(std::string_view what, double (*function)(Instance*)) {
    PLIMSOLL_RETURN_IF_ERROR(CheckUsable());
    double value = 0;
    PLIMSOLL_RETURN_IF_ERROR(Call(what, [&] { value = function(&instance_); }));
    return value;
  }

  std::string name_;
  const sims::Wasm2cExports<Instance>& exports_;
  engine::wasm::RunScope scope_;  // before the instance: its memory lives in this scope
  Instance instance_ = {};
  bool instantiated_ = false;
  uint8_t* buffer_ = nullptr;
  PlantShape shape_;
};

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_WASM2C_PLANT_H_
