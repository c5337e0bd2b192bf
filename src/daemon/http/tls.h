// TLS for the daemon's TCP listeners (SPEC §4: hardened mode needs TLS on
// every non-loopback listener; docs/daemon.md "TLS").
//
// LoadTlsServerContext reads a PEM certificate chain and its private key into
// one server context with a fixed policy, so no setting can weaken it:
//   - TLS 1.2 at least; TLS 1.3 whenever the client offers it;
//   - TLS 1.2 suites: ECDHE key exchange with AES-GCM or ChaCha20-Poly1305
//     only (forward secrecy, authenticated encryption), the server's order
//     preferred over the client's;
//   - no compression (CRIME), no renegotiation (TLS 1.2's renegotiation has
//     been a source of both attacks and CPU exhaustion);
//   - no session resumption (no tickets, no cache): a ticket key that lives
//     as long as the process would weaken forward secrecy, and API clients
//     keep connections alive instead;
//   - an encrypted key is refused, never prompted for: a daemon has no tty.
// The files are read once; rotating the certificate means restarting.
//
// Errors are kInvalidArgument with a sentence naming the file and what is
// wrong with it (plimsolld exits 2 on them: they are bad settings). What is
// worth saying but not refusing (a key other users can read, a certificate
// outside its validity period) comes back in `warnings`.
//
// Thread-safety: the context is not changed after loading and may be shared
// by every connection of every listener.
//
// Usage:
//   auto tls = LoadTlsServerContext({.certificate = "/etc/plimsoll/tls.crt",
//                                    .key = "/etc/plimsoll/tls.key"});
//   if (!tls.ok()) { log.Error(tls.error().message()); return 2; }
//   for (const std::string& warning : tls->warnings) log.Warning(warning);
//   listener.UseTls(tls->context);   // listener.h
#ifndef PLIMSOLL_DAEMON_HTTP_TLS_H_
#define PLIMSOLL_DAEMON_HTTP_TLS_H_

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::daemon::http {

struct TlsFiles {
  std::string certificate;  // PEM: the server certificate, then any intermediates
  std::string key;          // PEM: its unencrypted private key
};

struct TlsServerContext {
  std::shared_ptr<boost::asio::ssl::context> context;
  // "subject CN=…, valid until Jan  1 00:00:00 2030 GMT", for the startup log.
  std::string summary;
  std::vector<std::string> warnings;
};

Expected<TlsServerContext> LoadTlsServerContext(const TlsFiles& files);

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_TLS_H_
