// The TLS client side, once for every plimsoll program that speaks TLS out:
// the broker's upstream calls (src/broker/upstream.h) and the C++ client of
// plimsolld (src/client/http_connection.h). The checks live here only, so the
// two cannot drift:
//   - TLS 1.2 or later;
//   - the peer's certificate verified (verify_peer) against the given CA
//     file, or, when none is given, the system's trust store;
//   - per connection: SNI for a host name (names only, RFC 6066), and the
//     identity the certificate must carry, which OpenSSL checks during the
//     handshake: the DNS name, with no partial wildcards ("a*.example.com"),
//     or, for an IP literal, the IP address.
// Neither caller reads proxy settings: a connection goes straight to the
// address it resolved.
//
// Usage:
//   auto context = MakeTlsClientContext(ca_file);  // "" = the system's store
//   if (!context.ok()) ...
//   boost::beast::ssl_stream<boost::beast::tcp_stream> stream(io, **context);
//   if (Status ready = PrepareTlsClientConnection(stream.native_handle(), host); !ready.ok()) ...
//   ... async_handshake(client); on error:
//   "...: " + DescribeTlsHandshakeFailure(stream.native_handle(), error)
//
// Thread-safe: a context may serve many connections from many threads; each
// SSL* belongs to one connection.
#ifndef PLIMSOLL_NET_TLS_CLIENT_H_
#define PLIMSOLL_NET_TLS_CLIENT_H_

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>
#include <memory>
#include <string>

#include "plimsoll/error.h"

namespace plimsoll::net {

// A new client context with the checks above, trusting only `ca_file` (PEM)
// or, for "", the system's trust store. Failure(kFailedPrecondition) with a
// sentence when the file cannot be read or holds no usable certificate, when
// the system's store cannot be loaded, or when OpenSSL cannot set up TLS.
Expected<std::unique_ptr<boost::asio::ssl::context>> MakeTlsClientContext(
    const std::string& ca_file);

// Sets SNI (names only) and the identity the certificate must carry on one
// connection, before its handshake. Failure(kFailedPrecondition) when OpenSSL
// refuses `host`.
Status PrepareTlsClientConnection(SSL* connection, const std::string& host);

// A clause for a sentence about a failed handshake: "the TLS certificate did
// not verify (<reason>)" when verification failed, else "the TLS handshake
// failed (<error>)".
std::string DescribeTlsHandshakeFailure(SSL* connection, const boost::system::error_code& error);

}  // namespace plimsoll::net

#endif  // PLIMSOLL_NET_TLS_CLIENT_H_
