// Whether a request's Host header names this machine's loopback interface:
// the DNS-rebinding defence of --dev (docs/daemon.md "Development mode").
//
// A page a browser loaded from attacker.example can make the browser send
// requests to 127.0.0.1 by re-pointing attacker.example's DNS record there;
// those requests still say "Host: attacker.example". A daemon that answers
// only Host values that are loopback names or addresses refuses them, and
// --dev, which authenticates nobody, must.
//
// Accepted: `localhost` (any case, an optional trailing dot), a dotted-quad
// IPv4 address in 127.0.0.0/8, `[::1]`; each with an optional `:PORT`
// (1 to 5 digits, at most 65535). Everything else is refused, an empty or
// missing Host included.
//
// Usage:
//   if (!IsLoopbackHost(header[boost::beast::http::field::host])) ... // 421
#ifndef PLIMSOLL_DAEMON_HTTP_LOOPBACK_HOST_H_
#define PLIMSOLL_DAEMON_HTTP_LOOPBACK_HOST_H_

#include <string_view>

namespace plimsoll::daemon::http {

bool IsLoopbackHost(std::string_view host_header);

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_LOOPBACK_HOST_H_
