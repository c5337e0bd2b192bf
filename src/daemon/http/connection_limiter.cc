#include "daemon/http/connection_limiter.h"

#include <sys/socket.h>

#include <array>
#include <cstdio>

namespace plimsoll::daemon::http {

ConnectionLimiter::Slot::~Slot() {
  if (limiter_ != nullptr) limiter_->Release(peer_);
}

ConnectionLimiter::RefusalSlot::~RefusalSlot() {
  if (limiter_ == nullptr) return;
  std::lock_guard lock(limiter_->mutex_);
  --limiter_->refusing_;
}

std::variant<ConnectionLimiter::Slot, ConnectionLimiter::Rejection> ConnectionLimiter::TryAcquire(
    const std::string& peer) {
  std::lock_guard lock(mutex_);
  auto found = per_peer_.find(peer);
  size_t of_peer = found == per_peer_.end() ? 0 : found->second;
  if (of_peer >= options_.max_per_peer) return Rejection::kPeer;
  if (open_ >= options_.max_connections) return Rejection::kGlobal;
  ++open_;
  ++per_peer_[peer];
  return Slot(this, peer);
}

std::unique_ptr<ConnectionLimiter::RefusalSlot> ConnectionLimiter::TryBeginRefusal() {
  std::lock_guard lock(mutex_);
  if (refusing_ >= kMaxRefusing) return nullptr;
  ++refusing_;
  return std::unique_ptr<RefusalSlot>(new RefusalSlot(this));
}

void ConnectionLimiter::Release(const std::string& peer) {
  std::lock_guard lock(mutex_);
  --open_;
  auto found = per_peer_.find(peer);
  if (found != per_peer_.end() && --found->second == 0) per_peer_.erase(found);
}

size_t ConnectionLimiter::open() const {
  std::lock_guard lock(mutex_);
  return open_;
}

size_t ConnectionLimiter::open_for(const std::string& peer) const {
  std::lock_guard lock(mutex_);
  auto found = per_peer_.find(peer);
  return found == per_peer_.end() ? 0 : found->second;
}

std::string_view RejectionName(ConnectionLimiter::Rejection rejection) {
  return rejection == ConnectionLimiter::Rejection::kGlobal ? "global" : "peer";
}

std::string PeerKeyOf(const boost::asio::ip::tcp::socket& socket) {
  boost::system::error_code error;
  auto endpoint = socket.remote_endpoint(error);
  if (error) return "unknown";
  auto address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
  }
  if (address.is_v4()) return "ip:" + address.to_string();
  auto bytes = address.to_v6().to_bytes();
  std::string key = "ip6:";
  for (size_t i = 0; i < 8; i += 2) {
    std::array<char, 8> group{};
    std::snprintf(group.data(), group.size(), "%x:", (bytes[i] << 8) | bytes[i + 1]);
    key += group.data();
  }
  return key + ":/64";
}

std::string PeerKeyOf(const boost::asio::local::stream_protocol::socket& socket) {
  ucred credentials{};
  socklen_t size = sizeof credentials;
  if (::getsockopt(const_cast<boost::asio::local::stream_protocol::socket&>(socket).native_handle(),
                   SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) {
    return "unknown";
  }
  return "uid:" + std::to_string(credentials.uid);
}

}  // namespace plimsoll::daemon::http
