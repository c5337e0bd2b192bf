"""The asyncio client: :class:`AsyncClient`, :class:`AsyncSession` and :class:`AsyncPool`.

The same checks as the sync client (they share every sans-IO part), on asyncio transports.
"""

from __future__ import annotations

import asyncio
import time
from types import TracebackType
from typing import (Any, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple,
                    Type, TypeVar, Union)

from . import _api
from ._calls import AsyncRunCalls
from ._core import (Answer, Base, ChainState, Data, Files, check_describe_answer,
                    check_run_answer, check_session_close_answer, check_session_open_answer,
                    check_session_state_answer, encode_json)
from ._transport import AsyncConnection
from .errors import PlimsollError, Reason
from .results import Artifact, Describe, Result, SessionEnd, SessionInfo, SessionState

__all__ = ["AsyncClient", "AsyncSession", "AsyncPool"]

_RAN = "the code may have run"
T = TypeVar("T")


class AsyncClient(Base, AsyncRunCalls):
    """The asyncio twin of :class:`plimsoll.Client`; one call at a time per client."""

    def __init__(self, url: str, *, token: Optional[str] = None, allow_cleartext: bool = False,
                 ca_file: Optional[str] = None, max_response_bytes: int = 32 * 1024 * 1024,
                 connect_timeout: float = 10.0, call_timeout: float = 30.0,
                 run_timeout_margin: float = 30.0,
                 owner_key: Union[bytes, str, None] = None) -> None:
        super().__init__(url, token=token, allow_cleartext=allow_cleartext, ca_file=ca_file,
                         max_response_bytes=max_response_bytes, connect_timeout=connect_timeout,
                         call_timeout=call_timeout, run_timeout_margin=run_timeout_margin,
                         owner_key=owner_key)
        self._connection = AsyncConnection(self._settings)
        self._lock: Optional[asyncio.Lock] = None

    async def close(self) -> None:
        self._connection.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, kind: Optional[Type[BaseException]],
                        value: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None:
        await self.close()

    @property
    def connections_opened(self) -> int:
        return self._connection.connections_opened

    async def _exchange(self, method: str, path: str, body: Optional[bytes], budget: float,
                        consequence: str) -> Tuple[str, Answer]:
        request_id, data = self._encode(method, path, body)
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            answer = await self._connection.exchange(request_id, data, budget, consequence)
        return request_id, answer

    async def _run_at(self, path: str, request: Dict[str, Any],
                      chain: Optional[ChainState] = None) -> Result:
        body = encode_json(request)
        request_id, answer = await self._exchange("POST", path, body, self._run_budget(request),
                                                  _RAN)
        return check_run_answer(request, request_id, answer, chain)

    async def _send(self, request: Dict[str, Any]) -> Result:
        return await self._run_at("/v1/runs", request)

    async def describe(self) -> Describe:
        request_id, answer = await self._exchange("GET", "/v1/describe", None,
                                                  self._settings.call_timeout,
                                                  "the daemon may have answered")
        return check_describe_answer(request_id, answer)

    async def open_session(self, *, minimum_isolation: Optional[str] = None,
                           environment: Optional[str] = None, owner: Optional[str] = None,
                           lifetime_ms: Optional[int] = None,
                           idle_timeout_ms: Optional[int] = None,
                           image: Optional[str] = None) -> "AsyncSession":
        """Opens a session; use it as ``async with await client.open_session() as s``, or
        ``async with client.session() as s``."""
        request = _api.session_open_request(minimum_isolation, environment,
                                            self._owner_hmac(owner), lifetime_ms,
                                            idle_timeout_ms, image)
        request_id, answer = await self._exchange("POST", "/v1/sessions", encode_json(request),
                                                  self._settings.call_timeout,
                                                  "the session may have been opened")
        return AsyncSession(self, check_session_open_answer(request, request_id, answer),
                            floor=request.get("minimum_isolation"))

    def session(self, **options: Any) -> "_Opening":
        """``async with client.session(...) as s``: opens on entry, closes on exit."""
        return _Opening(lambda: self.open_session(**options))


class _Opening:
    def __init__(self, opener: Callable[[], Awaitable["AsyncSession"]]) -> None:
        self._opener = opener
        self._session: Optional[AsyncSession] = None

    async def __aenter__(self) -> "AsyncSession":
        self._session = await self._opener()
        return self._session

    async def __aexit__(self, kind: Optional[Type[BaseException]],
                        value: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None:
        if self._session is not None:
            await self._session.__aexit__(kind, value, traceback)


class AsyncSession(AsyncRunCalls):
    """The asyncio twin of :class:`plimsoll.Session`."""

    def __init__(self, client: AsyncClient, opened: SessionInfo, *,
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
        return self._chain.last_sequence

    def __repr__(self) -> str:
        state = f", ended={self._end.ended!r}" if self._end else ""
        return (f"AsyncSession(provider={self.opened.provider!r}, "
                f"isolation={self.opened.isolation!r}, calls={self.calls}{state})")

    async def __aenter__(self) -> "AsyncSession":
        return self

    async def __aexit__(self, kind: Optional[Type[BaseException]],
                        value: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None:
        if kind is None:
            await self.close()
            return
        try:
            await self.close()
        except PlimsollError:
            pass

    async def _send(self, request: Dict[str, Any]) -> Result:
        return await self._client._run_at(self._path + "/runs", request, self._chain)

    async def run_cell(self, language: str, code: Data, *, timeout_ms: Optional[int] = None,
                       trace_id: Optional[str] = None,
                       grant_profile: Optional[str] = None) -> Result:
        return await self._send(_api.cell_request(language, code, timeout_ms, trace_id,
                                                  grant_profile))

    async def upload(self, files: Files) -> Result:
        return await self.run_project(files, [["true"]])

    async def download(self, paths: Sequence[str]) -> Tuple[Artifact, ...]:
        return (await self.run_project(steps=[["true"]], artifacts=list(paths))).artifacts

    async def info(self) -> SessionState:
        request_id, answer = await self._client._exchange(
            "GET", self._path, None, self._client._settings.call_timeout,
            "the daemon may have answered")
        return check_session_state_answer(request_id, answer, self._chain.floor)

    async def close(self) -> SessionEnd:
        if self._end is not None:
            return self._end
        request_id, answer = await self._client._exchange(
            "DELETE", self._path, None, self._client._run_budget({}),
            "the session may have been closed")
        self._end = check_session_close_answer(request_id, answer, self._chain)
        return self._end


class _AsyncDaemon:
    __slots__ = ("client", "described", "expires")

    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self.described: Optional[Describe] = None
        self.expires = 0.0


class AsyncPool(AsyncRunCalls):
    """The asyncio twin of :class:`plimsoll.Pool`."""

    def __init__(self, urls: Sequence[str], *, describe_ttl: float = 30.0,
                 **options: Any) -> None:
        if isinstance(urls, str):
            urls = [u for u in urls.split(",") if u]
        self._daemons = [_AsyncDaemon(AsyncClient(url, **options)) for url in urls]
        self._ttl = float(describe_ttl)

    def __repr__(self) -> str:
        return f"AsyncPool({[d.client.url for d in self._daemons]!r})"

    async def close(self) -> None:
        for daemon in self._daemons:
            await daemon.client.close()

    async def __aenter__(self) -> "AsyncPool":
        return self

    async def __aexit__(self, kind: Optional[Type[BaseException]],
                        value: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None:
        await self.close()

    @property
    def clients(self) -> Tuple[AsyncClient, ...]:
        return tuple(d.client for d in self._daemons)

    async def _describe(self, daemon: _AsyncDaemon) -> Describe:
        if daemon.described is not None and time.monotonic() < daemon.expires:
            return daemon.described
        described = await daemon.client.describe()
        daemon.described, daemon.expires = described, time.monotonic() + self._ttl
        return described

    async def _place(self, request: Dict[str, Any], session: bool,
                     call: Callable[[AsyncClient], Awaitable[T]]) -> T:
        skipped: List[Tuple[str, Reason, str]] = []
        last: Optional[PlimsollError] = None
        for daemon in self._daemons:
            try:
                described = await self._describe(daemon)
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
                return await call(daemon.client)
            except PlimsollError as error:
                if not error.is_retryable:
                    raise
                daemon.described = None
                last = error
                assert error.not_dispatched is not None
                skipped.append((daemon.client.url, error.not_dispatched, str(error)))
        if last is not None:
            raise last
        raise _api.nobody_can(skipped)

    async def _send(self, request: Dict[str, Any]) -> Result:
        return await self._place(request, False, lambda c: c._run_at("/v1/runs", dict(request)))

    async def open_session(self, *, minimum_isolation: Optional[str] = None,
                           environment: Optional[str] = None, owner: Optional[str] = None,
                           lifetime_ms: Optional[int] = None,
                           idle_timeout_ms: Optional[int] = None,
                           image: Optional[str] = None) -> AsyncSession:
        wanted: Dict[str, Any] = {"minimum_isolation": minimum_isolation,
                                  "environment": environment, "image": image}
        return await self._place(wanted, True, lambda c: c.open_session(
            minimum_isolation=minimum_isolation, environment=environment, owner=owner,
            lifetime_ms=lifetime_ms, idle_timeout_ms=idle_timeout_ms, image=image))
