"""Rich outputs (SPEC §7), without a daemon: the result digest's rows 18 and 19
(docs/run-records.md §3.2) and the typed `Result.displays` / `displays_truncated`.

A fake `_exchange` stands in for the daemon (as in test_images.py): it signs each answer for the
request it was sent (request, result and record digests), so the client's checks run unchanged.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import dataclasses
import json
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from plimsoll import AsyncClient, Client, DataLossError, Display, Result
from plimsoll import records
from plimsoll._core import Answer

from conftest import VectorDaemon, record_vector

REQUEST_ID = "0123456789abcdef0123456789abcdef"
ENVIRONMENT = "sha256:" + "3" * 64
POLICY = "5" * 64

# The first bytes of a PNG: its signature and IHDR chunk (640 x 480), not valid UTF-8.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000280000001e00806000000")
PNG_B64 = base64.b64encode(PNG).decode("ascii")
FLIPPED = PNG[:-1] + bytes([PNG[-1] ^ 1])  # its last byte changed


def _base() -> Dict[str, Any]:
    """A python run's answer without its record."""
    return {"provider": "linux", "isolation": "container", "environment": ENVIRONMENT,
            "kind": "python", "exit_code": 0, "timed_out": False, "stdout": "", "stderr": "",
            "stdout_truncated": False, "stderr_truncated": False, "duration_ms": 12,
            "outcome": "completed"}


def _figure(**extra: Any) -> Dict[str, Any]:
    return dict({"mime": "image/png", "data": {"base64": PNG_B64}, "width": 640, "height": 480},
                **extra)


def _signed(request: Dict[str, Any], result: Dict[str, Any]) -> Dict[str, Any]:
    """The answer with a record binding it to the request (a dummy result digest when the
    result is too malformed to hash: the reader must refuse it before the digest check)."""
    try:
        result_sha256 = records.result_digest(result)
    except ValueError:
        result_sha256 = "0" * 64
    record: Dict[str, Any] = {
        "version": 1, "request_sha256": records.request_digest(request),
        "result_sha256": result_sha256, "provider": result["provider"],
        "isolation": result["isolation"], "environment": result["environment"],
        "policy": POLICY, "started_unix_ms": 1_700_000_000_000,
        "ended_unix_ms": 1_700_000_000_012}
    record["record_sha256"] = records.record_digest(record)
    return dict(result, record=record)


Tamper = Callable[[Dict[str, Any]], None]


def _answer_for(body: Optional[bytes], result: Dict[str, Any],
                tamper: Optional[Tamper]) -> Answer:
    assert body is not None
    document = _signed(json.loads(body), result)
    if tamper is not None:
        tamper(document)
    return Answer(200, [("plimsoll-request-id", REQUEST_ID)], json.dumps(document).encode())


class FakeDaemon(Client):
    """A Client whose daemon answers every run with `result`, signed for the request sent."""

    def __init__(self, result: Dict[str, Any], tamper: Optional[Tamper] = None) -> None:
        super().__init__("http://127.0.0.1:9", token=None)
        self.result = result
        self.tamper = tamper

    def _exchange(self, method: str, path: str, body: Optional[bytes], budget: float,
                  consequence: str) -> Tuple[str, Any]:
        return REQUEST_ID, _answer_for(body, self.result, self.tamper)


class FakeAsyncDaemon(AsyncClient):
    def __init__(self, result: Dict[str, Any]) -> None:
        super().__init__("http://127.0.0.1:9", token=None)
        self.result = result

    async def _exchange(self, method: str, path: str, body: Optional[bytes], budget: float,
                        consequence: str) -> Tuple[str, Answer]:
        return REQUEST_ID, _answer_for(body, self.result, None)


def _run(result: Dict[str, Any], tamper: Optional[Tamper] = None) -> Result:
    with FakeDaemon(result, tamper) as client:
        return client.run_python("import matplotlib")


# --- the digest (rows 18 and 19) ---------------------------------------------------------------


def test_absent_empty_and_false_add_nothing() -> None:
    plain = records.result_digest(_base())
    assert records.result_digest(dict(_base(), displays=[])) == plain
    assert records.result_digest(dict(_base(), displays=None)) == plain
    assert records.result_digest(dict(_base(), displays_truncated=False)) == plain
    assert records.result_digest(dict(_base(), displays_truncated=None)) == plain
    assert records.result_digest(dict(_base(), displays=[], displays_truncated=False)) == plain


def test_a_display_and_the_truncated_flag_change_the_digest() -> None:
    plain = records.result_digest(_base())
    one = records.result_digest(dict(_base(), displays=[_figure()]))
    truncated = records.result_digest(dict(_base(), displays_truncated=True))
    both = records.result_digest(dict(_base(), displays=[_figure()], displays_truncated=True))
    assert len({plain, one, truncated, both}) == 4
    two = records.result_digest(dict(_base(), displays=[_figure(), _figure()]))
    assert two not in (plain, one)
    for changed in (_figure(mime="image/svg+xml"), _figure(width=641), _figure(height=481),
                    _figure(data={"base64": base64.b64encode(PNG[:-1]).decode()}),
                    _figure(data="text")):
        assert records.result_digest(dict(_base(), displays=[changed])) != one, changed


def test_an_absent_size_is_hashed_as_zero() -> None:
    text = {"mime": "text/plain", "data": "   a\n0  1\n"}
    absent = records.result_digest(dict(_base(), displays=[text]))
    assert records.result_digest(dict(_base(), displays=[dict(text, width=0, height=0)])) == absent
    assert records.result_digest(dict(_base(), displays=[dict(text, width=None)])) == absent
    assert records.result_digest(dict(_base(), displays=[dict(text, width=1)])) != absent
    assert records.result_digest(dict(_base(), displays=[dict(text, height=1)])) != absent


def test_string_and_base64_data_are_the_same_bytes() -> None:
    html = {"mime": "text/html", "data": "<table></table>"}
    as_base64 = dict(html, data={"base64": base64.b64encode(b"<table></table>").decode()})
    assert records.result_digest(dict(_base(), displays=[html])) == records.result_digest(
        dict(_base(), displays=[as_base64]))


def test_the_rows_come_last_in_the_documented_order() -> None:
    """The bytes hashed, built field by field from docs/run-records.md §3.2."""
    e = records.Encoder(records.RESULT_DOMAIN)
    for name in ("provider", "isolation", "environment", "kind"):
        e.string(name, _base()[name])
    e.integer("exit_code", 0)
    e.boolean("timed_out", False)
    e.bytes_field("stdout", "")
    e.bytes_field("stderr", "")
    e.boolean("stdout_truncated", False)
    e.boolean("stderr_truncated", False)
    e.integer("duration_ms", 12)
    e.string("outcome", "completed")
    e.count("steps", 0)
    e.count("artifacts", 0)
    e.count("advice", 0)
    e.count("displays", 2)
    e.string("display.mime", "image/png")
    e.raw("display.data", PNG)
    e.integer("display.width", 640)
    e.integer("display.height", 480)
    e.string("display.mime", "text/plain")
    e.raw("display.data", b"x")
    e.integer("display.width", 0)
    e.integer("display.height", 0)
    e.boolean("displays_truncated", True)
    result = dict(_base(), displays=[_figure(), {"mime": "text/plain", "data": "x"}],
                  displays_truncated=True)
    assert records.result_digest(result) == e.hexdigest()


@pytest.mark.parametrize("change", [
    {"displays": {"mime": "image/png"}},
    {"displays": ["image/png"]},
    {"displays": [{"mime": 7, "data": ""}]},
    {"displays": [{"data": ""}]},
    {"displays": [{"mime": "image/png"}]},
    {"displays": [{"mime": "image/png", "data": {"base64": "not base64!"}}]},
    {"displays": [{"mime": "image/png", "data": {"base64": "aGk"}}]},
    {"displays": [{"mime": "image/png", "data": "", "width": "640"}]},
    {"displays": [{"mime": "image/png", "data": "", "height": 4.5}]},
    {"displays_truncated": "true"},
    {"displays_truncated": 1},
])
def test_a_malformed_display_cannot_be_hashed(change: Dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        records.result_digest(dict(_base(), **change))


def test_the_shared_vector_is_believed_and_typed() -> None:
    """The daemon's own answer (vector python-displays) passes every check and reads back."""
    vector = record_vector("python-displays")
    with VectorDaemon(vector["result"]) as client:
        result = client.run_python(vector["request"]["python"]["code"], image="data")
    assert result.record.result_sha256 == vector["result_sha256"]
    wire = vector["result"]["displays"]
    assert [d.mime for d in result.displays] == [d["mime"] for d in wire]
    assert result.displays_truncated is (vector["result"].get("displays_truncated") is True)
    for display, entry in zip(result.displays, wire):
        assert display.data == records.wire_bytes(entry["data"])
        assert (display.width, display.height) == (entry.get("width"), entry.get("height"))
    assert records.result_digest(vector["result"]) == vector["result_sha256"]
    plain = {k: v for k, v in vector["result"].items() if not k.startswith("displays")}
    assert records.result_digest(plain) != vector["result_sha256"]


# --- the typed result --------------------------------------------------------------------------


def test_a_result_without_displays_has_none() -> None:
    result = _run(_base())
    assert result.displays == () and result.displays_truncated is False


def test_displays_are_read_in_order() -> None:
    table = {"mime": "text/html", "data": "<table><tr><td>1</td></tr></table>"}
    result = _run(dict(_base(), displays=[_figure(), table, {"mime": "text/plain", "data": "1"}],
                       displays_truncated=True))
    assert result.displays == (
        Display("image/png", PNG, 640, 480),
        Display("text/html", b"<table><tr><td>1</td></tr></table>", None, None),
        Display("text/plain", b"1"),
    )
    figure = result.displays[0]
    assert figure.data.startswith(b"\x89PNG\r\n\x1a\n")
    assert result.displays[1].data_text.startswith("<table>")
    assert result.displays_truncated is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        figure.mime = "text/plain"  # type: ignore[misc]


def test_a_png_display_saves_as_a_file(tmp_path: Any) -> None:
    result = _run(dict(_base(), displays=[_figure()]))
    for d in result.displays:
        if d.mime == "image/png":
            with open(tmp_path / "fig.png", "wb") as handle:
                handle.write(d.data)
    assert (tmp_path / "fig.png").read_bytes() == PNG


def test_truncated_alone_and_explicit_false() -> None:
    assert _run(dict(_base(), displays_truncated=True)).displays_truncated is True
    assert _run(dict(_base(), displays_truncated=False)).displays_truncated is False
    assert _run(dict(_base(), displays=[])).displays == ()


def test_async_client_reads_displays() -> None:
    async def go() -> Result:
        async with FakeAsyncDaemon(dict(_base(), displays=[_figure()])) as client:
            return await client.run_python("import matplotlib")
    result = asyncio.run(go())
    assert result.displays == (Display("image/png", PNG, 640, 480),)


@pytest.mark.parametrize("change", [
    {"displays": {"mime": "image/png", "data": ""}},
    {"displays": "image/png"},
    {"displays": ["image/png"]},
    {"displays": [{"data": ""}]},
    {"displays": [{"mime": "", "data": ""}]},
    {"displays": [{"mime": 7, "data": ""}]},
    {"displays": [{"mime": "image/png"}]},
    {"displays": [{"mime": "image/png", "data": 7}]},
    {"displays": [{"mime": "image/png", "data": {"base64": "not base64!"}}]},
    {"displays": [{"mime": "image/png", "data": {"base64": "aGk"}}]},  # not canonical
    {"displays": [{"mime": "image/png", "data": {"base64": PNG_B64, "extra": 1}}]},
    {"displays": [_figure(width=0)]},
    {"displays": [_figure(width=-640)]},
    {"displays": [_figure(width="640")]},
    {"displays": [_figure(width=True)]},
    {"displays": [_figure(width=640.0)]},
    {"displays": [_figure(height=0)]},
    {"displays": [_figure(height=-1)]},
    {"displays": [_figure(height=4.5)]},
    {"displays_truncated": "true"},
    {"displays_truncated": 1},
    {"displays_truncated": []},
], ids=lambda change: json.dumps(change)[:60])
def test_a_malformed_display_is_not_believed(change: Dict[str, Any]) -> None:
    with pytest.raises(DataLossError) as lost:
        _run(dict(_base(), **change))
    assert lost.value.ran == "unknown"  # the code may have run
    assert "displays" in str(lost.value) or "base64" in str(lost.value)


def _set(path: List[Any], value: Any) -> Tamper:
    def tamper(document: Dict[str, Any]) -> None:
        node = document
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return tamper


@pytest.mark.parametrize("tamper", [
    _set(["displays", 0, "data"], {"base64": base64.b64encode(FLIPPED).decode()}),
    _set(["displays", 0, "mime"], "image/jpeg"),
    _set(["displays", 0, "width"], 641),
    lambda document: document["displays"].append({"mime": "text/plain", "data": "added"}),
    _set(["displays_truncated"], True),
    lambda document: document.pop("displays"),
], ids=["data", "mime", "width", "added", "truncated", "dropped"])
def test_a_changed_display_fails_the_record_check(tamper: Tamper) -> None:
    result = dict(_base(), displays=[_figure()])
    assert _run(copy.deepcopy(result)).displays  # believed as signed
    with pytest.raises(DataLossError, match="result_sha256"):
        _run(result, tamper)
