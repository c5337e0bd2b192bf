#include "broker/upstream_tls.h"

#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl.hpp>
#include <exception>
#include <fstream>

namespace plimsoll::broker {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;

// The TLS client context: TLS 1.2 or later, peer verification on, trusting
// `ca_file` or the system's store.
Expected<std::shared_ptr<ssl::context>> MakeTlsContext(const std::string& ca_file) {
  try {
    auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
    if (SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1) {
      return Failure(ErrorCode::kInternal, "OpenSSL refused to make TLS 1.2 the minimum version.");
    }
    context->set_verify_mode(ssl::verify_peer);
    boost::system::error_code error;
    if (ca_file.empty()) {
      context->set_default_verify_paths(error);
      if (error) {
        return Failure(ErrorCode::kInternal,
                       "The system's trust store cannot be loaded: " + error.message() + ".");
      }
    } else {
      if (!std::ifstream(ca_file)) {
        return Failure(ErrorCode::kInternal, "Cannot read the CA file " + ca_file + ".");
      }
      context->load_verify_file(ca_file, error);
      if (error) {
        return Failure(
            ErrorCode::kInternal,
            "The CA file " + ca_file + " holds no usable certificate: " + error.message() + ".");
      }
    }
    return context;
  } catch (const std::exception& exception) {
    return Failure(ErrorCode::kInternal,
                   std::string("OpenSSL could not set up TLS: ") + exception.what() + ".");
  }
}

}  // namespace

Expected<std::shared_ptr<ssl::context>> UpstreamTlsContext(const std::string& ca_file) {
  if (!ca_file.empty()) return MakeTlsContext(ca_file);
  static const Expected<std::shared_ptr<ssl::context>> system = MakeTlsContext("");
  return system;
}

// SNI (names only, RFC 6066) and the identity the certificate must carry:
// the DNS name, or the IP address for an IP literal.
bool PrepareUpstreamTlsSession(SSL* session, const std::string& host) {
  boost::system::error_code not_an_address;
  asio::ip::make_address(host, not_an_address);
  if (not_an_address) {
    SSL_set_hostflags(session, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    // SSL_set_tlsext_host_name without its macro's C-style cast.
    return SSL_ctrl(session, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                    const_cast<char*>(host.c_str())) == 1 &&
           SSL_set1_host(session, host.c_str()) == 1;
  }
  return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(session), host.c_str()) == 1;
}

std::string DescribeUpstreamTlsFailure(SSL* session, const boost::system::error_code& error) {
  const long verify = SSL_get_verify_result(session);
  if (verify != X509_V_OK) {
    return std::string("its TLS certificate did not verify (") +
           X509_verify_cert_error_string(verify) + ")";
  }
  return "the TLS handshake failed (" + error.message() + ")";
}

}  // namespace plimsoll::broker
