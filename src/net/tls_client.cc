#include "net/tls_client.h"

#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl.hpp>
#include <exception>
#include <fstream>

namespace plimsoll::net {
namespace {

namespace ssl = boost::asio::ssl;

Error SetupFailed(std::string message) {
  return Failure(ErrorCode::kFailedPrecondition, std::move(message));
}

}  // namespace

Expected<std::unique_ptr<ssl::context>> MakeTlsClientContext(const std::string& ca_file) {
  try {
    auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
    if (SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1) {
      return SetupFailed("OpenSSL refused to make TLS 1.2 the minimum version.");
    }
    context->set_verify_mode(ssl::verify_peer);
    boost::system::error_code error;
    if (ca_file.empty()) {
      context->set_default_verify_paths(error);
      if (error) {
        return SetupFailed("The system's trust store cannot be loaded: " + error.message() + ".");
      }
    } else {
      if (!std::ifstream(ca_file)) return SetupFailed("Cannot read the CA file " + ca_file + ".");
      context->load_verify_file(ca_file, error);
      if (error) {
        return SetupFailed("The CA file " + ca_file +
                           " holds no usable PEM certificate: " + error.message() + ".");
      }
    }
    return context;
  } catch (const std::exception& exception) {
    return SetupFailed(std::string("OpenSSL could not set up TLS: ") + exception.what() + ".");
  }
}

Status PrepareTlsClientConnection(SSL* connection, const std::string& host) {
  boost::system::error_code not_an_address;
  boost::asio::ip::make_address(host, not_an_address);
  bool ok = false;
  if (not_an_address) {
    SSL_set_hostflags(connection, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    // SSL_set_tlsext_host_name without its macro's C-style cast.
    ok = SSL_ctrl(connection, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                  const_cast<char*>(host.c_str())) == 1 &&
         SSL_set1_host(connection, host.c_str()) == 1;
  } else {
    ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(connection), host.c_str()) == 1;
  }
  if (!ok) {
    return SetupFailed("OpenSSL refused to check the certificate against \"" + host + "\".");
  }
  return Status::Ok();
}

std::string DescribeTlsHandshakeFailure(SSL* connection, const boost::system::error_code& error) {
  const long verify = SSL_get_verify_result(connection);
  if (verify != X509_V_OK) {
    return std::string("the TLS certificate did not verify (") +
           X509_verify_cert_error_string(verify) + ")";
  }
  return "the TLS handshake failed (" + error.message() + ")";
}

}  // namespace plimsoll::net
