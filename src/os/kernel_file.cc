#include "os/kernel_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"

namespace plimsoll::os {

Status WriteKernelFile(const std::string& path, std::string_view text) {
  base::UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return SystemError("open " + path, errno);
  ssize_t written = write(fd.get(), text.data(), text.size());
  if (written != static_cast<ssize_t>(text.size())) {
    return SystemError("write \"" + std::string(text) + "\" to " + path, written < 0 ? errno : EIO);
  }
  return Status::Ok();
}

}  // namespace plimsoll::os
