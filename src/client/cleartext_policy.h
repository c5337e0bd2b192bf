// The client's rule on cleartext (SPEC §11): http:// only to loopback unless
// the caller explicitly allows it, because the bearer token, the code and
// its outputs would otherwise cross a network unencrypted.
//
// Loopback means 127.0.0.0/8, ::1, or ::ffff:127.0.0.0/104. A host name
// is judged by what it resolves to: every address must be loopback (a name
// with one non-loopback address is refused, not filtered, so the outcome
// never depends on which address the connection happens to try first).
//
// Usage:
//   PLIMSOLL_RETURN_IF_ERROR(CheckCleartextLiteral(url, options.allow_cleartext));  // at Open
//   ... resolve ...
//   PLIMSOLL_RETURN_IF_ERROR(CheckCleartextResolved(url, addresses, allow));  // before connect
#ifndef PLIMSOLL_CLIENT_CLEARTEXT_POLICY_H_
#define PLIMSOLL_CLIENT_CLEARTEXT_POLICY_H_

#include <boost/asio/ip/address.hpp>
#include <vector>

#include "client/daemon_url.h"
#include "plimsoll/error.h"

namespace plimsoll::client {

bool IsLoopbackAddress(const boost::asio::ip::address& address);

// For an http:// URL whose host is an IP literal: refuses a non-loopback
// address unless `allow_cleartext`. Ok for https://, unix: and host names.
Status CheckCleartextLiteral(const DaemonUrl& url, bool allow_cleartext);

// For an http:// URL after name resolution: refuses unless every address is
// loopback (or `allow_cleartext`). Ok for https:// and unix:.
Status CheckCleartextResolved(const DaemonUrl& url,
                              const std::vector<boost::asio::ip::address>& addresses,
                              bool allow_cleartext);

}  // namespace plimsoll::client

#endif  // PLIMSOLL_CLIENT_CLEARTEXT_POLICY_H_
