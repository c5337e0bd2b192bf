#include "trial/controller/wasm_controller.h"

#include <cstring>
#include <string>

#include "trial/controller/wabt_instance.h"
#include "trial/controller/wasm_module.h"

namespace plimsoll::trial {
namespace {

Error ModuleError(std::string message) {
  return Error(ErrorCode::kInvalidArgument, std::move(message));
}

}  // namespace

WasmController::WasmController(std::unique_ptr<WabtInstance> instance)
    : instance_(std::move(instance)) {}
WasmController::~WasmController() = default;

Expected<std::unique_ptr<WasmController>> WasmController::Load(std::span<const uint8_t> module) {
  Expected<WasmModuleInfo> info = ReadWasmModule(module);
  if (!info.ok()) return info.error();
  PLIMSOLL_RETURN_IF_ERROR(CheckControllerModule(*info));
  std::string error;
  std::unique_ptr<WabtInstance> instance =
      WabtInstance::Instantiate(module.data(), module.size(), &error);
  if (instance == nullptr) return ModuleError("The module was refused: " + error + ".");
  const uint64_t max_pages = instance->memory_max_pages();
  if (max_pages == 0 || max_pages > kControllerMemoryPages) {
    return ModuleError("The module's memory may grow past " +
                       std::to_string(kControllerMemoryPages) +
                       " pages (16 MiB); plimsoll-cc links with --max-memory=16777216.");
  }
  uint32_t buffer = 0, width = 0, inputs = 0;
  if (!instance->Call("_initialize", {}, nullptr, &error) ||
      !instance->Call("plimsoll_buffer", {}, &buffer, &error) ||
      !instance->Call("plimsoll_state_width", {}, &width, &error) ||
      !instance->Call("plimsoll_input_count", {}, &inputs, &error)) {
    return ModuleError("The module failed while starting: " + error + ".");
  }
  const uint64_t end = uint64_t{buffer} + sizeof(double) * kExchangeDoubles;
  if (buffer % alignof(double) != 0 || end > instance->memory_bytes() || width == 0 ||
      width > kInputsAt || inputs == 0 || inputs > kExchangeDoubles - kInputsAt) {
    return ModuleError("The module's exchange buffer or shape is not plimsoll-cc's.");
  }
  auto controller = std::unique_ptr<WasmController>(new WasmController(std::move(instance)));
  controller->buffer_ = buffer;
  controller->shape_ = {width, inputs};
  return controller;
}

Expected<std::vector<double>> WasmController::Control(std::span<const double> state,
                                                      uint32_t tick) {
  if (state.size() != shape_.state_width) {
    return ModuleError("The state has " + std::to_string(state.size()) + " values, not " +
                       std::to_string(shape_.state_width) + ".");
  }
  // The buffer stays inside memory: memory never shrinks. Its bytes may
  // move when the module grows its memory: re-read after the call.
  std::memcpy(instance_->memory_data() + buffer_, state.data(), state.size_bytes());
  std::string error;
  if (!instance_->Call("plimsoll_control", {tick}, nullptr, &error)) {
    return ModuleError("control " + error.substr(error.find(' ') + 1) + ".");
  }
  std::vector<double> inputs(shape_.input_count);
  std::memcpy(inputs.data(), instance_->memory_data() + buffer_ + sizeof(double) * kInputsAt,
              sizeof(double) * inputs.size());
  return inputs;
}

}  // namespace plimsoll::trial
