#include "client/request_id.h"

#include <sys/random.h>

#include <array>
#include <cerrno>

namespace plimsoll::client {

Expected<std::string> NewRequestId() {
  std::array<unsigned char, 16> bytes{};
  size_t filled = 0;
  while (filled < bytes.size()) {
    ssize_t got = ::getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return SystemError("getrandom for a request ID", errno);
    }
    filled += static_cast<size_t>(got);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  id.reserve(32);
  for (unsigned char byte : bytes) {
    id += kHex[byte >> 4];
    id += kHex[byte & 0x0f];
  }
  return id;
}

bool IsWellFormedRequestId(std::string_view id) {
  if (id.size() != 32) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace plimsoll::client
