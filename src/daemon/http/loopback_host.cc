#include "daemon/http/loopback_host.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <string>

namespace plimsoll::daemon::http {
namespace {

bool IsPort(std::string_view text) {
  if (text.empty() || text.size() > 5) return false;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  return std::stoul(std::string(text)) <= 65535;
}

bool IsLocalhostName(std::string_view name) {
  if (name.ends_with('.')) name.remove_suffix(1);
  constexpr std::string_view kLocalhost = "localhost";
  return name.size() == kLocalhost.size() &&
         std::equal(name.begin(), name.end(), kLocalhost.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

// inet_pton takes exactly four decimal parts (no octal, hex or short forms).
bool IsLoopbackIpv4(std::string_view text) {
  in_addr address{};
  if (::inet_pton(AF_INET, std::string(text).c_str(), &address) != 1) return false;
  return (ntohl(address.s_addr) >> 24) == 127;
}

bool IsLoopbackIpv6(std::string_view text) {
  in6_addr address{};
  if (::inet_pton(AF_INET6, std::string(text).c_str(), &address) != 1) return false;
  in6_addr loopback = IN6ADDR_LOOPBACK_INIT;
  return std::equal(std::begin(address.s6_addr), std::end(address.s6_addr),
                    std::begin(loopback.s6_addr));
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host.empty()) return false;
  if (host.front() == '[') {
    size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !IsPort(rest.substr(1)))) return false;
    return IsLoopbackIpv6(host.substr(1, close - 1));
  }
  std::string_view name = host;
  size_t colon = host.find(':');
  if (colon != std::string_view::npos) {
    if (!IsPort(host.substr(colon + 1))) return false;
    name = host.substr(0, colon);
  }
  return IsLocalhostName(name) || IsLoopbackIpv4(name);
}

}  // namespace plimsoll::daemon::http
