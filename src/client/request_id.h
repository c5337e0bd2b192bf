// Fresh request IDs for `Plimsoll-Request-Id` (SPEC §3): 32 lowercase hex
// digits (128 bits) from getrandom(2), new for every HTTP request, so that an
// answer swapped by a proxy can never carry this call's ID.
//
// Usage:
//   auto id = plimsoll::client::NewRequestId();
//   if (!id.ok()) return id.error();
//   request.set("Plimsoll-Request-Id", *id);
#ifndef PLIMSOLL_CLIENT_REQUEST_ID_H_
#define PLIMSOLL_CLIENT_REQUEST_ID_H_

#include <string>
#include <string_view>

#include "plimsoll/error.h"

namespace plimsoll::client {

inline constexpr std::string_view kRequestIdHeader = "Plimsoll-Request-Id";
inline constexpr std::string_view kNotDispatchedHeader = "Plimsoll-Not-Dispatched";

// Thread-safe. Fails only if the kernel's random source fails (an internal
// error; the call is not made).
Expected<std::string> NewRequestId();

// Whether `id` is 32 lowercase hex digits.
bool IsWellFormedRequestId(std::string_view id);

}  // namespace plimsoll::client

#endif  // PLIMSOLL_CLIENT_REQUEST_ID_H_
