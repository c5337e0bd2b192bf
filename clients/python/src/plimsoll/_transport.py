"""Connections for the sync and async clients, both driving the same HTTP/1.1 parser."""

from __future__ import annotations

import asyncio
import logging
import select
import socket
import ssl
import time
from typing import Any, List, Optional, Tuple

from ._core import Answer, DaemonUrl, Settings, cleartext_refused, is_loopback
from ._http import BodyTooLarge, HttpError, ResponseParser
from .errors import PlimsollError, Reason

logger = logging.getLogger("plimsoll")


def _ms(seconds: float) -> str:
    return f"{int(seconds * 1000)} ms"


def not_connected(url: DaemonUrl, why: str) -> PlimsollError:
    return PlimsollError("failed_precondition",
                         f"Cannot reach the daemon at {url}: {why}. Nothing was sent.",
                         Reason.CAPACITY)


def connect_timed_out(url: DaemonUrl, bound: float) -> PlimsollError:
    return PlimsollError("deadline_exceeded",
                         f"Cannot reach the daemon at {url} within {_ms(bound)}. Nothing was "
                         "sent.", Reason.CAPACITY)


def answer_lost(url: DaemonUrl, what: str, consequence: str, request_id: str) -> PlimsollError:
    return PlimsollError("data_loss", f"The answer from {url} was lost: {what}; {consequence}.",
                         None, request_id)


def no_answer_in_time(url: DaemonUrl, budget: float, consequence: str,
                      request_id: str) -> PlimsollError:
    return PlimsollError("deadline_exceeded", f"No complete answer from {url} within "
                         f"{_ms(budget)}; {consequence}.", None, request_id)


def read_failure(url: DaemonUrl, error: HttpError, settings: Settings, consequence: str,
                 request_id: str, write_error: Optional[BaseException]) -> PlimsollError:
    if isinstance(error, BodyTooLarge):
        return answer_lost(url, f"its body is larger than the client's limit of "
                           f"{settings.max_response_bytes} bytes (max_response_bytes) and was "
                           "not read", consequence, request_id)
    if write_error is not None:
        return answer_lost(url, f"the connection failed while sending the request "
                           f"({write_error})", consequence, request_id)
    return answer_lost(url, str(error), consequence, request_id)


def resolve(url: DaemonUrl, settings: Settings) -> List[Tuple[Any, ...]]:
    """getaddrinfo, then the cleartext rule on every address (before connecting)."""
    try:
        infos = socket.getaddrinfo(url.host, url.port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise not_connected(url, f"cannot resolve {url.host}: {error}") from None
    if url.transport == "http" and not settings.allow_cleartext:
        for info in infos:
            address = str(info[4][0])
            if not is_loopback(address):
                raise cleartext_refused(url, address)
    return infos


def _tls_failure(error: BaseException) -> str:
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"the TLS certificate is not trusted ({error.verify_message})"
    return f"the TLS handshake failed ({error})"


class SyncConnection:
    """One kept connection, used by one call at a time."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.sock: Optional[socket.socket] = None
        self.connections_opened = 0

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None

    def _usable(self, sock: socket.socket) -> bool:
        """Nothing to read on an idle kept connection: the daemon has not closed it."""
        try:
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return False
        if not readable:
            return True
        if isinstance(sock, ssl.SSLSocket):
            # TLS 1.3 session tickets arrive after the handshake: readable, yet no data.
            sock.setblocking(False)
            try:
                return not sock.recv(1) and False
            except ssl.SSLWantReadError:
                return True
            except OSError:
                return False
            finally:
                sock.setblocking(True)
        return False

    def _connect(self, deadline: float) -> socket.socket:
        url, settings = self.settings.url, self.settings
        bound = min(settings.connect_timeout, max(deadline - time.monotonic(), 0.0))
        connect_deadline = time.monotonic() + bound
        if url.transport == "unix":
            unix_sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                unix_sock.settimeout(bound)
                unix_sock.connect(url.socket_path)
            except socket.timeout:
                unix_sock.close()
                raise connect_timed_out(url, bound) from None
            except OSError as error:
                unix_sock.close()
                raise not_connected(url, error.strerror or str(error)) from None
            return unix_sock
        infos = resolve(url, settings)
        last: Optional[BaseException] = None
        sock: Optional[socket.socket] = None
        for family, kind, proto, _, address in infos:
            remaining = connect_deadline - time.monotonic()
            if remaining <= 0:
                raise connect_timed_out(url, bound)
            candidate = socket.socket(family, kind, proto)
            try:
                candidate.settimeout(remaining)
                candidate.connect(address)
            except socket.timeout:
                candidate.close()
                raise connect_timed_out(url, bound) from None
            except OSError as error:
                candidate.close()
                last = error
                continue
            sock = candidate
            break
        if sock is None:
            why = (last.strerror or str(last)) if isinstance(last, OSError) else "no address"
            raise not_connected(url, why)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if url.transport == "https":
            assert settings.ssl_context is not None
            try:
                sock.settimeout(max(connect_deadline - time.monotonic(), 0.001))
                sock = settings.ssl_context.wrap_socket(sock, server_hostname=url.host)
            except socket.timeout:
                sock.close()
                raise connect_timed_out(url, bound) from None
            except (ssl.SSLError, OSError) as error:
                sock.close()
                raise not_connected(url, _tls_failure(error)) from None
        return sock

    def exchange(self, request_id: str, data: bytes, budget: float,
                 consequence: str) -> Answer:
        settings, url = self.settings, self.settings.url
        started = time.monotonic()
        deadline = started + budget
        sock = self.sock
        if sock is not None and not self._usable(sock):
            self.close()
            sock = None
        if sock is None:
            sock = self._connect(deadline)
            self.sock = sock
            self.connections_opened += 1
        # From here on the request may have left: nothing is marked.
        write_error: Optional[BaseException] = None
        try:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            sock.sendall(data)
        except socket.timeout:
            self.close()
            raise PlimsollError("deadline_exceeded", f"Sending the request to {url} did not "
                                f"finish within {_ms(budget)}; {consequence}.", None,
                                request_id) from None
        except OSError as error:
            write_error = error  # the daemon may still have answered: read either way
        parser = ResponseParser(settings.max_response_bytes)
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise socket.timeout
                sock.settimeout(remaining)
                chunk = sock.recv(262144)
                if not chunk:
                    parser.feed_eof()
                    break
                if parser.feed(chunk):
                    break
        except socket.timeout:
            self.close()
            raise no_answer_in_time(url, budget, consequence, request_id) from None
        except HttpError as error:
            self.close()
            raise read_failure(url, error, settings, consequence, request_id,
                               write_error) from None
        except OSError as error:
            self.close()
            what = (f"the connection failed while sending the request ({write_error})"
                    if write_error else f"the connection failed before a complete answer "
                    f"({error})")
            raise answer_lost(url, what, consequence, request_id) from None
        if write_error is not None or not parser.keep_alive:
            self.close()
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("plimsoll: %s answered %d (request %s) in %.2f ms", url, parser.status,
                         request_id, (time.monotonic() - started) * 1000)
        return Answer(parser.status, parser.headers, parser.body)


class _Protocol(asyncio.Protocol):
    """Feeds received bytes straight into the parser of the call in flight."""

    def __init__(self) -> None:
        self.transport: Optional[asyncio.Transport] = None
        self.parser: Optional[ResponseParser] = None
        self.waiter: Optional[asyncio.Future[None]] = None
        self.closed = False
        self.stray = False
        self.failure: Optional[BaseException] = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def _finish(self, error: Optional[BaseException] = None) -> None:
        waiter = self.waiter
        if error is not None and self.failure is None:
            self.failure = error
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def data_received(self, data: bytes) -> None:
        parser = self.parser
        if parser is None:
            self.stray = True
            return
        try:
            if parser.feed(data):
                self._finish()
        except HttpError as error:
            self._finish(error)
            if self.transport is not None:
                self.transport.abort()

    def eof_received(self) -> bool:
        self.closed = True
        parser = self.parser
        if parser is not None and not parser.done:
            try:
                parser.feed_eof()
                self._finish()
            except HttpError as error:
                self._finish(error)
        return False

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.closed = True
        parser = self.parser
        if parser is not None and not parser.done:
            if exc is not None:
                self._finish(exc)
            else:
                try:
                    parser.feed_eof()
                    self._finish()
                except HttpError as error:
                    self._finish(error)


class AsyncConnection:
    """The asyncio twin of SyncConnection."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.protocol: Optional[_Protocol] = None
        self.connections_opened = 0

    def close(self) -> None:
        if self.protocol is not None and self.protocol.transport is not None:
            self.protocol.transport.abort()
        self.protocol = None

    async def _connect(self, deadline: float) -> _Protocol:
        url, settings = self.settings.url, self.settings
        loop = asyncio.get_running_loop()
        bound = min(settings.connect_timeout, max(deadline - time.monotonic(), 0.0))
        try:
            if url.transport == "unix":
                _, protocol = await asyncio.wait_for(
                    loop.create_unix_connection(_Protocol, url.socket_path), bound)
            else:
                infos = resolve(url, settings)
                host = str(infos[0][4][0])
                kwargs: dict[str, Any] = {}
                if url.transport == "https":
                    kwargs = {"ssl": settings.ssl_context, "server_hostname": url.host,
                              "ssl_handshake_timeout": max(bound, 0.001)}
                _, protocol = await asyncio.wait_for(
                    loop.create_connection(_Protocol, host, url.port, **kwargs), bound)
        except asyncio.TimeoutError:
            raise connect_timed_out(url, bound) from None
        except ssl.SSLError as error:
            raise not_connected(url, _tls_failure(error)) from None
        except OSError as error:
            raise not_connected(url, error.strerror or str(error)) from None
        assert isinstance(protocol, _Protocol)
        if protocol.transport is not None and url.transport != "unix":
            raw = protocol.transport.get_extra_info("socket")
            if raw is not None:
                try:
                    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                except OSError:
                    pass
        return protocol

    async def exchange(self, request_id: str, data: bytes, budget: float,
                       consequence: str) -> Answer:
        settings, url = self.settings, self.settings.url
        started = time.monotonic()
        deadline = started + budget
        protocol = self.protocol
        if protocol is not None and (protocol.closed or protocol.stray or protocol.transport is None
                                     or protocol.transport.is_closing()):
            self.close()
            protocol = None
        if protocol is None:
            protocol = await self._connect(deadline)
            self.protocol = protocol
            self.connections_opened += 1
        assert protocol.transport is not None
        loop = asyncio.get_running_loop()
        parser = ResponseParser(settings.max_response_bytes)
        protocol.parser = parser
        protocol.failure = None
        waiter: asyncio.Future[None] = loop.create_future()
        protocol.waiter = waiter
        write_error: Optional[BaseException] = None
        try:
            protocol.transport.write(data)
        except (OSError, RuntimeError) as error:
            write_error = error
        try:
            try:
                await asyncio.wait_for(waiter, max(deadline - time.monotonic(), 0.0))
            except asyncio.TimeoutError:
                self.close()
                raise no_answer_in_time(url, budget, consequence, request_id) from None
            except asyncio.CancelledError:
                self.close()
                raise
            failure = protocol.failure
            if failure is not None:
                self.close()
                if isinstance(failure, HttpError):
                    raise read_failure(url, failure, settings, consequence, request_id,
                                       write_error)
                raise answer_lost(url, f"the connection failed before a complete answer "
                                  f"({failure})", consequence, request_id)
        finally:
            protocol.parser = None
            protocol.waiter = None
        if parser.stray or write_error is not None or not parser.keep_alive:
            self.close()
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("plimsoll: %s answered %d (request %s) in %.2f ms", url, parser.status,
                         request_id, (time.monotonic() - started) * 1000)
        return Answer(parser.status, parser.headers, parser.body)
