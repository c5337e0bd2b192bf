// Blocking use of one asio operation: start it, run the io_context until it
// has completed, return its error. The broker's upstream client
// (src/broker/upstream.cc) and the C++ client of plimsolld
// (src/client/http_connection.cc) drive every connect, handshake, read and
// write this way, each on an io_context of its own, with the stream's
// deadline (beast's expires_at) as the bound.
//
// Usage:
//   stream.expires_at(deadline);
//   boost::system::error_code error = RunToCompletion(
//       io, [&](auto handler) { stream.async_connect(endpoints, handler); });
//   if (error == boost::beast::error::timeout) ...
//
// Not thread-safe: `io` must be used by this thread alone.
#ifndef PLIMSOLL_NET_RUN_TO_COMPLETION_H_
#define PLIMSOLL_NET_RUN_TO_COMPLETION_H_

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

namespace plimsoll::net {

// Runs `io` until the operation `start` launches (`start` is called with a
// completion handler taking an error_code and any other results, which are
// dropped) has completed and returns its error; operation_aborted if the
// handler never ran. run() returns only when no work is left, so the
// operation and the stream's deadline timer have both finished by then.
template <typename Start>
boost::system::error_code RunToCompletion(boost::asio::io_context& io, Start&& start) {
  boost::system::error_code result = boost::asio::error::operation_aborted;
  start([&result](boost::system::error_code error, auto&&...) { result = error; });
  io.restart();
  io.run();
  return result;
}

}  // namespace plimsoll::net

#endif  // PLIMSOLL_NET_RUN_TO_COMPLETION_H_
