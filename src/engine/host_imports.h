// The host side of the guest module's imports: WASI (fd_write into capped
// buffers and the displays, clocks, randomness, no args/environ, EBADF for every other file
// operation) and plimsoll's own (deadline poll, timer sleep, host_call).
//
// The module instance receives pointers to the two import "instances"
// below; both point at the run's HostContext. Every guest pointer is
// bounds-checked against the current linear memory before use: the guest is
// untrusted, a bad pointer gets WASI's EFAULT, never a host fault.
#ifndef PLIMSOLL_ENGINE_HOST_IMPORTS_H_
#define PLIMSOLL_ENGINE_HOST_IMPORTS_H_

#include <wasm-rt.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace plimsoll::engine {

// State of one run, owned by the caller of EvaluateJavascript's worker; the
// guest reaches it only through the imports.
struct HostContext {
  wasm_rt_memory_t* memory = nullptr;  // set once the instance exists
  size_t output_cap_bytes = 0;
  std::string output[2];  // stdout, stderr
  bool truncated[2] = {false, false};
  std::chrono::steady_clock::time_point soft_deadline{};
  const HostCallHandler* host_call = nullptr;  // null: no grant
  std::string response;                        // last host_call answer
  bool exited = false;                         // proc_exit was called
  int exit_status = 0;
  // Sessions only: the cell's value channel (PLIMSOLL_VALUE_FD), capped at
  // value_cap_bytes; writes to it are EBADF when value_channel is false.
  bool value_channel = false;
  size_t value_cap_bytes = 0;
  std::string value;
  bool value_written = false;
  bool value_truncated = false;
  // What display() showed (PLIMSOLL_DISPLAY_FD, one write each): at most
  // kMaxDisplays and kMaxDisplayBytes of data; one past them is dropped and
  // sets displays_truncated; one with a malformed MIME type is dropped.
  std::vector<Display> displays;
  size_t display_bytes = 0;
  bool displays_truncated = false;
};

}  // namespace plimsoll::engine

// The opaque import-instance types named by wasm2c's generated header.
struct Z_plimsoll_instance_t {
  plimsoll::engine::HostContext* context;
};
struct Z_wasi_snapshot_preview1_instance_t {
  plimsoll::engine::HostContext* context;
};

#endif  // PLIMSOLL_ENGINE_HOST_IMPORTS_H_
