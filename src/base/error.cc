#include "plimsoll/error.h"

#include <array>
#include <cstring>
#include <string>

namespace plimsoll {
namespace {

struct CodeName {
  ErrorCode code;
  std::string_view name;
};

constexpr std::array<CodeName, 10> kCodeNames = {{
    {ErrorCode::kInvalidArgument, "invalid_argument"},
    {ErrorCode::kUnauthenticated, "unauthenticated"},
    {ErrorCode::kPermissionDenied, "permission_denied"},
    {ErrorCode::kFailedPrecondition, "failed_precondition"},
    {ErrorCode::kResourceExhausted, "resource_exhausted"},
    {ErrorCode::kUnimplemented, "unimplemented"},
    {ErrorCode::kNotFound, "not_found"},
    {ErrorCode::kDeadlineExceeded, "deadline_exceeded"},
    {ErrorCode::kInternal, "internal"},
    {ErrorCode::kDataLoss, "data_loss"},
}};

struct ReasonName {
  NotDispatched reason;
  std::string_view name;
  ErrorCode default_code;
};

constexpr std::array<ReasonName, 7> kReasonNames = {{
    {NotDispatched::kRequest, "request", ErrorCode::kInvalidArgument},
    {NotDispatched::kPermission, "permission", ErrorCode::kPermissionDenied},
    {NotDispatched::kProtocol, "protocol", ErrorCode::kFailedPrecondition},
    {NotDispatched::kUnsupported, "unsupported", ErrorCode::kUnimplemented},
    {NotDispatched::kIsolation, "isolation", ErrorCode::kFailedPrecondition},
    {NotDispatched::kCapacity, "capacity", ErrorCode::kResourceExhausted},
    {NotDispatched::kEnvironment, "environment", ErrorCode::kFailedPrecondition},
}};

}  // namespace

std::string_view ErrorCodeName(ErrorCode code) {
  for (const auto& entry : kCodeNames) {
    if (entry.code == code) return entry.name;
  }
  return "internal";
}

std::optional<ErrorCode> ParseErrorCode(std::string_view name) {
  for (const auto& entry : kCodeNames) {
    if (entry.name == name) return entry.code;
  }
  return std::nullopt;
}

std::string_view NotDispatchedName(NotDispatched reason) {
  for (const auto& entry : kReasonNames) {
    if (entry.reason == reason) return entry.name;
  }
  return "request";
}

std::optional<NotDispatched> ParseNotDispatched(std::string_view name) {
  for (const auto& entry : kReasonNames) {
    if (entry.name == name) return entry.reason;
  }
  return std::nullopt;
}

ErrorCode DefaultCodeFor(NotDispatched reason) {
  for (const auto& entry : kReasonNames) {
    if (entry.reason == reason) return entry.default_code;
  }
  return ErrorCode::kInvalidArgument;
}

bool IsRetryableElsewhere(NotDispatched reason) {
  return reason == NotDispatched::kUnsupported || reason == NotDispatched::kIsolation ||
         reason == NotDispatched::kEnvironment || reason == NotDispatched::kCapacity;
}

std::string Error::ToString() const {
  std::string text(ErrorCodeName(code_));
  text += ": ";
  text += message_;
  if (not_dispatched_) {
    text += " (nothing ran: ";
    text += NotDispatchedName(*not_dispatched_);
    text += ")";
  }
  return text;
}

Error Error::WithContext(std::string_view context) const {
  std::string message(context);
  message += ": ";
  message += message_;
  return Error(code_, std::move(message), not_dispatched_);
}

Error Refusal(NotDispatched reason, std::string message) {
  return Error(DefaultCodeFor(reason), std::move(message), reason);
}

Error Refusal(NotDispatched reason, ErrorCode code, std::string message) {
  return Error(code, std::move(message), reason);
}

Error Failure(ErrorCode code, std::string message) {
  return Error(code, std::move(message));
}

Error SystemError(std::string_view what, int errno_value) {
  std::string message(what);
  message += ": ";
  message += std::strerror(errno_value);
  return Error(ErrorCode::kInternal, std::move(message));
}

}  // namespace plimsoll
