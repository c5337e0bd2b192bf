// A throwaway self-signed TLS certificate made at test time (EC P-256, valid
// for one day), so TLS tests need no files in the tree and no network.
//
// Usage:
//   TestCertificate certificate = MakeTestCertificate({"DNS:localhost"});
//   server_context.use_certificate(asio::buffer(certificate.certificate_pem), pem);
//   WriteFile(ca_path, certificate.certificate_pem);  // the client trusts it
#ifndef PLIMSOLL_NET_TESTING_TEST_CERTIFICATE_H_
#define PLIMSOLL_NET_TESTING_TEST_CERTIFICATE_H_

#include <string>

namespace plimsoll::net::testing {

struct TestCertificate {
  std::string certificate_pem;
  std::string private_key_pem;
};

// `subject_alt_names` in OpenSSL's syntax: "DNS:localhost,IP:127.0.0.1".
// Throws std::runtime_error if OpenSSL fails (test code).
TestCertificate MakeTestCertificate(const std::string& subject_alt_names);

}  // namespace plimsoll::net::testing

#endif  // PLIMSOLL_NET_TESTING_TEST_CERTIFICATE_H_
