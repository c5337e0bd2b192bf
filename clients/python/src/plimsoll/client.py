"""The synchronous client: :class:`Client`, :class:`Session` and :class:`Pool`."""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any, Dict, List, Optional, Sequence, Tuple, Type, Union

from . import _api
from ._calls import RunCalls
from ._core import (Base, ChainState, Data, Files, check_describe_answer, check_run_answer,
                    check_session_close_answer, check_session_id, check_session_open_answer,
                    check_session_state_answer, encode_json)
from ._transport import SyncConnection
from .errors import PlimsollError, Reason
from .results import Artifact, Describe, Result, SessionEnd, SessionInfo, SessionState

__all__ = ["Client", "Session", "Pool"]

_RAN = "the code may have run"


class Client(Base, RunCalls):
    """A client of one plimsolld. Thread-safe: one call at a time uses its kept connection.

    ``url`` is ``http://HOST[:PORT][/PREFIX]``, ``https://...`` or ``unix:/PATH``. ``token``
    defaults to the ``PLIMSOLL_TOKEN`` environment variable and is never printed.
    """

    def __init__(self, url: str, *, token: Optional[str] = None, allow_cleartext: bool = False,
                 ca_file: Optional[str] = None, max_response_bytes: int = 32 * 1024 * 1024,
                 connect_timeout: float = 10.0, call_timeout: float = 30.0,
                 run_timeout_margin: float = 30.0,
                 owner_key: Union[bytes, str, None] = None) -> None:
        super().__init__(url, token=token, allow_cleartext=allow_cleartext, ca_file=ca_file,
                         max_response_bytes=max_response_bytes, connect_timeout=connect_timeout,
                         call_timeout=call_timeout, run_timeout_margin=run_timeout_margin,
                         owner_key=owner_key)
        self._connection = SyncConnection(self._settings)
        self._lock = threading.Lock()

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the kept connection (a later call opens a new one)."""
        with self._lock:
            self._connection.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.close()

    @property
    def connections_opened(self) -> int:
        """How many connections this client has made so far (keep-alive reuses one)."""
        return self._connection.connections_opened

    # -- calls ------------------------------------------------------------------------------

    def _exchange(self, method: str, path: str, body: Optional[bytes], budget: float,
                  consequence: str) -> Tuple[str, Any]:
        request_id, data = self._encode(method, path, body)
        with self._lock:
            answer = self._connection.exchange(request_id, data, budget, consequence)
        return request_id, answer

    def _run_at(self, path: str, request: Dict[str, Any],
                chain: Optional[ChainState] = None) -> Result:
        body = encode_json(request)
        request_id, answer = self._exchange("POST", path, body, self._run_budget(request), _RAN)
        return check_run_answer(request, request_id, answer, chain)

    def _send(self, request: Dict[str, Any]) -> Result:
        return self._run_at("/v1/runs", request)

    def describe(self) -> Describe:
        """``GET /v1/describe``: provider, tier, capabilities, environment, limits, images."""
        request_id, answer = self._exchange("GET", "/v1/describe", None,
                                            self._settings.call_timeout,
                                            "the daemon may have answered")
        return check_describe_answer(request_id, answer)

    def open_session(self, *, minimum_isolation: Optional[str] = None,
                     environment: Optional[str] = None, owner: Optional[str] = None,
                     lifetime_ms: Optional[int] = None,
                     idle_timeout_ms: Optional[int] = None,
                     image: Optional[str] = None) -> "Session":
        """Opens a session (one sandbox kept for many calls); use it as a context manager.

        ``owner`` is the end user's name: only its HMAC under ``owner_key`` is sent. ``image``
        names one of the daemon's images (``describe().images``); the session's calls run there.
        """
        request = _api.session_open_request(minimum_isolation, environment,
                                            self._owner_hmac(owner), lifetime_ms,
                                            idle_timeout_ms, image)
        request_id, answer = self._exchange("POST", "/v1/sessions", encode_json(request),
                                            self._settings.call_timeout,
                                            "the session may have been opened")
        return Session(self, check_session_open_answer(request, request_id, answer),
                       floor=request.get("minimum_isolation"))


class Session(RunCalls):
    """One session on one daemon. Every answer must continue the session's record chain."""

    def __init__(self, client: Client, opened: SessionInfo, *,
                 floor: Optional[str] = None) -> None:
        self._client = client
        self.opened = opened
        # Every answer of the session is held to the floor it was opened with.
        self._chain = ChainState(opened.session_id, floor)
        self._end: Optional[SessionEnd] = None
        self._path = f"/v1/sessions/{opened.session_id}"

    @property
    def session_id(self) -> str:
        return self.opened.session_id

    @property
    def calls(self) -> int:
        """How many calls of this session were answered and checked."""
        return self._chain.last_sequence

    def __repr__(self) -> str:
        state = f", ended={self._end.ended!r}" if self._end else ""
        return (f"Session(provider={self.opened.provider!r}, isolation={self.opened.isolation!r}"
                f", calls={self.calls}{state})")

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        if kind is None:
            self.close()
            return
        try:
            self.close()
        except PlimsollError:
            pass  # the error in flight matters more

    def _send(self, request: Dict[str, Any]) -> Result:
        return self._client._run_at(self._path + "/runs", request, self._chain)

    def run_cell(self, language: str, code: Data, *, timeout_ms: Optional[int] = None,
                 trace_id: Optional[str] = None, grant_profile: Optional[str] = None) -> Result:
        """Runs a cell in the session's kept interpreter of ``language``; ``grant_profile``
        names a profile whose ``allow_in_sessions`` is on (its grant serves this cell only)."""
        return self._send(_api.cell_request(language, code, timeout_ms, trace_id,
                                            grant_profile))

    def upload(self, files: Files) -> Result:
        """Writes ``files`` into the session's /work (a project payload whose one step is ``true``)."""
        return self.run_project(files, [["true"]])

    def download(self, paths: Sequence[str]) -> Tuple[Artifact, ...]:
        """Reads files from the session's /work (a project payload's artifacts)."""
        return self.run_project(steps=[["true"]], artifacts=list(paths)).artifacts

    def info(self) -> SessionState:
        """``GET /v1/sessions/{id}``: calls, busy, disk use, interpreters."""
        request_id, answer = self._client._exchange("GET", self._path, None,
                                                    self._client._settings.call_timeout,
                                                    "the daemon may have answered")
        return check_session_state_answer(request_id, answer, self._chain.floor)

    def close(self) -> SessionEnd:
        """Closes the session; the close must name the chain's last record and call count."""
        if self._end is not None:
            return self._end
        request_id, answer = self._client._exchange("DELETE", self._path, None,
                                                    self._client._run_budget({}),
                                                    "the session may have been closed")
        self._end = check_session_close_answer(request_id, answer, self._chain)
        return self._end


class _Daemon:
    __slots__ = ("client", "described", "expires")

    def __init__(self, client: Client) -> None:
        self.client = client
        self.described: Optional[Describe] = None
        self.expires = 0.0


class Pool(RunCalls):
    """Placement across daemons (SPEC §12): each call goes to the first daemon, in the order
    given, whose ``describe`` says it can take it; it moves on only on a retryable refusal."""

    def __init__(self, urls: Sequence[str], *, describe_ttl: float = 30.0,
                 **options: Any) -> None:
        if isinstance(urls, str):
            urls = [u for u in urls.split(",") if u]
        self._daemons = [_Daemon(Client(url, **options)) for url in urls]
        self._ttl = float(describe_ttl)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Pool({[d.client.url for d in self._daemons]!r})"

    def close(self) -> None:
        for daemon in self._daemons:
            daemon.client.close()

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.close()

    @property
    def clients(self) -> Tuple[Client, ...]:
        return tuple(d.client for d in self._daemons)

    def _describe(self, daemon: _Daemon) -> Describe:
        now = time.monotonic()
        with self._lock:
            if daemon.described is not None and now < daemon.expires:
                return daemon.described
        described = daemon.client.describe()
        with self._lock:
            daemon.described, daemon.expires = described, time.monotonic() + self._ttl
        return described

    def _forget(self, daemon: _Daemon) -> None:
        with self._lock:
            daemon.described = None

    def _place(self, request: Dict[str, Any], session: bool, call: Any) -> Any:
        skipped: List[Tuple[str, Reason, str]] = []
        last: Optional[PlimsollError] = None
        for daemon in self._daemons:
            try:
                described = self._describe(daemon)
            except PlimsollError as error:
                reason = error.not_dispatched if error.is_retryable else Reason.UNSUPPORTED
                assert reason is not None
                skipped.append((daemon.client.url, reason, f"describe failed: {error}"))
                continue
            why = _api.why_not(described, request, session)
            if why is not None:
                skipped.append((daemon.client.url, why[0], why[1]))
                continue
            try:
                return call(daemon.client)
            except PlimsollError as error:
                if not error.is_retryable:
                    raise
                self._forget(daemon)
                last = error
                assert error.not_dispatched is not None
                skipped.append((daemon.client.url, error.not_dispatched, str(error)))
        if last is not None:
            raise last
        raise _api.nobody_can(skipped)

    def _send(self, request: Dict[str, Any]) -> Result:
        result: Result = self._place(request, False,
                                     lambda c: c._run_at("/v1/runs", dict(request)))
        return result

    def open_session(self, *, minimum_isolation: Optional[str] = None,
                     environment: Optional[str] = None, owner: Optional[str] = None,
                     lifetime_ms: Optional[int] = None,
                     idle_timeout_ms: Optional[int] = None,
                     image: Optional[str] = None) -> Session:
        """Opens a session on the first daemon that can hold it; it stays there."""
        wanted: Dict[str, Any] = {"minimum_isolation": minimum_isolation,
                                  "environment": environment, "image": image}
        session: Session = self._place(wanted, True, lambda c: c.open_session(
            minimum_isolation=minimum_isolation, environment=environment, owner=owner,
            lifetime_ms=lifetime_ms, idle_timeout_ms=idle_timeout_ms, image=image))
        return session
