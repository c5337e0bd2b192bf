#include "broker/origin.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <array>
#include <cstring>
#include <string>
#include <utility>

namespace plimsoll::broker {
namespace {

Error Invalid(std::string message) {
  return Failure(ErrorCode::kInvalidArgument, std::move(message));
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// "a.b.c.d", each 0..255 written without leading zeros (so "0127" cannot be
// read as octal by one parser and decimal by another).
std::optional<std::array<int, 4>> ParseDottedQuad(std::string_view host) {
  std::array<int, 4> parts{};
  std::size_t index = 0;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = host.find('.', start);
    std::string_view part =
        host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (index >= parts.size() || part.empty() || part.size() > 3) return std::nullopt;
    if (part.size() > 1 && part.front() == '0') return std::nullopt;
    int value = 0;
    for (char c : part) {
      if (!IsDigit(c)) return std::nullopt;
      value = value * 10 + (c - '0');
    }
    if (value > 255) return std::nullopt;
    parts[index++] = value;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (index != parts.size()) return std::nullopt;
  return parts;
}

bool LooksNumeric(std::string_view host) {
  for (char c : host) {
    if (!IsDigit(c) && c != '.') return false;
  }
  return true;
}

// DNS-style names: dot-separated labels of letters, digits, '-' and '_'
// (1..63 bytes, not starting or ending with '-'), at most 253 bytes.
bool IsValidHostName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = host.find('.', start);
    std::string_view label =
        host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || label.size() > 63) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      bool ok = (c >= 'a' && c <= 'z') || IsDigit(c) || c == '-' || c == '_';
      if (!ok) return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

uint16_t Origin::EffectivePort() const {
  if (port) return *port;
  return scheme == "https" ? 443 : 80;
}

std::string Origin::ToString() const {
  std::string text = scheme + "://";
  if (host.find(':') != std::string::npos) {
    text += "[" + host + "]";
  } else {
    text += host;
  }
  if (port) text += ":" + std::to_string(*port);
  return text;
}

bool IsLoopbackHost(std::string_view host) {
  if (Lower(host) == "localhost") return true;
  if (auto quad = ParseDottedQuad(host)) return (*quad)[0] == 127;
  if (host.find(':') != std::string_view::npos) {
    in6_addr address{};
    std::string copy(host);
    if (inet_pton(AF_INET6, copy.c_str(), &address) != 1) return false;
    return std::memcmp(&address, &in6addr_loopback, sizeof(address)) == 0;
  }
  return false;
}

Expected<Origin> ParseOrigin(std::string_view url) {
  std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return Invalid("The base URL must look like https://host[:port].");
  }
  Origin origin;
  origin.scheme = Lower(url.substr(0, scheme_end));
  if (origin.scheme != "https" && origin.scheme != "http") {
    return Invalid("The base URL's scheme must be https (or http for a loopback host).");
  }
  std::string_view rest = url.substr(scheme_end + 3);
  for (char c : rest) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      return Invalid("The base URL contains a space, a control character or a non-ASCII byte.");
    }
  }
  if (rest.find('?') != std::string_view::npos) {
    return Invalid("The base URL has a query; it must be an origin only (scheme://host[:port]).");
  }
  if (rest.find('#') != std::string_view::npos) {
    return Invalid(
        "The base URL has a fragment; it must be an origin only (scheme://host[:port]).");
  }
  std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos && rest.substr(slash) != "/") {
    return Invalid(
        "The base URL has a path; it must be an origin only (scheme://host[:port]), "
        "and the allowed paths go in `allow`.");
  }
  if (authority.find('@') != std::string_view::npos) {
    return Invalid("The base URL has user information (user@); credentials never go in a URL.");
  }
  if (authority.find('\\') != std::string_view::npos ||
      authority.find('%') != std::string_view::npos) {
    return Invalid("The base URL's host contains '\\' or '%'.");
  }
  std::string_view host;
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return Invalid("The base URL's IPv6 address has no ']'.");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Invalid("The base URL has text after its IPv6 address.");
      has_port = true;
      port_text = after.substr(1);
    }
    in6_addr address{};
    std::string copy(host);
    if (inet_pton(AF_INET6, copy.c_str(), &address) != 1) {
      return Invalid("The base URL's host is not a valid IPv6 address.");
    }
    origin.host = Lower(host);
  } else {
    std::size_t colon = authority.find(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(colon + 1);
    }
    origin.host = Lower(host);
    if (origin.host.empty()) return Invalid("The base URL has no host.");
    if (LooksNumeric(origin.host)) {
      if (!ParseDottedQuad(origin.host)) {
        return Invalid(
            "The base URL's host looks like an IPv4 address but is not four decimal "
            "numbers 0 to 255 without leading zeros.");
      }
    } else if (!IsValidHostName(origin.host)) {
      return Invalid("The base URL's host is not a valid host name.");
    }
  }
  if (has_port) {
    if (port_text.empty() || port_text.size() > 5) {
      return Invalid("The base URL's port must be a number from 1 to 65535.");
    }
    int value = 0;
    for (char c : port_text) {
      if (!IsDigit(c)) return Invalid("The base URL's port must be a number from 1 to 65535.");
      value = value * 10 + (c - '0');
    }
    if (value < 1 || value > 65535) {
      return Invalid("The base URL's port must be a number from 1 to 65535.");
    }
    origin.port = static_cast<uint16_t>(value);
  }
  origin.loopback = IsLoopbackHost(origin.host);
  if (origin.scheme == "http" && !origin.loopback) {
    return Invalid(
        "The base URL must use https: plain http is allowed only for a loopback host "
        "(localhost, 127.0.0.0/8, [::1]), since the credential would cross the "
        "network in clear.");
  }
  return origin;
}

}  // namespace plimsoll::broker
