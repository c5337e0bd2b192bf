#include "client/daemon_url.h"

#include <sys/un.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <cctype>

namespace plimsoll::client {
namespace {

Error BadUrl(std::string_view url, std::string_view problem) {
  return Refusal(NotDispatched::kRequest, ErrorCode::kInvalidArgument,
                 "The daemon URL \"" + std::string(url) + "\" " + std::string(problem) +
                     " (expected http://HOST:PORT, https://HOST:PORT or unix:/PATH).");
}

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool IsDnsName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  return std::all_of(host.begin(), host.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '.'; });
}

bool IsPathCharacter(unsigned char c) {
  return std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~';
}

Expected<uint16_t> ParsePort(std::string_view url, std::string_view text) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return BadUrl(url, "has a port that is not a number from 1 to 65535");
  }
  int value = 0;
  for (char c : text) value = value * 10 + (c - '0');
  if (value < 1 || value > 65535) {
    return BadUrl(url, "has a port that is not a number from 1 to 65535");
  }
  return static_cast<uint16_t>(value);
}

Expected<DaemonUrl> ParseUnix(std::string_view url, std::string_view rest) {
  if (rest.substr(0, 2) == "//") rest.remove_prefix(2);
  if (rest.size() < 2 || rest.front() != '/') {
    return BadUrl(url, "does not name an absolute socket path");
  }
  if (rest.find('\0') != std::string_view::npos) return BadUrl(url, "holds a NUL byte");
  if (rest.size() >= sizeof(sockaddr_un::sun_path)) {
    return BadUrl(url, "names a socket path longer than " +
                           std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes");
  }
  DaemonUrl parsed;
  parsed.transport = Transport::kUnix;
  parsed.socket_path = std::string(rest);
  return parsed;
}

Expected<DaemonUrl> ParseNetwork(std::string_view url, Transport transport, std::string_view rest) {
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return BadUrl(url, "has a query or fragment");
  }
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    return BadUrl(url, "carries user information; give a token in the client's options instead");
  }
  DaemonUrl parsed;
  parsed.transport = transport;
  parsed.port = transport == Transport::kHttps ? 443 : 80;
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return BadUrl(url, "has an unclosed [IPv6] host");
    parsed.host = Lowercase(authority.substr(1, close - 1));
    boost::system::error_code error;
    boost::asio::ip::make_address_v6(parsed.host, error);
    if (error) return BadUrl(url, "has a bracketed host that is not an IPv6 address");
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return BadUrl(url, "has text after the ]");
      port_text = after.substr(1);
      has_port = true;
    }
  } else {
    size_t colon = authority.find(':');
    parsed.host = Lowercase(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      has_port = true;
    }
    if (parsed.host.empty()) return BadUrl(url, "has no host");
    if (!IsDnsName(parsed.host)) {
      return BadUrl(url, "has a host that is neither a DNS name nor an IP address");
    }
  }
  if (has_port) {
    auto port = ParsePort(url, port_text);
    if (!port.ok()) return port.error();
    parsed.port = *port;
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (!std::all_of(path.begin(), path.end(), [](unsigned char c) { return IsPathCharacter(c); })) {
    return BadUrl(url, "has a path with characters other than letters, digits and /-._~");
  }
  parsed.path_prefix = std::string(path);
  return parsed;
}

}  // namespace

std::string DaemonUrl::Target(std::string_view api_path) const {
  return path_prefix + std::string(api_path);
}

std::string DaemonUrl::HostHeader() const {
  if (transport == Transport::kUnix) return "localhost";
  bool bracket = host.find(':') != std::string::npos;
  std::string text = bracket ? "[" + host + "]" : host;
  return text + ":" + std::to_string(port);
}

std::string DaemonUrl::ToString() const {
  switch (transport) {
    case Transport::kUnix:
      return "unix:" + socket_path;
    case Transport::kHttps:
      return "https://" + HostHeader() + path_prefix;
    case Transport::kHttp:
      break;
  }
  return "http://" + HostHeader() + path_prefix;
}

bool DaemonUrl::HostIsIpLiteral() const {
  boost::system::error_code error;
  boost::asio::ip::make_address(host, error);
  return !error;
}

Expected<DaemonUrl> ParseDaemonUrl(std::string_view url) {
  if (StartsWithNoCase(url, "http://")) return ParseNetwork(url, Transport::kHttp, url.substr(7));
  if (StartsWithNoCase(url, "https://")) {
    return ParseNetwork(url, Transport::kHttps, url.substr(8));
  }
  if (StartsWithNoCase(url, "unix:")) return ParseUnix(url, url.substr(5));
  return BadUrl(url, "has no http://, https:// or unix: scheme");
}

}  // namespace plimsoll::client
