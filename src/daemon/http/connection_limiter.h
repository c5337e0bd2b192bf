// Caps on open connections, in all and per peer, so a client that opens
// connections and sends nothing (or sends slowly) cannot take every
// descriptor and event-loop slot of the daemon (docs/daemon.md
// "Connection caps").
//
// A peer is the remote address for TCP (an IPv4 address; for IPv6 its /64
// prefix, since one host commonly holds a whole /64) and the peer's uid for
// a Unix socket (SO_PEERCRED). The per-peer cap is kept at or below the
// global one (settings.cc), so one peer alone can never fill the daemon: the
// others keep max_connections - max_per_peer connections at least.
//
// A connection over a cap is refused before anything is read from it
// (listener.cc): plaintext listeners answer 503 `resource_exhausted` marked
// `capacity` with Retry-After and close; a TLS listener closes without an
// answer (a handshake would cost what the cap saves). At most kMaxRefusing
// refusals are in progress at once; beyond that a refused connection is
// closed without an answer.
//
// Thread-safety: every method may be called from any thread. The lock is
// held only to update counters, never across I/O.
//
// Usage:
//   ConnectionLimiter limiter({.max_connections = 1024, .max_per_peer = 64});
//   auto admitted = limiter.TryAcquire(PeerKeyOf(socket));
//   if (auto* slot = std::get_if<ConnectionLimiter::Slot>(&admitted)) ... // serve, keep the slot
//   else ... RejectionName(std::get<ConnectionLimiter::Rejection>(admitted)) ...
#ifndef PLIMSOLL_DAEMON_HTTP_CONNECTION_LIMITER_H_
#define PLIMSOLL_DAEMON_HTTP_CONNECTION_LIMITER_H_

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <variant>

namespace plimsoll::daemon::http {

class ConnectionLimiter {
 public:
  struct Options {
    size_t max_connections = 1024;
    size_t max_per_peer = 128;
  };
  enum class Rejection { kGlobal, kPeer };
  static constexpr size_t kMaxRefusing = 64;

  // One admitted connection; releases its place when destroyed. The limiter
  // must outlive it.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : limiter_(other.limiter_), peer_(std::move(other.peer_)) {
      other.limiter_ = nullptr;
    }
    Slot& operator=(Slot&&) = delete;
    ~Slot();

   private:
    friend class ConnectionLimiter;
    Slot(ConnectionLimiter* limiter, std::string peer)
        : limiter_(limiter), peer_(std::move(peer)) {}
    ConnectionLimiter* limiter_;
    std::string peer_;
  };

  // One refusal in progress (its answer being written); see kMaxRefusing.
  class RefusalSlot {
   public:
    RefusalSlot(RefusalSlot&& other) noexcept : limiter_(other.limiter_) {
      other.limiter_ = nullptr;
    }
    RefusalSlot& operator=(RefusalSlot&&) = delete;
    ~RefusalSlot();

   private:
    friend class ConnectionLimiter;
    explicit RefusalSlot(ConnectionLimiter* limiter) : limiter_(limiter) {}
    ConnectionLimiter* limiter_;
  };

  explicit ConnectionLimiter(const Options& options) : options_(options) {}
  ConnectionLimiter(const ConnectionLimiter&) = delete;
  ConnectionLimiter& operator=(const ConnectionLimiter&) = delete;

  // A place for one more connection of `peer`, or which cap refuses it (the
  // per-peer cap is checked first, so a peer at its own cap reads "peer").
  std::variant<Slot, Rejection> TryAcquire(const std::string& peer);
  // A place to answer one refused connection; nullptr when kMaxRefusing are
  // already in progress.
  std::unique_ptr<RefusalSlot> TryBeginRefusal();

  size_t open() const;
  size_t open_for(const std::string& peer) const;
  const Options& options() const { return options_; }

 private:
  void Release(const std::string& peer);

  const Options options_;
  mutable std::mutex mutex_;
  size_t open_ = 0;
  std::map<std::string, size_t> per_peer_;  // only peers with open connections
  size_t refusing_ = 0;
};

// "global" / "peer" (the metric's reason label).
std::string_view RejectionName(ConnectionLimiter::Rejection rejection);

// The peer of an accepted connection: "ip:203.0.113.7", "ip6:2001:db8:1:2::/64",
// "uid:1000"; "unknown" when the kernel does not say (all such share a key).
std::string PeerKeyOf(const boost::asio::ip::tcp::socket& socket);
std::string PeerKeyOf(const boost::asio::local::stream_protocol::socket& socket);

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_CONNECTION_LIMITER_H_
