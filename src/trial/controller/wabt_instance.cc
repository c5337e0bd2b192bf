// C++17: see wabt_instance.h.
#include "trial/controller/wabt_instance.h"

#include <map>
#include <utility>

#include "wabt/binary-reader.h"
#include "wabt/interp/binary-reader-interp.h"
#include "wabt/interp/interp.h"

namespace plimsoll::trial {

namespace interp = wabt::interp;

struct WabtInstance::State {
  interp::Store store;
  interp::Instance::Ptr instance;
  std::map<std::string, interp::Func::Ptr> functions;
  interp::Memory::Ptr memory;
};

WabtInstance::WabtInstance(std::unique_ptr<State> state) : state_(std::move(state)) {}
WabtInstance::~WabtInstance() = default;

std::unique_ptr<WabtInstance> WabtInstance::Instantiate(const uint8_t* bytes, size_t size,
                                                        std::string* error) {
  auto state = std::make_unique<State>();
  const wabt::Features features;
  const wabt::ReadBinaryOptions options(features, nullptr, false, true, false);
  wabt::Errors errors;
  interp::ModuleDesc desc;
  if (wabt::Failed(
          interp::ReadBinaryInterp("controller.wasm", bytes, size, options, &errors, &desc))) {
    *error = "not valid WebAssembly: " + (errors.empty() ? "unreadable" : errors.front().message);
    return nullptr;
  }
  if (!desc.imports.empty()) {
    *error = "it imports something";
    return nullptr;
  }
  interp::Module::Ptr module = interp::Module::New(state->store, std::move(desc));
  interp::Trap::Ptr trap;
  state->instance = interp::Instance::Instantiate(state->store, module.ref(), {}, &trap);
  if (!state->instance) {
    *error = "it could not be instantiated: " + (trap ? trap->message() : "unknown reason");
    return nullptr;
  }
  const auto& exports = module->export_types();
  for (size_t i = 0; i < exports.size(); ++i) {
    const interp::Ref ref = state->instance->exports()[i];
    if (state->store.Is<interp::Func>(ref)) {
      state->functions[exports[i].name] = state->store.UnsafeGet<interp::Func>(ref);
    } else if (exports[i].name == "memory" && state->store.Is<interp::Memory>(ref)) {
      state->memory = state->store.UnsafeGet<interp::Memory>(ref);
    }
  }
  return std::unique_ptr<WabtInstance>(new WabtInstance(std::move(state)));
}

bool WabtInstance::Call(const std::string& name, const std::vector<uint32_t>& arguments,
                        uint32_t* result, std::string* error) {
  const auto found = state_->functions.find(name);
  if (found == state_->functions.end()) {
    *error = "no exported function " + name;
    return false;
  }
  interp::Values params, results;
  for (uint32_t argument : arguments) params.push_back(interp::Value::Make(argument));
  interp::Trap::Ptr trap;
  if (wabt::Failed(found->second->Call(state_->store, params, results, &trap))) {
    *error = name + " trapped: " + (trap ? trap->message() : "unknown trap");
    return false;
  }
  if (result != nullptr) *result = results.empty() ? 0 : results[0].Get<uint32_t>();
  return true;
}

uint8_t* WabtInstance::memory_data() {
  return state_->memory ? state_->memory->UnsafeData() : nullptr;
}
uint64_t WabtInstance::memory_bytes() {
  return state_->memory ? state_->memory->ByteSize() : 0;
}
uint64_t WabtInstance::memory_max_pages() {
  if (!state_->memory) return 0;
  const wabt::Limits& limits = state_->memory->type().limits;
  return limits.has_max ? limits.max : 0;
}

}  // namespace plimsoll::trial
