"""The broker summary's call trace rows (SPEC §8), without a daemon: the result digest's row 16
(docs/run-records.md §3.2) and the typed `Broker.routes` / `routes_dropped`.

A fake `_exchange` answers with a shared vector's result as the C++ side wrote it, or with that
result changed and signed again, so the client's checks run unchanged.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any, Dict, Optional, Tuple

import pytest

from plimsoll import Broker, BrokerRoute, DataLossError, Result
from plimsoll import records

from conftest import VectorDaemon, record_vector


ROW = {"method": "GET", "route": "/items/*", "status": 200, "allowed": True, "reason": "",
       "count": 12}
REFUSED = {"method": "OTHER", "route": "", "status": 0, "allowed": False,
           "reason": "not_allowed", "count": 1}


def _resigned(document: Dict[str, Any]) -> Dict[str, Any]:
    """The answer with its record's result digest (and so its record digest) made again."""
    out = copy.deepcopy(document)
    try:
        out["record"]["result_sha256"] = records.result_digest(out)
    except ValueError:
        out["record"]["result_sha256"] = "0" * 64
    record = {k: v for k, v in out["record"].items() if k != "record_sha256"}
    out["record"]["record_sha256"] = records.record_digest(record)
    return out


def _run(name: str, document: Optional[Dict[str, Any]] = None) -> Result:
    vector = record_vector(name)
    request = vector["request"]
    with VectorDaemon(vector["result"] if document is None else document) as client:
        return client.run_javascript(request["javascript"]["code"],
                                     minimum_isolation=request.get("minimum_isolation"),
                                     timeout_ms=request.get("timeout_ms"),
                                     grant_profile=request.get("grant_profile"))


def _broker(**change: Any) -> Dict[str, Any]:
    """The grant-advice-floats answer with its broker summary changed, signed again."""
    document = copy.deepcopy(record_vector("grant-advice-floats")["result"])
    for key, value in change.items():
        if value is None:
            document["broker"].pop(key, None)
        else:
            document["broker"][key] = value
    return _resigned(document)


# --- the digest (row 16) -----------------------------------------------------------------------


def test_absent_rows_and_count_are_empty_and_zero() -> None:
    base = {k: v for k, v in record_vector("grant-unused")["result"].items() if k != "record"}
    bare = dict(base, broker={"profile": "", "calls": 0, "denied": 0})
    assert records.result_digest(bare) == record_vector("grant-unused")["result_sha256"]
    defaults: Tuple[Dict[str, Any], ...] = ({"routes": None}, {"routes_dropped": None},
                                            {"routes": []}, {"routes_dropped": 0})
    for broker in defaults:
        assert records.result_digest(dict(bare, broker=dict(bare["broker"], **broker))) == \
            records.result_digest(bare)
    assert records.result_digest(dict(bare, broker=dict(bare["broker"], routes_dropped=1))) != \
        records.result_digest(bare)


def test_the_rows_follow_denied_in_the_documented_order() -> None:
    """The bytes hashed, built field by field from docs/run-records.md §3.2."""
    base = {k: v for k, v in record_vector("grant-unused")["result"].items() if k != "record"}
    e = records.Encoder(records.RESULT_DOMAIN)
    for name in ("provider", "isolation", "environment", "kind"):
        e.string(name, base[name])
    e.integer("exit_code", 0)
    e.boolean("timed_out", False)
    e.bytes_field("stdout", "")
    e.bytes_field("stderr", "")
    e.boolean("stdout_truncated", False)
    e.boolean("stderr_truncated", False)
    e.integer("duration_ms", base["duration_ms"])
    e.count("steps", 0)
    e.count("artifacts", 0)
    e.string("broker.profile", "inventory")
    e.integer("broker.calls", 13)
    e.integer("broker.denied", 1)
    e.count("broker.routes", 2)
    for row in (ROW, REFUSED):
        e.string("broker.route.method", row["method"])
        e.string("broker.route.route", row["route"])
        e.integer("broker.route.status", row["status"])
        e.boolean("broker.route.allowed", row["allowed"])
        e.string("broker.route.reason", row["reason"])
        e.integer("broker.route.count", row["count"])
    e.integer("broker.routes_dropped", 3)
    e.count("advice", 0)
    result = dict(base, broker={"profile": "inventory", "calls": 13, "denied": 1,
                                "routes": [ROW, REFUSED], "routes_dropped": 3})
    assert records.result_digest(result) == e.hexdigest()


@pytest.mark.parametrize("change", [
    {"routes": {"method": "GET"}},
    {"routes": ["GET"]},
    {"routes": [dict(ROW, method=None)]},
    {"routes": [dict(ROW, status="200")]},
    {"routes": [dict(ROW, allowed=1)]},
    {"routes": [dict(ROW, count=1.5)]},
    {"routes_dropped": "0"},
    {"routes_dropped": False},
], ids=lambda change: json.dumps(change)[:60])
def test_a_malformed_row_cannot_be_hashed(change: Dict[str, Any]) -> None:
    result = copy.deepcopy(record_vector("grant-unused")["result"])
    result["broker"].update(change)
    with pytest.raises(ValueError):
        records.result_digest(result)


# --- the typed result --------------------------------------------------------------------------


def test_the_shared_vectors_are_believed_and_typed() -> None:
    result = _run("grant-advice-floats")
    assert result.broker == Broker("crm-read", 12, 1, (
        BrokerRoute("GET", "/v1/items/*", 200, True, "", 10),
        BrokerRoute("GET", "/v1/items/*", 404, True, "", 1),
        BrokerRoute("OTHER", "", 0, False, "not_allowed", 1),
    ), 2)
    assert _run("grant-unused").broker == Broker("", 0, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.broker.routes[0].count = 0  # type: ignore[misc]


def test_absent_rows_and_count_read_as_empty_and_zero() -> None:
    broker = _run("grant-advice-floats", _broker(routes=None, routes_dropped=None)).broker
    assert broker == Broker("crm-read", 12, 1, (), 0)
    assert broker.routes == () and broker.routes_dropped == 0


def test_at_most_256_rows() -> None:
    rows = [dict(ROW, status=100 + i) for i in range(257)]
    broker = _run("grant-advice-floats", _broker(routes=rows[:256])).broker
    assert broker is not None and len(broker.routes) == 256
    with pytest.raises(DataLossError, match="more than 256"):
        _run("grant-advice-floats", _broker(routes=rows))


@pytest.mark.parametrize("change", [
    {"routes": {"method": "GET"}},
    {"routes": "GET /items/*"},
    {"routes": ["GET"]},
    *({"routes": [{k: v for k, v in ROW.items() if k != key}]} for key in ROW),
    {"routes": [dict(ROW, method=7)]},
    {"routes": [dict(ROW, route=None)]},
    {"routes": [dict(ROW, status="200")]},
    {"routes": [dict(ROW, status=200.0)]},
    {"routes": [dict(ROW, allowed="true")]},
    {"routes": [dict(ROW, allowed=1)]},
    {"routes": [dict(ROW, reason=False)]},
    {"routes": [dict(ROW, count=True)]},
    {"routes_dropped": "2"},
    {"routes_dropped": True},
    {"routes_dropped": 2.0},
], ids=lambda change: json.dumps(change)[:60])
def test_a_malformed_row_is_not_believed(change: Dict[str, Any]) -> None:
    with pytest.raises(DataLossError) as lost:
        _run("grant-advice-floats", _broker(**change))
    assert lost.value.ran == "unknown"  # the code may have run
    assert "broker" in str(lost.value)


@pytest.mark.parametrize("path,value", [
    (["routes", 0, "count"], 11),
    (["routes", 1, "status"], 200),
    (["routes", 2, "reason"], "bad_path"),
    (["routes", 2, "allowed"], True),
    (["routes", 0, "route"], "/v1/items"),
    (["routes_dropped"], 0),
], ids=lambda part: json.dumps(part))
def test_a_changed_row_fails_the_record_check(path: Any, value: Any) -> None:
    document = copy.deepcopy(record_vector("grant-advice-floats")["result"])
    node = document["broker"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(DataLossError, match="result_sha256"):
        _run("grant-advice-floats", document)
