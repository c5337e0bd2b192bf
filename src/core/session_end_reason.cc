// The names of a session's end reasons (SPEC §9).
#include <iterator>

#include "plimsoll/session.h"

namespace plimsoll {
namespace {

// In the order of SessionEndReason.
constexpr std::string_view kNames[] = {
    "closed",          "expired",         "disk_exceeded", "main_process_ended",
    "boundary_failed", "sandbox_changed", "shutdown",      "replaced",
    "not_found",       "unclaimed"};

}  // namespace

std::string_view SessionEndReasonName(SessionEndReason reason) {
  return kNames[static_cast<size_t>(reason)];
}

std::optional<SessionEndReason> ParseSessionEndReason(std::string_view name) {
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (kNames[i] == name) return static_cast<SessionEndReason>(i);
  }
  return std::nullopt;
}

}  // namespace plimsoll
