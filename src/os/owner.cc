#include "os/owner.h"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace plimsoll::os {
namespace {

// The leading decimal number of `text` (advanced past it), or -1.
long long TakeNumber(std::string_view* text) {
  long long value = -1;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end == text->data()) return -1;
  text->remove_prefix(static_cast<size_t>(end - text->data()));
  return value;
}

}  // namespace

long long ProcessStartTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string stat = buffer.str();
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 > stat.size()) return -1;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  // After "pid (comm) ", starttime is the 20th field (field 22 overall).
  for (int i = 0; i < 20 && fields >> field; ++i) {
  }
  std::string_view value(field);
  long long start = TakeNumber(&value);
  return value.empty() ? start : -1;
}

const std::string& OwnerTag() {
  static const std::string tag =
      std::to_string(getpid()) + "-" + std::to_string(ProcessStartTime(getpid()));
  return tag;
}

bool OwnerAlive(std::string_view name) {
  long long pid = TakeNumber(&name);
  if (pid <= 0 || name.empty() || name.front() != '-') return false;
  name.remove_prefix(1);
  long long start = TakeNumber(&name);
  if (start < 0 || (!name.empty() && name.front() != '-')) return false;
  return ProcessStartTime(static_cast<pid_t>(pid)) == start;
}

}  // namespace plimsoll::os
