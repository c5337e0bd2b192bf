#include "client/cleartext_policy.h"

#include <string>

namespace plimsoll::client {
namespace {

namespace ip = boost::asio::ip;

Error CleartextRefused(const DaemonUrl& url, const std::string& address) {
  std::string host = url.host == address ? address : url.host + " (" + address + ")";
  return Refusal(NotDispatched::kRequest, ErrorCode::kFailedPrecondition,
                 "Refusing cleartext http:// to " + host +
                     ", which is not a loopback address: the token, the code and its outputs "
                     "would cross the network unencrypted. Use https://, or allow cleartext "
                     "explicitly (--allow-cleartext, ClientOptions::allow_cleartext) on a "
                     "network you trust.");
}

}  // namespace

bool IsLoopbackAddress(const ip::address& address) {
  if (address.is_v4()) return address.to_v4().is_loopback();
  const ip::address_v6 v6 = address.to_v6();
  if (v6.is_v4_mapped()) {
    return ip::make_address_v4(ip::v4_mapped, v6).is_loopback();
  }
  return v6.is_loopback();
}

Status CheckCleartextLiteral(const DaemonUrl& url, bool allow_cleartext) {
  if (url.transport != Transport::kHttp || allow_cleartext) return Status::Ok();
  boost::system::error_code error;
  ip::address address = ip::make_address(url.host, error);
  if (error) return Status::Ok();  // a name: judged after resolution
  if (!IsLoopbackAddress(address)) return CleartextRefused(url, url.host);
  return Status::Ok();
}

Status CheckCleartextResolved(const DaemonUrl& url, const std::vector<ip::address>& addresses,
                              bool allow_cleartext) {
  if (url.transport != Transport::kHttp || allow_cleartext) return Status::Ok();
  for (const ip::address& address : addresses) {
    if (!IsLoopbackAddress(address)) return CleartextRefused(url, address.to_string());
  }
  return Status::Ok();
}

}  // namespace plimsoll::client
