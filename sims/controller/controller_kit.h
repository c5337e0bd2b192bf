// What plimsoll-cc carries inside itself to link a C controller
// (c_controller.h): the host (controller_host.cc with plimsoll's wasm2c
// runtime, a static archive built with the rest of plimsoll), the shim
// compiled beside each controller (controller_shim.{c,h}), the wasm2c
// prelude and wasm-rt.h the host was built against. Embedded at build time
// (controller_kit_data.cc.in: .incbin), so the image carries one static binary and
// its digest covers the kit; plimsoll-cc writes the files into its work
// directory for each compile.
#ifndef PLIMSOLL_SIMS_CONTROLLER_CONTROLLER_KIT_H_
#define PLIMSOLL_SIMS_CONTROLLER_CONTROLLER_KIT_H_

#include <filesystem>
#include <span>
#include <string_view>

#include "plimsoll/error.h"

namespace plimsoll::sims {

struct KitFile {
  std::string_view name;  // a file name, no directory
  std::string_view bytes;
};

inline constexpr std::string_view kKitHostArchive = "libplimsoll_controller_host.a";

// The kit's files: the host archive, controller_shim.c,
// controller_shim.h, wasm2c_prelude.h and wasm-rt.h.
std::span<const KitFile> ControllerKit();

// Writes every kit file into `directory` (which must exist).
Status WriteControllerKit(const std::filesystem::path& directory);

}  // namespace plimsoll::sims

#endif  // PLIMSOLL_SIMS_CONTROLLER_CONTROLLER_KIT_H_
