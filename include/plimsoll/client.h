// The C++ client of plimsolld (SPEC §11): runs requests on a daemon over
// HTTP+JSON and believes an answer only after checking it.
//
// On every call the client sends a fresh `Plimsoll-Request-Id` (32 lowercase
// hex digits from getrandom) and the request's protocol number in the body.
// On every answer it checks:
//   - the echo: exactly one `Plimsoll-Request-Id` equal to the one sent (and
//     the same ID in an error body). Otherwise a success becomes a kDataLoss
//     error and an error loses its "nothing ran" mark (SPEC §3);
//   - a refusal's mark in the body against the `Plimsoll-Not-Dispatched`
//     header (both present and equal, or the mark is dropped);
//   - the run record (CheckExchange, record.h): both digests recomputed from
//     the request sent and the result received, provider/tier/environment,
//     the tier against the request's floor, the record digest. Any mismatch
//     is kDataLoss;
//   - the size of the answer (ClientOptions::max_response_bytes). A larger
//     answer is kDataLoss: the call may have run.
// Refusals keep their mark: NotDispatchedReason(result.error()) works exactly
// as with the in-process plimsoll::Sandbox.
//
// Errors the client makes itself (docs/client.md has the full table):
//   - a malformed URL or option: Refusal(kRequest) from Open;
//   - cleartext http:// to an address that is not loopback (127.0.0.0/8,
//     ::1, or a name that resolves only to those) without allow_cleartext:
//     Refusal(kRequest), before any connection is made;
//   - no connection (refused, unreachable, name not found, connect timeout,
//     TLS handshake or certificate failure): Refusal(kCapacity), because not
//     one byte of the request was sent; a placement layer may try another
//     daemon (SPEC §12);
//   - anything after the first byte of the request was written (a timeout, a
//     reset, an unreadable answer): an error without a mark. The code may
//     have run; never retry it automatically.
//
// URLs: `http://HOST[:PORT][/PREFIX]`, `https://HOST[:PORT][/PREFIX]` (the
// certificate is verified against HOST, a DNS name or an IP address), and
// `unix:/PATH/TO/SOCKET` (also `unix:///PATH`), which is local and so never
// "cleartext over a network". Without a port: 80 / 443.
//
// Keep-alive: a Client keeps one connection open and reuses it for the next
// call; a connection the daemon has closed while idle is replaced before a
// request is written, never after.
//
// Thread-safety: a Client may be shared by threads; its calls are serialised
// by an internal mutex (one connection, one call at a time). For parallel
// runs, give each thread its own Client.
//
// Usage:
//
//   plimsoll::ClientOptions options;
//   options.bearer_token = token;                  // from a file, never argv
//   auto client = plimsoll::Client::Open("https://sandbox.internal:8470", options);
//   if (!client.ok()) { std::cerr << client.error().ToString(); return; }
//   plimsoll::Request request;
//   request.minimum_isolation = "container";
//   request.javascript = plimsoll::JavascriptPayload{"console.log(6*7)"};
//   plimsoll::Expected<plimsoll::Result> result = client->Run(request);
//   if (!result.ok()) {
//     if (auto reason = plimsoll::NotDispatchedReason(result.error())) { /* nothing ran */ }
//     else { /* may have run: do not retry */ }
//   }
#ifndef PLIMSOLL_CLIENT_H_
#define PLIMSOLL_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "plimsoll/error.h"
#include "plimsoll/image_info.h"
#include "plimsoll/provider.h"
#include "plimsoll/record.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"
#include "plimsoll/session.h"
#include "plimsoll/tier.h"
#include "plimsoll/wire.h"

namespace plimsoll {

struct ClientOptions {
  // Sent as `Authorization: Bearer <token>`; "" sends none. Visible ASCII
  // only (no spaces or control characters), else Open refuses it.
  std::string bearer_token{};
  // Allows http:// to an address that is not loopback: the token, the code
  // and the outputs then cross the network unencrypted.
  bool allow_cleartext = false;
  // https:// only: a PEM file of trusted CA certificates. "" uses the
  // system's default trust store. The host name is always verified.
  std::string ca_file{};
  // The largest answer body read; a larger one is kDataLoss (no mark).
  int64_t max_response_bytes = int64_t{16} << 20;
  // Bound on resolving (IP literals and /etc/hosts names; DNS lookups are
  // bounded by the system resolver), connecting and the TLS handshake.
  std::chrono::milliseconds connect_timeout{10'000};
  // Bound on a whole Describe or Healthz exchange.
  std::chrono::milliseconds call_timeout{30'000};
  // A Run's whole exchange is bounded by its timeout_ms (or, when that is
  // <= 0, by unspecified_run_timeout: SPEC §4's default hard ceiling) plus
  // this margin, which covers queueing, sandbox start-up and the network.
  std::chrono::milliseconds run_timeout_margin{30'000};
  std::chrono::milliseconds unspecified_run_timeout{300'000};
};

// The answer of `GET /v1/describe` (api/openapi.yaml `Description`).
struct DaemonDescription {
  int64_t protocol = 0;
  // provider, the claimed tier (description.tier), environment,
  // capabilities, limits and details.
  Description description;
  // The tier a run would get now: the evidence's, never above the claim.
  Tier tier = Tier::kUnknown;
  // nullopt before the daemon has checked its provider's sandbox.
  std::optional<Evidence> evidence;
  // The images the daemon serves (SPEC §7), the default first; empty from a
  // daemon that does not list them. Request::image names one.
  std::vector<ImageInfo> images;
};

class Client {
 public:
  // Parses `url` and checks `options`; connects lazily, on the first call.
  // Refusal(kRequest) for a malformed URL, a bad option, an unreadable CA
  // file, or cleartext http:// to a non-loopback IP address without
  // allow_cleartext. (Host names are resolved and checked before the first
  // connection instead.)
  static Expected<Client> Open(std::string_view url, ClientOptions options = {});

  ~Client();
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // POST /v1/runs. The request is sent as given (RequestToJson); the record
  // is checked against exactly these bytes. A non-zero exit is a Result.
  // Precondition (all calls): *this was not moved from.
  Expected<Result> Run(const Request& request);

  // Sessions (SPEC §9, docs/sessions.md). OpenSession answers the session's
  // identity (id, provider, tier, environment, times); a tier below the
  // request's floor, or another environment than the one it required, is
  // kDataLoss. RunInSession checks the answer as Run does and also the chain:
  // the record must name this session (SHA-256 of `session_id`), carry the
  // next sequence and link to the previous record; a gap, a reorder or a
  // foreign session is kDataLoss without a mark. Every answer is also held to
  // the floor the session was opened with when this Client opened it (the
  // Client keeps it until CloseSession), whatever floor the call asks: an
  // on-path rewriter can lower a cell's tier and recompute every digest, and
  // only a floor catches that. A session opened by another Client is held
  // only to each call's own minimum_isolation, unless the caller tells this
  // Client its floor with SetSessionFloor. `chain` starts empty
  // (ChainState{}) for a new session and is advanced only by answers that
  // pass. CloseSession checks that the close names the chain's last record
  // and call count (kDataLoss if not), and forgets the session's floor.
  Expected<SessionInfo> OpenSession(const SessionOpenRequest& request);
  Expected<Result> RunInSession(std::string_view session_id, const Request& request,
                                ChainState& chain);
  Expected<SessionClose> CloseSession(std::string_view session_id, const ChainState& chain);

  // For a session opened elsewhere (by another Client, or another process:
  // the CLI's `plimsoll session run` opens a Client per command): `floor` is
  // the minimum_isolation the session was opened with ("process",
  // "container", "kernel" or "vm"), and from now until CloseSession every
  // RunInSession answer of `session_id` is held to it exactly as if this
  // Client had opened the session; it replaces any floor held for that
  // session. Sends nothing. The floor must come from where the opener kept
  // it, never from the daemon's answers (an on-path rewriter writes those).
  // Refusal(kRequest) for an ID that is not 32 lowercase hex digits or a
  // name that is not one of those four tiers ("" included).
  Status SetSessionFloor(std::string_view session_id, std::string_view floor);

  // GET /v1/describe.
  Expected<DaemonDescription> Describe();

  // GET /healthz: ok when the daemon answers 200 with this call's ID.
  Status Healthz();

  // Connections opened so far (1 after any number of calls on a kept-alive
  // connection). For diagnostics and tests.
  int64_t connections_opened() const;

 private:
  class Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace plimsoll

#endif  // PLIMSOLL_CLIENT_H_
