package plimsoll

import (
	"errors"
	"strconv"
	"strings"
)

// Reason is a refusal's "nothing ran" mark (SPEC §3); "" when the error carries none.
type Reason string

// The seven reasons. Only the last four are retryable, elsewhere (placement) or later.
const (
	ReasonNone        Reason = ""
	ReasonRequest     Reason = "request"
	ReasonPermission  Reason = "permission"
	ReasonProtocol    Reason = "protocol"
	ReasonUnsupported Reason = "unsupported"
	ReasonIsolation   Reason = "isolation"
	ReasonCapacity    Reason = "capacity"
	ReasonEnvironment Reason = "environment"
)

func (r Reason) known() bool {
	switch r {
	case ReasonRequest, ReasonPermission, ReasonProtocol, ReasonUnsupported, ReasonIsolation,
		ReasonCapacity, ReasonEnvironment:
		return true
	}
	return false
}

// IsRetryable is true only for unsupported, isolation, environment and capacity.
func (r Reason) IsRetryable() bool {
	switch r {
	case ReasonUnsupported, ReasonIsolation, ReasonEnvironment, ReasonCapacity:
		return true
	}
	return false
}

// Ran says whether the code ran: RanNo (a refusal with the mark), RanUnknown (any other error:
// it may have run) or RanYes (a result).
type Ran int

const (
	RanUnknown Ran = iota
	RanNo
	RanYes
)

// String is what an agent tool passes to the model: "false", "unknown" or "true".
func (r Ran) String() string {
	switch r {
	case RanNo:
		return "false"
	case RanYes:
		return "true"
	}
	return "unknown"
}

// The wire error codes.
const (
	CodeInvalidArgument    = "invalid_argument"
	CodeUnauthenticated    = "unauthenticated"
	CodePermissionDenied   = "permission_denied"
	CodeFailedPrecondition = "failed_precondition"
	CodeResourceExhausted  = "resource_exhausted"
	CodeUnimplemented      = "unimplemented"
	CodeNotFound           = "not_found"
	CodeDeadlineExceeded   = "deadline_exceeded"
	CodeInternal           = "internal"
	CodeDataLoss           = "data_loss"
)

func knownCode(code string) bool {
	switch code {
	case CodeInvalidArgument, CodeUnauthenticated, CodePermissionDenied, CodeFailedPrecondition,
		CodeResourceExhausted, CodeUnimplemented, CodeNotFound, CodeDeadlineExceeded, CodeInternal,
		CodeDataLoss:
		return true
	}
	return false
}

// Kinds for errors.Is: ErrRefused matches an *Error with a "nothing ran" mark, ErrDataLoss one
// with code data_loss (the answer was not believed; the call may have run).
var (
	ErrRefused  = errors.New("plimsoll: refused, nothing ran")
	ErrDataLoss = errors.New("plimsoll: data loss, the answer was not believed")
)

// Error is the one error type of this package. A non-zero exit code is never an Error.
type Error struct {
	Code          string // the wire code (invalid_argument, ..., data_loss)
	Message       string
	NotDispatched Reason // the "nothing ran" mark; "" when none
	RequestID     string // the Plimsoll-Request-Id sent, when a request was made
	HTTPStatus    int    // 0 when no answer was believed to come from the daemon
	cause         error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("plimsoll: ")
	b.WriteString(e.Code)
	if e.NotDispatched != "" {
		b.WriteString(" (not dispatched: ")
		b.WriteString(string(e.NotDispatched))
		b.WriteString(")")
	}
	if e.HTTPStatus != 0 {
		b.WriteString(" [HTTP ")
		b.WriteString(strconv.Itoa(e.HTTPStatus))
		b.WriteString("]")
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.RequestID != "" {
		b.WriteString(" (request ")
		b.WriteString(e.RequestID)
		b.WriteString(")")
	}
	return b.String()
}

// String is Error().
func (e *Error) String() string { return e.Error() }

// GoString keeps %#v to the same fields (the cause may be a transport error).
func (e *Error) GoString() string { return "&plimsoll.Error{" + strconv.Quote(e.Error()) + "}" }

// Ran is RanNo when the error carries the mark, otherwise RanUnknown.
func (e *Error) Ran() Ran {
	if e.NotDispatched != "" {
		return RanNo
	}
	return RanUnknown
}

// IsRetryable is true only for the marks unsupported, isolation, environment and capacity.
func (e *Error) IsRetryable() bool { return e.NotDispatched.IsRetryable() }

// Is matches the kinds ErrRefused and ErrDataLoss.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrRefused:
		return e.NotDispatched != ""
	case ErrDataLoss:
		return e.Code == CodeDataLoss
	}
	return false
}

// Unwrap is the underlying cause (a context's error, a transport error), if any.
func (e *Error) Unwrap() error { return e.cause }

func refused(code string, reason Reason, message string) *Error {
	return &Error{Code: code, NotDispatched: reason, Message: message}
}

func dataLoss(requestID string, status int, message string) *Error {
	return &Error{Code: CodeDataLoss, RequestID: requestID, HTTPStatus: status, Message: message}
}
