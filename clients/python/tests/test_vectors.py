"""Every digest of testdata/records/vectors.json, recomputed by plimsoll.records."""

from __future__ import annotations

import copy
import json
import os
from typing import Any, Dict, List

import pytest

from plimsoll import records

from conftest import record_vectors


VECTORS = record_vectors()
BY_NAME = {v["name"]: v for v in VECTORS["vectors"]}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_vector(name: str) -> None:
    vector = BY_NAME[name]
    checked = 0
    if "request" in vector:
        assert records.request_digest(vector["request"]) == vector["request_sha256"]
        checked += 1
    if "result" in vector:
        result = vector["result"]
        answer = {k: v for k, v in result.items() if k != "record"}
        assert records.result_digest(answer) == vector["result_sha256"]
        assert records.result_digest(result) == vector["result_sha256"]  # record is not input
        assert records.record_digest(result["record"]) == vector["record_sha256"]
        assert result["record"]["record_sha256"] == vector["record_sha256"]
        assert result["record"]["result_sha256"] == vector["result_sha256"]
        if "request" in vector:
            assert result["record"]["request_sha256"] == vector["request_sha256"]
        checked += 1
    if "limits" in vector:
        assert records.policy_digest(vector["limits"]) == vector["policy_sha256"]
        checked += 1
    if "session_id" in vector:
        assert records.session_digest(vector["session_id"]) == vector["session_sha256"]
        checked += 1
    if "encoding" in vector:
        digest, encoded = records.encoding_digest(vector["encoding"]["domain"],
                                                  vector["encoding"]["fields"])
        assert encoded.hex() == vector["encoding_hex"]
        assert digest == vector["encoding_sha256"]
        checked += 1
    assert checked, f"vector {name} has nothing this test knows how to check"


@pytest.mark.parametrize("chain", VECTORS["chains"], ids=lambda c: c["name"])
def test_chain(chain: Dict[str, Any]) -> None:
    session = records.session_digest(chain["session_id"])
    previous = ""
    for sequence, name in enumerate(chain["vectors"], start=1):
        record = BY_NAME[name]["result"]["record"]
        assert record["session"] == session
        assert record["sequence"] == sequence
        assert record["previous_sha256"] == previous
        assert records.record_digest(record) == record["record_sha256"]
        previous = record["record_sha256"]
    assert len(chain["vectors"]) >= 2


def _leaves(node: Any, path: List[Any]) -> List[List[Any]]:
    if isinstance(node, dict):
        out: List[List[Any]] = []
        for key, value in node.items():
            out += _leaves(value, path + [key])
        return out
    if isinstance(node, list):
        out = []
        for index, value in enumerate(node):
            out += _leaves(value, path + [index])
        return out
    return [path]


def _mutated(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 1.0
    if isinstance(value, str):
        if value in ("NaN", "Infinity", "-Infinity"):
            return "Infinity" if value != "Infinity" else "NaN"
        return value + "x" if value else "x"
    raise AssertionError(f"unexpected leaf {value!r}")


def test_every_result_leaf_is_covered() -> None:
    """Changing any known result field changes the result digest (base64 stays valid)."""
    changed = 0
    for vector in VECTORS["vectors"]:
        if "result" not in vector:
            continue
        answer = {k: v for k, v in vector["result"].items() if k != "record"}
        for path in _leaves(answer, []):
            if path[-1] == "base64":
                continue
            altered = copy.deepcopy(answer)
            node = altered
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = _mutated(node[path[-1]])
            if path[-1] in ("added_latency_ms",) and isinstance(node[path[-1]], float) \
                    and node[path[-1]] != node[path[-1]]:
                continue
            assert records.result_digest(altered) != vector["result_sha256"], (vector["name"],
                                                                                path)
            changed += 1
    assert changed > 100


def test_unknown_answer_fields_are_ignored() -> None:
    vector = BY_NAME["project-full"]
    answer = copy.deepcopy(vector["result"])
    answer["a_newer_field"] = {"anything": [1, 2]}
    answer["steps"][0]["new_step_field"] = True
    answer["record"]["new_record_field"] = "x"
    assert records.result_digest(answer) == vector["result_sha256"]
    assert records.record_digest(answer["record"]) == vector["record_sha256"]


def test_not_covered_request_fields() -> None:
    vector = BY_NAME["javascript-spec-example"]
    request = dict(vector["request"])
    request["trace_id"] = "another-trace"
    request["environment"] = "sha256:" + "1" * 64
    assert records.request_digest(request) == vector["request_sha256"]
    request["timeout_ms"] = (request.get("timeout_ms") or 0) + 1
    assert records.request_digest(request) != vector["request_sha256"]


def test_image_is_covered_only_when_named() -> None:
    """Row 4a: an absent, null or empty image adds no field; a named one is covered."""
    vector = BY_NAME["python-named-image"]
    assert records.request_digest(vector["request"]) == vector["request_sha256"]
    unnamed = {k: v for k, v in vector["request"].items() if k != "image"}
    digest = records.request_digest(unnamed)
    assert digest != vector["request_sha256"]
    assert records.request_digest(dict(unnamed, image="")) == digest
    assert records.request_digest(dict(unnamed, image=None)) == digest
    assert records.request_digest(dict(unnamed, image="base")) not in (
        digest, vector["request_sha256"])
    # A request with no image keeps the digest it had before images existed.
    plain = BY_NAME["javascript-spec-example"]
    assert records.request_digest(dict(plain["request"], image="")) == plain["request_sha256"]
    assert records.request_digest(dict(plain["request"], image="data")) != plain[
        "request_sha256"]
    with pytest.raises(ValueError):
        records.request_digest(dict(unnamed, image=7))


def test_non_canonical_base64_is_refused() -> None:
    with pytest.raises(ValueError):
        records.wire_bytes({"base64": "aGk"})  # no padding
    with pytest.raises(ValueError):
        records.wire_bytes({"base64": "aGl="})  # non-zero pad bits
    assert records.wire_bytes({"base64": "aGk="}) == b"hi"
