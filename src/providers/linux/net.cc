#include "providers/linux/net.h"

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace plimsoll::linux_sandbox {

int BringUpLoopback(const char** what) {
  *what = "socket(AF_INET) to configure lo";
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  ifreq request;
  std::memset(&request, 0, sizeof request);
  std::memcpy(request.ifr_name, "lo", 3);
  int result = 0;
  *what = "ioctl(SIOCGIFFLAGS, lo)";
  if (ioctl(fd, SIOCGIFFLAGS, &request) != 0) {
    result = errno;
  } else {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
    *what = "ioctl(SIOCSIFFLAGS, lo up)";
    if (ioctl(fd, SIOCSIFFLAGS, &request) != 0) result = errno;
  }
  close(fd);
  return result;
}

}  // namespace plimsoll::linux_sandbox
