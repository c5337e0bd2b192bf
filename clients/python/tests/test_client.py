"""Client behaviour against the real embedded daemon, and the parts without I/O."""

from __future__ import annotations

import asyncio
from typing import Any, List, Tuple

import pytest

from plimsoll import (AsyncClient, Client, DataLossError, PlimsollError, Reason, RefusedError,
                      Result)
from plimsoll._http import BodyTooLarge, HttpError, ResponseParser

from conftest import need


def test_keep_alive_one_connection() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        for i in range(5):
            assert client.run_javascript(f"console.log({i})").stdout == f"{i}\n".encode()
        client.describe()
        assert client.connections_opened == 1


def test_reconnects_after_close_and_after_a_closing_answer() -> None:
    url = need("PLIMSOLL_TEST_EMBEDDED_URL")
    with Client(url) as client:
        client.run_javascript("1")
        client.close()
        client.run_javascript("1")
        assert client.connections_opened == 2
        # A hand-built request the daemon refuses (two payloads); the connection is reused or
        # replaced, and the next call works either way.
        with pytest.raises(RefusedError) as refused:
            client.run({"javascript": {"code": "1"}, "python": {"code": "1"}})
        assert refused.value.not_dispatched == Reason.REQUEST
        assert client.run_javascript("console.log(3)").stdout == b"3\n"


def test_result_fields_and_bytes() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        result = client.run_javascript(b"console.log('\\u00e9'); process_exit_is_not_here()")
        assert isinstance(result, Result)
        assert result.exit_code != 0 and result.ran is True  # a non-zero exit is a result
        assert result.stdout_text == "\u00e9\n"
        assert result.record.request_sha256 and result.kind == "javascript"
        assert not result.killed_for_memory


def test_async_keep_alive_and_session() -> None:
    async def go() -> Tuple[int, Any, List[Any]]:
        async with AsyncClient(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
            for _ in range(3):
                await client.run_javascript("1")
            async with client.session() as session:
                values = [(await session.run_cell("javascript", c)).value
                          for c in ("let y = 2", "y * 21")]
                state = await session.info()
            return client.connections_opened, state, values
    opened, state, values = asyncio.run(go())
    assert opened == 1 and state.calls == 2 and values == [None, b"42"]


def test_bad_urls_are_refused_request() -> None:
    for url in ("ftp://x", "http://user:pw@127.0.0.1:1", "http://127.0.0.1:99999", "unix:rel",
                "http://127.0.0.1/a?b", "http://[::1"):
        with pytest.raises(RefusedError) as refused:
            Client(url)
        assert refused.value.code == "invalid_argument"
        assert refused.value.not_dispatched == Reason.REQUEST
    with pytest.raises(RefusedError):
        Client("http://10.1.2.3:8470")  # cleartext to a non-loopback address
    Client("http://10.1.2.3:8470", allow_cleartext=True)
    Client("http://[::1]:8470")


def test_unreachable_is_capacity_nothing_sent() -> None:
    with Client(need("PLIMSOLL_TEST_UNREACHABLE_URL")) as client:
        with pytest.raises(RefusedError) as refused:
            client.run_javascript("1")
    assert refused.value.not_dispatched == Reason.CAPACITY
    assert refused.value.is_retryable and refused.value.ran is False


def test_errors_kinds() -> None:
    assert isinstance(PlimsollError("data_loss", "x"), DataLossError)
    refusal = PlimsollError("failed_precondition", "x", Reason.ISOLATION)
    assert isinstance(refusal, RefusedError) and refusal.is_retryable
    plain = PlimsollError("internal", "x")
    assert type(plain) is PlimsollError and plain.ran == "unknown" and not plain.is_retryable
    assert not PlimsollError("invalid_argument", "x", Reason.REQUEST).is_retryable


def test_parser_caps_and_chunked() -> None:
    parser = ResponseParser(10)
    with pytest.raises(BodyTooLarge):
        parser.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10737418240\r\n\r\n")
    parser = ResponseParser(10)
    with pytest.raises(BodyTooLarge):
        parser.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n")
    parser = ResponseParser(100)
    assert parser.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n")is False
    assert parser.feed(b"1;ext=1\r\nc\r\n0\r\nTrailer: x\r\n\r\n")
    assert parser.body == b"abc" and parser.keep_alive
    parser = ResponseParser(100)
    assert parser.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nokX")
    assert parser.body == b"ok" and parser.stray and not parser.keep_alive
    for bad in (b"HTTP/2 200 OK\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n",
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
                b"HTTP/1.1 200 OK\r\n folded\r\n\r\n"):
        with pytest.raises(HttpError):
            ResponseParser(100).feed(bad)
    parser = ResponseParser(100)
    parser.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab")
    with pytest.raises(HttpError):
        parser.feed_eof()
