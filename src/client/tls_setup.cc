#include "client/tls_setup.h"

#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <exception>
#include <fstream>

namespace plimsoll::client {
namespace {

namespace ssl = boost::asio::ssl;

Error TlsSetupRefused(std::string message) {
  return Refusal(NotDispatched::kRequest, ErrorCode::kFailedPrecondition, std::move(message));
}

}  // namespace

Expected<std::unique_ptr<ssl::context>> MakeTlsContext(const std::string& ca_file) {
  try {
    auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
    if (SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1) {
      return TlsSetupRefused("OpenSSL refused to set TLS 1.2 as the minimum version.");
    }
    context->set_verify_mode(ssl::verify_peer);
    boost::system::error_code error;
    if (ca_file.empty()) {
      context->set_default_verify_paths(error);
      if (error) {
        return TlsSetupRefused("The system's trust store cannot be loaded: " + error.message() +
                               ". Give a CA file instead.");
      }
    } else {
      if (!std::ifstream(ca_file)) {
        return TlsSetupRefused("Cannot read the CA file " + ca_file + ".");
      }
      context->load_verify_file(ca_file, error);
      if (error) {
        return TlsSetupRefused("The CA file " + ca_file +
                               " holds no usable PEM certificate: " + error.message() + ".");
      }
    }
    return context;
  } catch (const std::exception& exception) {
    return TlsSetupRefused(std::string("OpenSSL could not set up TLS: ") + exception.what() + ".");
  }
}

Status PrepareTlsSession(SSL* ssl, const std::string& host) {
  boost::system::error_code not_an_address;
  boost::asio::ip::make_address(host, not_an_address);
  bool ok = true;
  if (not_an_address) {
    // SNI is for names only (RFC 6066); the name is checked by OpenSSL.
    // SSL_set_tlsext_host_name without its macro's C-style cast.
    ok = SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                  const_cast<char*>(host.c_str())) == 1 &&
         SSL_set1_host(ssl, host.c_str()) == 1;
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  } else {
    ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) == 1;
  }
  if (!ok) {
    return TlsSetupRefused("OpenSSL refused to check the certificate against \"" + host + "\".");
  }
  return Status::Ok();
}

std::string DescribeTlsFailure(SSL* ssl, const boost::system::error_code& error) {
  long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    return std::string("the daemon's certificate did not verify: ") +
           X509_verify_cert_error_string(verify);
  }
  return "the TLS handshake failed: " + error.message();
}

}  // namespace plimsoll::client
