// TLS for the broker's upstream calls (upstream.h): the client context and
// the per-connection checks.
//
// The context requires TLS 1.2 or later and verifies the peer against the
// system's trust store (or, in tests, a given CA file). Each connection sets
// SNI for a host name and the identity the certificate must carry (the DNS
// name, or the IP address for an IP literal), which OpenSSL checks during the
// handshake; partial wildcards ("a*.example.com") are not accepted.
//
// Usage:
//
//   auto context = UpstreamTlsContext("");  // the shared system-store context
//   beast::ssl_stream<beast::tcp_stream> stream(io, **context);
//   if (!PrepareUpstreamTlsSession(stream.native_handle(), origin.host)) ...
//   ... async_handshake; on error: DescribeUpstreamTlsFailure(stream.native_handle(), error)
//
// Thread-safe: the system-store context is made once (a function-local
// static) and an SSL_CTX may serve many connections from many threads.
#ifndef PLIMSOLL_BROKER_UPSTREAM_TLS_H_
#define PLIMSOLL_BROKER_UPSTREAM_TLS_H_

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>
#include <memory>
#include <string>

#include "plimsoll/error.h"

namespace plimsoll::broker {

// `ca_file` "" gives the one context on the system's trust store, loaded on
// first use and shared; a file gives a new context trusting only it.
// Failure(kInternal) when the store or file cannot be loaded.
Expected<std::shared_ptr<boost::asio::ssl::context>> UpstreamTlsContext(const std::string& ca_file);

// Sets SNI and the expected identity on one connection; false if OpenSSL
// refuses.
bool PrepareUpstreamTlsSession(SSL* session, const std::string& host);

// "its TLS certificate did not verify (<reason>)" when verification failed,
// else "the TLS handshake failed (<error>)": a clause for a sentence.
std::string DescribeUpstreamTlsFailure(SSL* session, const boost::system::error_code& error);

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_UPSTREAM_TLS_H_
