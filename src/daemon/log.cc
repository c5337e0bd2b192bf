#include "daemon/log.h"

namespace plimsoll::daemon {

void Log::Write(std::string_view level, std::string_view message) {
  std::lock_guard lock(mutex_);
  out_ << "plimsolld: " << level << ": " << message << '\n';
  out_.flush();
}

}  // namespace plimsoll::daemon
