// Where a Client sends its calls: a parsed daemon URL.
//
//   http://HOST[:PORT][/PREFIX]    HOST: a DNS name, an IPv4 address or [IPv6]
//   https://HOST[:PORT][/PREFIX]   default ports 80 / 443
//   unix:/PATH  or  unix:///PATH   an absolute path to the daemon's Unix socket
//
// PREFIX (for a daemon behind a reverse proxy) is prepended to every API
// path. User information (`user:pass@`), queries and fragments are refused:
// a token belongs in ClientOptions, where it is never printed.
//
// Usage:
//   auto url = plimsoll::client::ParseDaemonUrl("http://127.0.0.1:8470");
//   if (!url.ok()) return url.error();            // Refusal(kRequest)
//   std::string target = url->Target("/v1/runs");  // "/v1/runs"
#ifndef PLIMSOLL_CLIENT_DAEMON_URL_H_
#define PLIMSOLL_CLIENT_DAEMON_URL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "plimsoll/error.h"

namespace plimsoll::client {

enum class Transport { kHttp, kHttps, kUnix };

struct DaemonUrl {
  Transport transport = Transport::kHttp;
  std::string host;  // without brackets; "" for kUnix
  uint16_t port = 0;
  std::string path_prefix;  // "" or "/a/b" (no trailing slash)
  std::string socket_path;  // kUnix only

  // The request target for an API path such as "/v1/runs".
  std::string Target(std::string_view api_path) const;
  // The Host header: "host:port", "[::1]:port"; "localhost" for kUnix.
  std::string HostHeader() const;
  // For messages: the URL as given, normalised.
  std::string ToString() const;
  // Whether `host` is an IP literal (no name resolution needed).
  bool HostIsIpLiteral() const;
};

// Refusal(kRequest, kInvalidArgument) with a sentence naming the problem.
Expected<DaemonUrl> ParseDaemonUrl(std::string_view url);

}  // namespace plimsoll::client

#endif  // PLIMSOLL_CLIENT_DAEMON_URL_H_
