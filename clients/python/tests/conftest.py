"""Shared test helpers: the harness environment (tests/clients/README.md).

What a test may skip: the linux provider when this host cannot run it (the harness names the
missing precondition in PLIMSOLL_TEST_LINUX_SKIP: not root, no guest image). Nothing else. A
variable the harness sets that is absent is a failure under run-tests (which exports
PLIMSOLL_CLIENT_REQUIRE_HARNESS=1) and a skip only when a developer runs pytest by hand. The
nolinux part of the CTest split does not run the tests marked `linux` at all (deselected, not
skipped): the linux part of the same run does.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple

import pytest

from plimsoll import Client
from plimsoll._core import Answer

# The request ID the fake daemons below answer with (a client checks it is echoed).
VECTOR_REQUEST_ID = "0123456789abcdef0123456789abcdef"


def env(name: str) -> str:
    return os.environ.get(name, "")


def under_harness() -> bool:
    return os.environ.get("PLIMSOLL_CLIENT_REQUIRE_HARNESS") == "1"


def need(name: str) -> str:
    """The variable's value; when it is absent, a failure under run-tests, else a skip."""
    value = os.environ.get(name, "")
    if not value:
        if under_harness():
            pytest.fail(f"{name} is not set (tests/clients/harness.py sets it)")
        pytest.skip(f"{name} is not set (run through tests/clients/harness.py)")
    return value


def linux_url() -> str:
    """The linux daemon's URL, or a skip naming what this host lacks to run one."""
    url = os.environ.get("PLIMSOLL_TEST_LINUX_URL", "")
    if url:
        return url
    host_reason = os.environ.get("PLIMSOLL_TEST_LINUX_SKIP", "")
    if host_reason:
        pytest.skip(host_reason)
    return need("PLIMSOLL_TEST_LINUX_URL")


def part() -> str:
    return os.environ.get("PLIMSOLL_TEST_PART", "all")


def embedded_url() -> Optional[str]:
    return os.environ.get("PLIMSOLL_TEST_EMBEDDED_URL") or None


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "linux: needs the linux daemon (run by the linux part)")


def pytest_collection_modifyitems(config: Any, items: List[Any]) -> None:
    if part() != "nolinux":
        return
    kept = [item for item in items if item.get_closest_marker("linux") is None]
    deselected = [item for item in items if item.get_closest_marker("linux") is not None]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Each skipped test as `skipped: <test>: <reason>` (the harness's convention)."""
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(
            report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        terminalreporter.write_line(f"skipped: {report.nodeid.split('::')[-1]}: {reason}")


def record_vectors() -> Dict[str, Any]:
    """testdata/records/vectors.json ($PLIMSOLL_TEST_VECTORS, else the repository's)."""
    path = os.environ.get("PLIMSOLL_TEST_VECTORS") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "testdata", "records", "vectors.json")
    if not os.path.exists(path):
        need("PLIMSOLL_TEST_VECTORS")
    with open(path, encoding="utf-8") as handle:
        document: Dict[str, Any] = json.load(handle)
    assert document["format"] == "plimsoll.record-vectors.v1"
    return document


def record_vector(name: str) -> Dict[str, Any]:
    """The shared vector `name`; a failure when the file has none of that name."""
    found = [v for v in record_vectors()["vectors"] if v["name"] == name]
    assert found, f"testdata/records/vectors.json has no vector {name!r}"
    vector: Dict[str, Any] = found[0]
    return vector



class VectorDaemon(Client):
    """A client whose every exchange is answered with `document` (a shared vector's result as the
    C++ side wrote it, or one changed by a test), so the client's checks run unchanged."""

    def __init__(self, document: Dict[str, Any]) -> None:
        super().__init__("http://127.0.0.1:9", token=None)
        self.document = document

    def _exchange(self, method: str, path: str, body: Optional[bytes], budget: float,
                  consequence: str) -> Tuple[str, Any]:
        return VECTOR_REQUEST_ID, Answer(200, [("plimsoll-request-id", VECTOR_REQUEST_ID)],
                                         json.dumps(self.document).encode())
