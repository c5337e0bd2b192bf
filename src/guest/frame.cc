// Frames on the agent channel, and the report seal (see protocol.h).
//
// The seal is HMAC-SHA256 (RFC 2104) built on OpenSSL's SHA-256 block
// functions rather than HMAC()/EVP: in OpenSSL 3 the first EVP fetch of a
// process builds the whole legacy algorithm name table, which the agent (a
// fresh static process every run) paid on each report, a large share of
// its CPU time. The low-level functions are the same SHA-256 without that
// set-up; they are deprecated, not removed, in OpenSSL 3.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdint>
#include <string>

#include "guest/host_calls.h"
#include "guest/protocol.h"

namespace plimsoll::guest {
namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left until `deadline`, clamped to what poll() accepts.
int PollTimeout(Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(left, INT_MAX));
}

// Waits until `fd` is ready for `events`; false with `error` set otherwise.
Status WaitReady(int fd, short events, Clock::time_point deadline, std::string_view what) {
  for (;;) {
    pollfd entry{fd, events, 0};
    int timeout = PollTimeout(deadline);
    int ready = poll(&entry, 1, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return SystemError(std::string("poll on the agent channel while ") + std::string(what),
                         errno);
    }
    if (ready > 0) return Status::Ok();  // readable, writable, hung up or error: let I/O say
    if (Clock::now() >= deadline) {
      return Failure(
          ErrorCode::kDeadlineExceeded,
          "The agent channel was silent past the deadline while " + std::string(what) + ".");
    }
  }
}

// A socket is written first and polled only when it is full (send() with
// MSG_DONTWAIT never blocks, MSG_NOSIGNAL keeps a closed peer from raising
// SIGPIPE): one call less per frame, which counts under gVisor's ptrace
// platform. A pipe or a character device (virtio-serial) is not a socket: it
// is polled first, then given at most PIPE_BUF bytes, which a blocking one
// that polled writable takes without blocking (more could block past the
// deadline).
Status WriteAll(int fd, std::string_view bytes, Clock::time_point deadline) {
  bool socket = true;
  while (!bytes.empty()) {
    ssize_t written = -1;
    if (socket) {
      written = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (written < 0 && errno == ENOTSOCK) socket = false;
    }
    if (!socket) {
      PLIMSOLL_RETURN_IF_ERROR(WaitReady(fd, POLLOUT, deadline, "writing a frame"));
      written = write(fd, bytes.data(), std::min<size_t>(bytes.size(), PIPE_BUF));
    }
    if (written < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        PLIMSOLL_RETURN_IF_ERROR(WaitReady(fd, POLLOUT, deadline, "writing a frame"));
        continue;
      }
      return SystemError("writing a frame on the agent channel", errno);
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return Status::Ok();
}

// Reads exactly `size` bytes into `out`. `what` names the part for messages.
// Each read is polled first (for the deadline), except where a poll is a
// system call for nothing (under gVisor's ptrace platform each costs ~50
// us): `likely_there`, the bytes probably arrived already (a frame's body,
// sent with its header), so a socket is read first, without blocking
// (recv() with MSG_DONTWAIT); and no deadline (time_point::max(): an agent
// waiting for its job as long as it takes), where a plain read may block.
// A read that finds nothing (EAGAIN) is then polled as usual.
Status ReadExactly(int fd, char* out, size_t size, Clock::time_point deadline,
                   std::string_view what, bool likely_there = false) {
  const bool unbounded = deadline == Clock::time_point::max();
  size_t done = 0;
  bool socket = likely_there;
  while (done < size) {
    ssize_t got = -1;
    if (socket) {
      got = recv(fd, out + done, size - done, MSG_DONTWAIT);
      if (got < 0 && errno == ENOTSOCK) socket = false;
    }
    if (!socket) {
      if (!unbounded) {
        PLIMSOLL_RETURN_IF_ERROR(WaitReady(fd, POLLIN, deadline, "reading a frame"));
      }
      got = read(fd, out + done, size - done);
    }
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        PLIMSOLL_RETURN_IF_ERROR(WaitReady(fd, POLLIN, deadline, "reading a frame"));
        continue;
      }
      if (errno == EINTR) continue;
      return SystemError("reading a frame from the agent channel", errno);
    }
    if (got == 0) {
      return Failure(ErrorCode::kDataLoss,
                     "The agent channel closed after " + std::to_string(done) + " of " +
                         std::to_string(size) + " bytes of " + std::string(what) + ".");
    }
    done += static_cast<size_t>(got);
  }
  return Status::Ok();
}

// Appends one frame (header and bytes) to `out`.
Status AppendFrame(std::string_view bytes, std::string* out) {
  if (bytes.size() > kMaxFrameBytes) {
    return Failure(ErrorCode::kResourceExhausted, "A frame of " + std::to_string(bytes.size()) +
                                                      " bytes exceeds the limit of " +
                                                      std::to_string(kMaxFrameBytes) + " bytes.");
  }
  auto size = static_cast<uint32_t>(bytes.size());
  out->push_back(static_cast<char>((size >> 24) & 0xff));
  out->push_back(static_cast<char>((size >> 16) & 0xff));
  out->push_back(static_cast<char>((size >> 8) & 0xff));
  out->push_back(static_cast<char>(size & 0xff));
  out->append(bytes);
  return Status::Ok();
}

}  // namespace

std::string Seal(std::string_view key, std::string_view bytes) {
  // HMAC(K, m) = H((K0 ^ opad) || H((K0 ^ ipad) || m)), K0 = K padded with
  // zeros to the block size (hashed first when longer than a block).
  // (Only SHA256_Init/Update/Final: the one-shot SHA256() goes through EVP.)
  std::array<unsigned char, SHA256_CBLOCK> block{};
  SHA256_CTX context;
  if (key.size() > block.size()) {
    SHA256_Init(&context);
    SHA256_Update(&context, key.data(), key.size());
    SHA256_Final(block.data(), &context);
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::array<unsigned char, SHA256_CBLOCK> pad{};
  std::array<unsigned char, SHA256_DIGEST_LENGTH> inner{}, mac{};
  for (size_t i = 0; i < pad.size(); ++i) pad[i] = block[i] ^ 0x36;
  SHA256_Init(&context);
  SHA256_Update(&context, pad.data(), pad.size());
  SHA256_Update(&context, bytes.data(), bytes.size());
  SHA256_Final(inner.data(), &context);
  for (size_t i = 0; i < pad.size(); ++i) pad[i] = block[i] ^ 0x5c;
  SHA256_Init(&context);
  SHA256_Update(&context, pad.data(), pad.size());
  SHA256_Update(&context, inner.data(), inner.size());
  SHA256_Final(mac.data(), &context);
  // The key's traces go with the stack frame.
  OPENSSL_cleanse(block.data(), block.size());
  OPENSSL_cleanse(pad.data(), pad.size());
  OPENSSL_cleanse(&context, sizeof context);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(mac.size() * 2);
  for (unsigned char byte : mac) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 15]);
  }
  return hex;
}

Status WriteFrame(int fd, std::string_view bytes, Clock::time_point deadline) {
  std::string frame;
  frame.reserve(4 + bytes.size());
  PLIMSOLL_RETURN_IF_ERROR(AppendFrame(bytes, &frame));
  return WriteAll(fd, frame, deadline);
}

Status WriteFrames(int fd, std::string_view first, std::string_view second,
                   Clock::time_point deadline) {
  std::string frames;
  frames.reserve(8 + first.size() + second.size());
  PLIMSOLL_RETURN_IF_ERROR(AppendFrame(first, &frames));
  PLIMSOLL_RETURN_IF_ERROR(AppendFrame(second, &frames));
  return WriteAll(fd, frames, deadline);
}

Expected<std::string> ReadFrame(int fd, Clock::time_point deadline) {
  std::array<unsigned char, 4> header{};
  PLIMSOLL_RETURN_IF_ERROR(
      ReadExactly(fd, reinterpret_cast<char*>(header.data()), 4, deadline, "a frame header"));
  uint32_t size = (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16) |
                  (uint32_t{header[2]} << 8) | uint32_t{header[3]};
  if (size > kMaxFrameBytes) {
    return Failure(ErrorCode::kDataLoss, "The agent channel announced a frame of " +
                                             std::to_string(size) + " bytes; the limit is " +
                                             std::to_string(kMaxFrameBytes) + ".");
  }
  std::string body(size, '\0');
  PLIMSOLL_RETURN_IF_ERROR(
      ReadExactly(fd, body.data(), size, deadline, "a frame", /*likely_there=*/true));
  return body;
}

// The report frame and its seal, the seal checked in constant time.
Expected<std::string> ReadSealedFrame(int fd, std::string_view report_key,
                                      Clock::time_point deadline, GrantedCalls* calls) {
  if (report_key.size() != kReportKeyBytes) {
    return Failure(ErrorCode::kInternal,
                   "The report key is not " + std::to_string(kReportKeyBytes) + " bytes long.");
  }
  auto report_bytes = ReadFrameAnsweringHostCalls(fd, calls, deadline);
  if (!report_bytes.ok()) return report_bytes.error().WithContext("The agent's report");
  auto seal = ReadFrame(fd, deadline);
  if (!seal.ok()) return seal.error().WithContext("The agent's report seal");
  std::string expected = Seal(report_key, *report_bytes);
  if (seal->size() != expected.size() ||
      CRYPTO_memcmp(seal->data(), expected.data(), expected.size()) != 0) {
    return Failure(ErrorCode::kDataLoss,
                   "The agent's report does not carry a valid seal; it is not trusted.");
  }
  return report_bytes;
}

Expected<Report> ReadSealedReport(int fd, std::string_view report_key, Clock::time_point deadline) {
  auto frame = ReadSealedFrame(fd, report_key, deadline);
  if (!frame.ok()) return frame.error();
  return DecodeReport(*frame);
}

}  // namespace plimsoll::guest
