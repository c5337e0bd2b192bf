#include "daemon/http/request_id.h"

#include <iterator>

namespace plimsoll::daemon::http {

bool IsWellFormedRequestId(std::string_view id) {
  if (id.size() != 32) return false;
  for (char c : id) {
    bool digit = c >= '0' && c <= '9';
    bool lower_hex = c >= 'a' && c <= 'f';
    if (!digit && !lower_hex) return false;
  }
  return true;
}

std::string EchoableRequestId(const boost::beast::http::fields& headers) {
  auto [first, last] = headers.equal_range(kRequestIdHeader);
  if (std::distance(first, last) != 1) return "";
  std::string_view value = first->value();
  return IsWellFormedRequestId(value) ? std::string(value) : "";
}

}  // namespace plimsoll::daemon::http
