"""The token never appears in repr()/str() of a client, its errors, or logging output."""

from __future__ import annotations

import asyncio
import logging
import os

import pytest

import plimsoll
from plimsoll import AsyncClient, Client, PlimsollError, Pool

TOKEN = "s3cr3t-T0KEN-" + "Q" * 40


def _everything(obj: object) -> str:
    return repr(obj) + str(obj) + repr(getattr(obj, "__dict__", "")) + repr(
        [getattr(obj, s, None) for s in getattr(type(obj), "__slots__", ())])


def test_token_not_in_repr_or_errors(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="plimsoll")
    url = os.environ.get("PLIMSOLL_TEST_UNREACHABLE_URL") or "http://127.0.0.1:9"
    client = Client(url, token=TOKEN)
    texts = [_everything(client), _everything(Pool([url], token=TOKEN))]
    texts.append(_everything(AsyncClient(url, token=TOKEN)))
    with pytest.raises(PlimsollError) as caught:
        client.run_javascript("1")
    texts += [repr(caught.value), str(caught.value), repr(caught.value.args)]
    embedded = os.environ.get("PLIMSOLL_TEST_EMBEDDED_URL")
    if embedded:
        with Client(embedded, token=TOKEN) as live:
            result = live.run_javascript("console.log(1)")  # --dev ignores the token
            texts += [repr(result), _everything(live)]
            with pytest.raises(PlimsollError) as refused:
                live.run_javascript("1", minimum_isolation="vm")
            texts += [repr(refused.value), str(refused.value)]
    texts.append(caplog.text)
    assert caplog.records, "debug logging produced nothing to check"
    for text in texts:
        assert TOKEN not in text


def test_token_from_environment_not_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLIMSOLL_TOKEN", TOKEN)
    client = Client("http://127.0.0.1:9")
    assert TOKEN not in _everything(client)
    assert TOKEN in client._headers.value  # it is used...
    assert TOKEN not in repr(client._headers)  # ...and never shown


def test_bad_token_refused_without_echoing_it() -> None:
    with pytest.raises(PlimsollError) as caught:
        Client("http://127.0.0.1:9", token="abc\r\nX-Injected: 1")
    assert caught.value.not_dispatched == plimsoll.Reason.REQUEST
    assert "Injected" not in str(caught.value)


def test_async_errors_do_not_carry_token() -> None:
    async def go() -> PlimsollError:
        async with AsyncClient("http://127.0.0.1:9", token=TOKEN) as client:
            try:
                await client.run_javascript("1")
            except PlimsollError as error:
                return error
        raise AssertionError("an unreachable daemon answered")
    error = asyncio.run(go())
    assert error.ran is False and TOKEN not in repr(error) + str(error)
