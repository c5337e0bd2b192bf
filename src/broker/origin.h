// The upstream origin of a grant profile: `base_url` of a grants file.
//
// An Origin is scheme://host[:port] and nothing else: no userinfo, no path
// other than "" or "/", no query, no fragment. https is required unless the
// host is loopback (localhost, 127.0.0.0/8, [::1]), where http is allowed
// because the traffic never leaves the machine. The broker joins an Origin
// with a CanonicalPath (route.h) to form the only URLs it ever requests.
//
// Usage:
//
//   auto origin = ParseOrigin("https://api.example.com:8443/");
//   if (!origin.ok()) return origin.error();  // a whole sentence
//   origin->ToString();  // "https://api.example.com:8443"
//
// Pure functions and values: thread-safe.
#ifndef PLIMSOLL_BROKER_ORIGIN_H_
#define PLIMSOLL_BROKER_ORIGIN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "plimsoll/error.h"

namespace plimsoll::broker {

struct Origin {
  std::string scheme;  // "https" or "http", lower case
  // Lower case; an IPv6 address without its brackets ("::1").
  std::string host;
  std::optional<uint16_t> port;  // absent: the scheme's default
  bool loopback = false;

  // 443 for https, 80 for http, unless `port` says otherwise.
  uint16_t EffectivePort() const;
  // "https://api.example.com", "http://[::1]:8080"
  std::string ToString() const;

  friend bool operator==(const Origin&, const Origin&) = default;
};

// Parses and checks a base_url. Errors are Failure(kInvalidArgument, ...)
// whose message is a whole sentence.
Expected<Origin> ParseOrigin(std::string_view url);

// localhost, 127.0.0.0/8 (dotted quad) and ::1. `host` is as in Origin::host.
bool IsLoopbackHost(std::string_view host);

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_ORIGIN_H_
