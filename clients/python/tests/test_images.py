"""Several images per daemon (SPEC §7), without a daemon: the `image` request field and session
option, describe's `images`, a session's image, and placement by image.

A fake `_exchange` stands in for the daemon: it keeps the request body sent and answers with a
prepared document, so the checks the client makes on a real answer run here unchanged.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List, Optional, Tuple

import pytest

from plimsoll import (AsyncClient, Client, DataLossError, Describe, Image, ImagePackage, Reason,
                      RefusedError, SessionInfo)
from plimsoll import _api
from plimsoll._core import Answer, check_describe_answer, encode_json
from plimsoll.records import POLICY_FIELDS

from conftest import record_vector

REQUEST_ID = "0123456789abcdef0123456789abcdef"
SESSION_ID = "fedcba9876543210fedcba9876543210"
ENVIRONMENT = "sha256:" + "3" * 64
DATA_ENVIRONMENT = "sha256:" + "d" * 64


def _answer(status: int, document: Dict[str, Any]) -> Answer:
    return Answer(status, [("plimsoll-request-id", REQUEST_ID)],
                  json.dumps(document).encode("utf-8"))


class FakeClient(Client):
    """A Client whose daemon is a list of prepared answers; it keeps what it sent."""

    def __init__(self, *answers: Answer) -> None:
        super().__init__("http://127.0.0.1:9", token=None)
        self.answers = list(answers)
        self.sent: List[Optional[Dict[str, Any]]] = []

    def _exchange(self, method: str, path: str, body: Optional[bytes], budget: float,
                  consequence: str) -> Tuple[str, Any]:
        self.sent.append(None if body is None else json.loads(body))
        return REQUEST_ID, self.answers.pop(0)


class FakeAsyncClient(AsyncClient):
    def __init__(self, *answers: Answer) -> None:
        super().__init__("http://127.0.0.1:9", token=None)
        self.answers = list(answers)
        self.sent: List[Optional[Dict[str, Any]]] = []

    async def _exchange(self, method: str, path: str, body: Optional[bytes], budget: float,
                        consequence: str) -> Tuple[str, Answer]:
        self.sent.append(None if body is None else json.loads(body))
        return REQUEST_ID, self.answers.pop(0)


def _limits() -> Dict[str, int]:
    return {name: 1000 + index for index, name in enumerate(POLICY_FIELDS)}


def _describe(images: Any = None) -> Dict[str, Any]:
    document: Dict[str, Any] = {
        "protocol": 1, "provider": "linux", "tier": "container", "claimed_tier": "container",
        "environment": ENVIRONMENT,
        "capabilities": {"payloads": ["javascript", "python", "project", "cell"],
                         "languages": ["javascript", "python"], "projects": True,
                         "sessions": True, "grants": False},
        "sessions": {"enabled": True}, "limits": _limits(), "details": [],
    }
    if images is not None:
        document["images"] = images
    return document


def _image(name: str, default: bool = False, environment: str = DATA_ENVIRONMENT,
           tier: str = "container") -> Dict[str, Any]:
    return {"name": name, "default": default, "environment": environment, "tier": tier,
            "confirmed": True, "languages": ["javascript", "python", "node"],
            "packages": [{"name": "python3-numpy", "version": "1:1.24.2-1", "source": "debian"},
                         {"name": "numpy", "version": "1.24.2", "source": "python"}]}


TWO_IMAGES = [_image("base", default=True, environment=ENVIRONMENT), _image("data")]


def _session(image: Optional[str], **extra: Any) -> Dict[str, Any]:
    document: Dict[str, Any] = {
        "session_id": SESSION_ID, "provider": "linux", "isolation": "container",
        "environment": ENVIRONMENT, "created_unix_ms": 1, "expires_unix_ms": 2,
        "idle_timeout_ms": 3, "limits": _limits(),
    }
    if image is not None:
        document["image"] = image
    document.update(extra)
    return document


# -- the request field ------------------------------------------------------------------------


def _sent_request(client: FakeClient) -> Dict[str, Any]:
    sent = client.sent[-1]
    assert sent is not None
    return sent


def _refusal() -> Answer:
    """A well-formed "nothing ran" answer (capacity), so the request is all a test looks at."""
    body = {"error": {"code": "resource_exhausted", "message": "Busy.",
                      "not_dispatched": "capacity", "request_id": REQUEST_ID}}
    return Answer(503, [("plimsoll-request-id", REQUEST_ID),
                        ("plimsoll-not-dispatched", "capacity")],
                  json.dumps(body).encode("utf-8"))


@pytest.mark.parametrize("image", [None, "", "data"])
@pytest.mark.parametrize("call", ["run_javascript", "run_python", "run_project"])
def test_image_is_sent_only_when_named(call: str, image: Optional[str]) -> None:
    client = FakeClient(_refusal())
    with pytest.raises(RefusedError):
        if call == "run_project":
            client.run_project({"a": "b"}, [["true"]], image=image)
        else:
            getattr(client, call)("1", image=image)
    request = _sent_request(client)
    if image:
        assert request["image"] == image
        assert b'"image":"data"' in encode_json(request)
    else:
        assert "image" not in request


def test_the_builders_place_image_like_environment() -> None:
    request = _api.code_request("python", "print(1)", "container", 5000, ENVIRONMENT, None,
                                None, "data")
    assert request == {"protocol": 1, "minimum_isolation": "container", "timeout_ms": 5000,
                       "environment": ENVIRONMENT, "image": "data",
                       "python": {"code": "print(1)"}}
    project = _api.project_request(None, [["true"]], None, None, None, None, None, None, "data")
    assert project["image"] == "data"
    assert "image" not in _api.project_request(None, None, None, None, None, None, None, None,
                                               "")
    cell = _api.cell_request("python", "1", None, None)
    assert "image" not in cell
    opened = _api.session_open_request(None, ENVIRONMENT, None, None, None, "data")
    assert opened == {"protocol": 1, "environment": ENVIRONMENT, "image": "data"}
    assert "image" not in _api.session_open_request(None, None, None, None, None, "")
    assert "image" not in _api.session_open_request(None, None, None, None, None, None)


def test_a_run_naming_an_image_is_checked_against_its_digest() -> None:
    """The client's recomputed request digest covers the name it sent: the vector's answer is
    believed for image "data" and refused for any other name (a proxy's rewrite)."""
    vector = record_vector("python-named-image")
    code = vector["request"]["python"]["code"]
    environment = vector["request"]["environment"]
    client = FakeClient(_answer(200, vector["result"]))
    result = client.run_python(code, environment=environment, image="data")
    assert _sent_request(client) == vector["request"]
    assert result.record.request_sha256 == vector["request_sha256"]
    assert result.stdout == b"3\n"
    for other in ("base", None):
        client = FakeClient(_answer(200, vector["result"]))
        with pytest.raises(DataLossError, match="request_sha256"):
            client.run_python(code, environment=environment, image=other)


def test_async_runs_send_image() -> None:
    vector = record_vector("python-named-image")

    async def go() -> Dict[str, Any]:
        client = FakeAsyncClient(_answer(200, vector["result"]))
        await client.run_python(vector["request"]["python"]["code"],
                                environment=vector["request"]["environment"], image="data")
        sent = client.sent[-1]
        assert sent is not None
        return sent
    assert asyncio.run(go()) == vector["request"]


# -- describe ---------------------------------------------------------------------------------


def test_describe_images_are_typed() -> None:
    described = check_describe_answer(REQUEST_ID, _answer(200, _describe(TWO_IMAGES)))
    assert isinstance(described, Describe)
    assert [image.name for image in described.images] == ["base", "data"]
    data = described.images[1]
    assert data == Image("data", False, DATA_ENVIRONMENT, "container", True,
                         ("javascript", "python", "node"),
                         (ImagePackage("python3-numpy", "1:1.24.2-1", "debian"),
                          ImagePackage("numpy", "1.24.2", "python")))
    assert described.images[0].default is True
    assert described.raw["images"] == TWO_IMAGES
    empty = dict(_image("bare"), languages=[], packages=[])
    described = check_describe_answer(REQUEST_ID, _answer(200, _describe([empty])))
    assert described.images[0].languages == () and described.images[0].packages == ()


def test_describe_without_images_has_none() -> None:
    assert check_describe_answer(REQUEST_ID, _answer(200, _describe())).images == ()
    document = _describe()
    document["images"] = None
    assert check_describe_answer(REQUEST_ID, _answer(200, document)).images == ()


@pytest.mark.parametrize("images", [
    "base",                                                   # not a list
    ["base"],                                                 # an entry not an object
    [dict(_image("data"), name=7)],
    [dict(_image("data"), default="yes")],
    [dict(_image("data"), tier="steel")],
    [dict(_image("data"), confirmed=None)],
    [dict(_image("data"), languages="python")],
    [dict(_image("data"), languages=["python", 3])],
    [dict(_image("data"), packages={"name": "numpy"})],
    [dict(_image("data"), packages=["numpy"])],
    [dict(_image("data"), packages=[{"name": "numpy", "version": "1", "source": "conda"}])],
    [dict(_image("data"), packages=[{"name": "numpy", "source": "python"}])],
    [{k: v for k, v in _image("data").items() if k != "environment"}],
], ids=lambda images: json.dumps(images)[:60])
def test_a_malformed_images_entry_is_not_believed(images: Any) -> None:
    with pytest.raises(DataLossError, match="cannot be read"):
        check_describe_answer(REQUEST_ID, _answer(200, _describe(images)))


# -- sessions ---------------------------------------------------------------------------------


def test_open_session_sends_image_and_reads_it_back() -> None:
    client = FakeClient(_answer(201, _session("data")))
    session = client.open_session(image="data", idle_timeout_ms=60_000)
    assert _sent_request(client) == {"protocol": 1, "image": "data", "idle_timeout_ms": 60_000}
    assert isinstance(session.opened, SessionInfo) and session.opened.image == "data"
    client = FakeClient(_answer(201, _session(None)))
    assert client.open_session().opened.image == ""
    assert "image" not in _sent_request(client)
    client = FakeClient(_answer(201, _session("base")))
    assert client.open_session(image="").opened.image == "base"  # the default, by its name
    assert "image" not in _sent_request(client)


def test_a_session_on_another_image_is_not_believed() -> None:
    for answered in ("base", None):
        client = FakeClient(_answer(201, _session(answered)))
        with pytest.raises(DataLossError, match="image"):
            client.open_session(image="data")
    client = FakeClient(_answer(201, dict(_session(None), image=["data"])))
    with pytest.raises(DataLossError, match="cannot be read"):
        client.open_session()


def test_session_state_carries_image() -> None:
    state = _session("data", calls=0, busy=False, queued=False, last_used_unix_ms=1,
                     disk_used_bytes=0, disk_bytes=10, interpreters=[], last_record_sha256="")
    no_image = {k: v for k, v in state.items() if k != "image"}
    client = FakeClient(_answer(201, _session("data")), _answer(200, state),
                        _answer(200, no_image))
    session = client.open_session(image="data")
    assert session.info().image == "data"
    assert session.info().image == ""


def test_async_open_session_sends_image() -> None:
    async def go() -> Tuple[Optional[Dict[str, Any]], str]:
        client = FakeAsyncClient(_answer(201, _session("data")))
        session = await client.open_session(image="data")
        return client.sent[-1], session.opened.image
    sent, image = asyncio.run(go())
    assert sent == {"protocol": 1, "image": "data"} and image == "data"


# -- placement --------------------------------------------------------------------------------


def _described(images: Any) -> Describe:
    return check_describe_answer(REQUEST_ID, _answer(200, _describe(images)))


def test_placement_reads_the_named_images_tier_and_identity() -> None:
    daemon = _described([_image("base", default=True, environment=ENVIRONMENT),
                         _image("data", tier="kernel")])
    python: Dict[str, Any] = {"python": {"code": "1"}}
    assert _api.why_not(daemon, dict(python, image="data")) is None
    assert _api.why_not(daemon, dict(python, image="data", minimum_isolation="kernel")) is None
    assert _api.why_not(daemon, dict(python, minimum_isolation="kernel")) is not None
    assert _api.why_not(daemon, dict(python, image="data", environment=DATA_ENVIRONMENT)) is None
    why = _api.why_not(daemon, dict(python, image="data", environment=ENVIRONMENT))
    assert why is not None and why[0] == Reason.ENVIRONMENT
    why = _api.why_not(daemon, dict(python, image="gpu"))
    assert why is not None and why[0] == Reason.UNSUPPORTED and "gpu" in why[1]
    assert _api.why_not(daemon, dict(python, image="")) is None
    # A daemon that lists no images cannot be known to serve the one named.
    why = _api.why_not(_described(None), dict(python, image="data"))
    assert why is not None and why[0] == Reason.UNSUPPORTED
    # Sessions place the same way.
    assert _api.why_not(daemon, {"image": "data"}, session=True) is None
    why = _api.why_not(daemon, {"image": "gpu"}, session=True)
    assert why is not None and why[0] == Reason.UNSUPPORTED

