// TLS for https:// daemon URLs: the client context (TLS 1.2 or later, peer
// verification on, the given CA file or the system's trust store) and the
// per-connection settings (SNI for names, host name or IP address checked
// against the certificate by OpenSSL during the handshake).
//
// Usage:
//   auto context = MakeTlsContext(options.ca_file);     // once per Client
//   ssl_stream<tcp_stream> stream(io, **context);
//   PLIMSOLL_RETURN_IF_ERROR(PrepareTlsSession(stream.native_handle(), url.host));
//   ... async_handshake ... on error: DescribeTlsFailure(stream.native_handle(), error)
#ifndef PLIMSOLL_CLIENT_TLS_SETUP_H_
#define PLIMSOLL_CLIENT_TLS_SETUP_H_

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>
#include <memory>
#include <string>

#include "plimsoll/error.h"

namespace plimsoll::client {

// Refusal(kRequest) when the CA file cannot be read or holds no certificate,
// or when OpenSSL cannot set up a context.
Expected<std::unique_ptr<boost::asio::ssl::context>> MakeTlsContext(const std::string& ca_file);

// Sets SNI (names only) and the identity the certificate must carry: the DNS
// name, or the IP address when `host` is an IP literal.
Status PrepareTlsSession(SSL* ssl, const std::string& host);

// "the certificate did not verify: <reason>" when verification failed,
// else the handshake error's message.
std::string DescribeTlsFailure(SSL* ssl, const boost::system::error_code& error);

}  // namespace plimsoll::client

#endif  // PLIMSOLL_CLIENT_TLS_SETUP_H_
