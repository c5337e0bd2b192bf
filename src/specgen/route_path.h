// The path rules of specgen (docs/specgen.md): which OpenAPI path templates a
// grant's `allow` entry can express, and where a server URL's origin ends.
//
// Usage:
//   auto allow = AllowPathFor("/bookings/{bookingId}");  // "/bookings/*"
//   auto server = SplitServerUrl("https://api.example.com/v1");
//   // server->origin == "https://api.example.com", server->path == "/v1"
#ifndef PLIMSOLL_SPECGEN_ROUTE_PATH_H_
#define PLIMSOLL_SPECGEN_ROUTE_PATH_H_

#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::specgen {

// "/a/{x}/b" -> "/a/*/b". Error (its message is why, a sentence's tail
// "its path ...") when a templated part is not a whole segment, or the path
// holds `;`, `?`, `#`, `%`, `*`, a backslash, whitespace or a control
// character, a `.` or `..` segment, or an empty segment before the last.
Expected<std::string> AllowPathFor(std::string_view path_template);

// The names of a template's `{...}` segments, in order.
std::vector<std::string> TemplateNames(std::string_view path_template);

struct ServerUrl {
  std::string origin;  // "https://host[:port]", lowercased scheme and host
  std::string path;    // "" or "/v1" (no trailing slash)
};

// An absolute http(s) URL without user info, query or fragment, split into
// origin and path. Error when relative, templated, or otherwise not one.
Expected<ServerUrl> SplitServerUrl(std::string_view url);

// Whether the origin's host is loopback (localhost, 127.0.0.0/8, [::1]).
bool IsLoopbackOrigin(std::string_view origin);

}  // namespace plimsoll::specgen

#endif  // PLIMSOLL_SPECGEN_ROUTE_PATH_H_
