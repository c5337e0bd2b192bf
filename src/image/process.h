// Running the external tools the image build needs (mmdebstrap, cp).
//
// Usage:
//   auto status = image::RunProcess({"cp", "-a", from, to}, {});
//   auto text = image::CaptureOutput({"mmdebstrap", "--version"});
//
// The child inherits stdin/stdout/stderr (so a tool's progress shows), plus
// `extra_environment` ("KEY=VALUE") on top of ours. Blocking; reentrant.
#ifndef PLIMSOLL_IMAGE_PROCESS_H_
#define PLIMSOLL_IMAGE_PROCESS_H_

#include <string>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::image {

// Runs argv (argv[0] looked up in PATH) to completion; fails unless it
// exits 0. The error names the command and how it ended.
Status RunProcess(const std::vector<std::string>& argv,
                  const std::vector<std::string>& extra_environment);

// Runs argv with stdout captured (stderr inherited); fails unless it exits 0.
Expected<std::string> CaptureOutput(const std::vector<std::string>& argv);

}  // namespace plimsoll::image

#endif  // PLIMSOLL_IMAGE_PROCESS_H_
