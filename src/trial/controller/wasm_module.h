// What plimsoll-cc needs to know of a compiled C controller's WebAssembly
// module before it translates it (docs/exams.md, "C controllers"): its
// imports (a controller may have none: it gets no clock, no file, no host
// function) and its exported functions with their signatures. It reads the
// module's type, import, function and export sections and nothing else;
// validating the rest is wasm2c's job, which refuses a malformed module.
//
// The bytes are the guest's (its own compiler's output), so the reader is
// strict and bounded: every length is checked against what is left, counts
// are capped, and a module that is not wasm 1.0 binary is an error, never
// a crash.
//
// Usage:
//   Expected<WasmModuleInfo> info = ReadWasmModule(bytes);
//   if (!info->imports.empty()) refuse(info->imports[0].module + "." + ...);
//   const WasmExport* control = info->FindExport("plimsoll_control");
#ifndef PLIMSOLL_TRIAL_CONTROLLER_WASM_MODULE_H_
#define PLIMSOLL_TRIAL_CONTROLLER_WASM_MODULE_H_

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::trial {

// The largest module ReadWasmModule accepts (a controller is a few KiB).
inline constexpr size_t kMaxWasmModuleBytes = 16 * 1024 * 1024;

enum class WasmExternKind : uint8_t { kFunction = 0, kTable = 1, kMemory = 2, kGlobal = 3 };

// wasm value types by their binary code (0x7f i32, 0x7e i64, 0x7d f32,
// 0x7c f64, 0x7b v128, 0x70 funcref, 0x6f externref).
using WasmValueType = uint8_t;
inline constexpr WasmValueType kWasmI32 = 0x7f;
inline constexpr WasmValueType kWasmF64 = 0x7c;

struct WasmSignature {
  std::vector<WasmValueType> params;
  std::vector<WasmValueType> results;
  bool operator==(const WasmSignature&) const = default;
};

struct WasmImport {
  std::string module;
  std::string name;
  WasmExternKind kind;
};

struct WasmExport {
  std::string name;
  WasmExternKind kind;
  uint32_t index;           // in its kind's index space
  WasmSignature signature;  // functions only
};

struct WasmModuleInfo {
  std::vector<WasmImport> imports;
  std::vector<WasmExport> exports;

  // The export named `name`, or null.
  const WasmExport* FindExport(std::string_view name) const;
};

// Reads `bytes` as a wasm 1.0 binary module. Errors (kInvalidArgument):
// not a wasm 1.0 module, a section or entry running past its end, a
// duplicated or out-of-order known section, more than 100,000 entries in a
// section, an exported function whose index or type does not exist, or a
// module over kMaxWasmModuleBytes; each names the section and what is wrong.
Expected<WasmModuleInfo> ReadWasmModule(std::span<const uint8_t> bytes);

// The bytes of the file at `path`, reading at most kMaxWasmModuleBytes + 1
// (so ReadWasmModule refuses a larger one). Errors (kInvalidArgument):
// the file cannot be opened or read.
Expected<std::vector<uint8_t>> ReadWasmFile(const std::filesystem::path& path);

// "(f64, f64, i32) -> f64": a signature as people read it.
std::string DescribeSignature(const WasmSignature& signature);

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_CONTROLLER_WASM_MODULE_H_
