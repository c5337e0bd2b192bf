// Writing a kernel control file (cgroupfs, /proc/<pid>/uid_map, ...): one
// write(2) of the whole text to a file that must already exist. The kernel
// takes such a write whole or refuses it, so a short write is an error too.
//
// Usage: PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(dir + "/pids.max", "64"));
#ifndef PLIMSOLL_OS_KERNEL_FILE_H_
#define PLIMSOLL_OS_KERNEL_FILE_H_

#include <string>
#include <string_view>

#include "plimsoll/error.h"

namespace plimsoll::os {

// Opens `path` write-only (never creating it) and writes `text` in one call.
// The error names the path and, for a refused write, the text.
Status WriteKernelFile(const std::string& path, std::string_view text);

}  // namespace plimsoll::os

#endif  // PLIMSOLL_OS_KERNEL_FILE_H_
