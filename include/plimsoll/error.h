// Errors as values.
//
// Every fallible plimsoll function returns an `Expected<T>` (a value or an
// `Error`) or a `Status` (`Expected<void>`). Exceptions never cross a module
// boundary. An `Error` carries:
//   - a stable `ErrorCode` (the HTTP API's `code` strings, SPEC §4);
//   - a whole-sentence message;
//   - when the error provably happened before any guest code started, a
//     `NotDispatched` reason (SPEC §3). An error without that mark may have
//     come after code started: callers must never retry it automatically.
//
// Usage:
//
//   plimsoll::Expected<int> ParsePort(std::string_view text) {
//     if (text.empty()) {
//       return plimsoll::Refusal(plimsoll::NotDispatched::kRequest,
//                                "The port is empty.");
//     }
//     ...
//     return port;
//   }
//
//   auto port = ParsePort(argument);
//   if (!port.ok()) {
//     if (auto reason = plimsoll::NotDispatchedReason(port.error())) { ... }
//     return port.error();
//   }
//   Use(*port);
#ifndef PLIMSOLL_ERROR_H_
#define PLIMSOLL_ERROR_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace plimsoll {

// The stable error codes of the HTTP API (SPEC §4).
enum class ErrorCode {
  kInvalidArgument,
  kUnauthenticated,
  kPermissionDenied,
  kFailedPrecondition,
  kResourceExhausted,
  kUnimplemented,
  kNotFound,
  kDeadlineExceeded,
  kInternal,
  kDataLoss,
};

// Why nothing ran (SPEC §3). Present on an error only when no guest code ran.
enum class NotDispatched {
  kRequest,      // malformed or out of bounds
  kPermission,   // authentication, authorisation, grant
  kProtocol,     // wrong protocol number
  kUnsupported,  // this provider cannot do that, or execution is disabled
  kIsolation,    // current evidence is below the floor
  kCapacity,     // shed by admission, rate or session limits
  kEnvironment,  // required identity unavailable, or sandbox unconfirmed
};

// "invalid_argument", "unauthenticated", ...
std::string_view ErrorCodeName(ErrorCode code);
std::optional<ErrorCode> ParseErrorCode(std::string_view name);

// "request", "permission", ...
std::string_view NotDispatchedName(NotDispatched reason);
std::optional<NotDispatched> ParseNotDispatched(std::string_view name);

// The error code a refusal of this kind is answered with (e.g. kIsolation ->
// kFailedPrecondition, kCapacity -> kResourceExhausted).
ErrorCode DefaultCodeFor(NotDispatched reason);

// Whether a client may retry this refusal on another daemon (SPEC §3):
// only unsupported, isolation, environment and capacity.
bool IsRetryableElsewhere(NotDispatched reason);

class Error {
 public:
  Error(ErrorCode code, std::string message,
        std::optional<NotDispatched> not_dispatched = std::nullopt)
      : code_(code), message_(std::move(message)), not_dispatched_(not_dispatched) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::optional<NotDispatched>& not_dispatched() const { return not_dispatched_; }

  // "<code>: <message>", plus " (nothing ran: <reason>)" when marked.
  std::string ToString() const;

  // Returns a copy with `context` prepended to the message ("context: msg").
  Error WithContext(std::string_view context) const;

  friend bool operator==(const Error&, const Error&) = default;

 private:
  ErrorCode code_;
  std::string message_;
  std::optional<NotDispatched> not_dispatched_;
};

// Reads the "nothing ran" mark of an error (SPEC §3).
inline std::optional<NotDispatched> NotDispatchedReason(const Error& error) {
  return error.not_dispatched();
}

// A refusal: nothing ran. The code defaults to DefaultCodeFor(reason).
Error Refusal(NotDispatched reason, std::string message);
Error Refusal(NotDispatched reason, ErrorCode code, std::string message);

// An error that carries no "nothing ran" mark.
Error Failure(ErrorCode code, std::string message);

// An internal error built from a failing system call: "<what>: <strerror>".
Error SystemError(std::string_view what, int errno_value);

// A value of type T, or an Error.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Expected(Error error) : state_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  // Preconditions: ok() for value(), !ok() for error().
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const Error& error() const { return std::get<Error>(state_); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> state_;
};

// Success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT: implicit

  static Status Ok() { return Status(); }
  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  // Precondition: !ok().
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

}  // namespace plimsoll

// Propagates the error of a Status or Expected expression:
//   PLIMSOLL_RETURN_IF_ERROR(WriteAll(fd, bytes));
#define PLIMSOLL_RETURN_IF_ERROR(expression)                     \
  do {                                                           \
    auto plimsoll_status_ = (expression);                        \
    if (!plimsoll_status_.ok()) return plimsoll_status_.error(); \
  } while (false)

#endif  // PLIMSOLL_ERROR_H_
