// One instance of a WebAssembly module on wabt's interpreter (libwabt, the
// Debian wabt package), for WasmController (wasm_controller.h).
//
// This header and wabt_instance.cc are C++17 and include nothing of
// plimsoll's: wabt 1.0.32's interpreter headers do not compile as C++20 with
// GCC 12 (a template-id destructor), so that translation unit is built with
// -std=c++17 and this is its whole surface. Errors are strings.
//
// Thread-safety: one owner.
#ifndef PLIMSOLL_TRIAL_CONTROLLER_WABT_INSTANCE_H_
#define PLIMSOLL_TRIAL_CONTROLLER_WABT_INSTANCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace plimsoll::trial {

class WabtInstance {
 public:
  // Reads and instantiates `bytes` with no imports. Null, with `*error`
  // set, when the module is invalid, imports something or traps while
  // instantiating.
  static std::unique_ptr<WabtInstance> Instantiate(const uint8_t* bytes, size_t size,
                                                   std::string* error);
  ~WabtInstance();

  // Calls the exported function `name` with `arguments` (i32 each). On
  // success `*result` (if not null) gets its first result as an i32.
  // False, with `*error` set, for a missing export or a trap (the
  // interpreter's value and call stacks are 64 KiB each: deeper recursion
  // traps).
  bool Call(const std::string& name, const std::vector<uint32_t>& arguments, uint32_t* result,
            std::string* error);

  // The exported memory "memory" (null/0 without one): its bytes, valid
  // until the next call; its size; its declared maximum in pages (0: none).
  uint8_t* memory_data();
  uint64_t memory_bytes();
  uint64_t memory_max_pages();

 private:
  struct State;
  explicit WabtInstance(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_CONTROLLER_WABT_INSTANCE_H_
