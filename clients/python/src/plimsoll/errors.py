"""One error type, with the "nothing ran" mark as a typed value (clients/README.md)."""

from __future__ import annotations

import enum
from typing import Literal, Optional

__all__ = ["Reason", "PlimsollError", "RefusedError", "DataLossError", "ERROR_CODES"]

ERROR_CODES = frozenset({
    "invalid_argument", "unauthenticated", "permission_denied", "failed_precondition",
    "resource_exhausted", "unimplemented", "not_found", "deadline_exceeded", "internal",
    "data_loss",
})


class Reason(str, enum.Enum):
    """Why nothing ran (SPEC §3): the mark a refusal carries."""

    REQUEST = "request"
    PERMISSION = "permission"
    PROTOCOL = "protocol"
    UNSUPPORTED = "unsupported"
    ISOLATION = "isolation"
    CAPACITY = "capacity"
    ENVIRONMENT = "environment"

    @property
    def is_retryable(self) -> bool:
        """True for the four reasons another daemon may not share (SPEC §12)."""
        return self in _RETRYABLE

    def __str__(self) -> str:
        return self.value


_RETRYABLE = frozenset({Reason.UNSUPPORTED, Reason.ISOLATION, Reason.ENVIRONMENT,
                        Reason.CAPACITY})


class PlimsollError(Exception):
    """An error of a plimsoll call.

    ``code`` is the wire code, ``not_dispatched`` the :class:`Reason` when nothing ran (else
    ``None``), ``request_id`` the ID this client sent (``""`` when none was sent), and
    ``http_status`` the answer's status (``0`` when there was no answer).
    """

    code: str
    message: str
    not_dispatched: Optional[Reason]
    request_id: str
    http_status: int

    def __new__(cls, code: str, message: str, not_dispatched: Optional[Reason] = None,
                request_id: str = "", http_status: int = 0) -> "PlimsollError":
        # PlimsollError(...) picks the kind that fits, so `except RefusedError` always works.
        if cls is PlimsollError:
            if not_dispatched is not None:
                cls = RefusedError
            elif code == "data_loss":
                cls = DataLossError
        return Exception.__new__(cls)

    def __init__(self, code: str, message: str, not_dispatched: Optional[Reason] = None,
                 request_id: str = "", http_status: int = 0) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.not_dispatched = not_dispatched
        self.request_id = request_id
        self.http_status = http_status

    @property
    def ran(self) -> Literal[False, "unknown"]:
        """``False`` when the error carries the "nothing ran" mark, else ``"unknown"``."""
        return False if self.not_dispatched is not None else "unknown"

    @property
    def is_retryable(self) -> bool:
        """True only for refusals marked unsupported, isolation, environment or capacity."""
        return self.not_dispatched is not None and self.not_dispatched.is_retryable

    def __str__(self) -> str:
        mark = f" (nothing ran: {self.not_dispatched.value})" if self.not_dispatched else ""
        return f"{self.code}{mark}: {self.message}"

    def __repr__(self) -> str:
        mark = self.not_dispatched.value if self.not_dispatched else None
        return (f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, "
                f"not_dispatched={mark!r}, request_id={self.request_id!r}, "
                f"http_status={self.http_status})")

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (PlimsollError, (self.code, self.message, self.not_dispatched, self.request_id,
                                self.http_status))


class RefusedError(PlimsollError):
    """A refusal that carries the "nothing ran" mark: safe to fix and resend."""


class DataLossError(PlimsollError):
    """Code ``data_loss``: the answer was not believed; the call may have run."""
