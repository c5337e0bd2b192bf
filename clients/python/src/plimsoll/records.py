"""Run-record digests (docs/run-records.md), computed over the wire JSON.

Every function takes the JSON objects as they travel (``json.loads`` output): byte fields are a
string (its UTF-8 bytes are hashed) or ``{"base64": "..."}`` (the decoded bytes are hashed).
Answer objects may carry fields this module does not know; they are ignored, since a field that
enters a digest comes with a new digest domain, which the record check then reports.

A malformed input (a wrong type, bad base64) raises :class:`ValueError`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import struct
from typing import Any, Mapping, Sequence

__all__ = [
    "REQUEST_DOMAIN",
    "RESULT_DOMAIN",
    "RECORD_DOMAIN",
    "POLICY_DOMAIN",
    "POLICY_FIELDS",
    "Encoder",
    "wire_bytes",
    "request_digest",
    "result_digest",
    "record_digest",
    "policy_digest",
    "session_digest",
    "encoding_digest",
]

REQUEST_DOMAIN = "plimsoll.run-request.v1"
RESULT_DOMAIN = "plimsoll.run-result.v1"
RECORD_DOMAIN = "plimsoll.run-record.v1"
POLICY_DOMAIN = "plimsoll.policy.v1"

POLICY_FIELDS = (
    "memory_bytes", "cpus_millis", "pids", "tmp_bytes", "work_bytes", "output_cap_bytes",
    "snippet_timeout_default_ms", "snippet_timeout_max_ms", "project_timeout_default_ms",
    "project_timeout_max_ms", "run_ceiling_ms", "max_code_bytes", "max_project_files",
    "max_project_bytes", "max_artifacts", "max_artifact_bytes",
)

_pack_length = struct.Struct(">Q").pack
_pack_double = struct.Struct(">d").pack
_NAN_BITS = bytes.fromhex("7ff8000000000000")
_names: dict[str, bytes] = {}


def _value(data: bytes) -> bytes:
    return _pack_length(len(data)) + data


def _name(name: str) -> bytes:
    encoded = _names.get(name)
    if encoded is None:
        encoded = _value(name.encode("ascii"))
        _names[name] = encoded
    return encoded


def wire_bytes(value: object, where: str = "value") -> bytes:
    """The raw bytes of a wire byte field: a JSON string, or {"base64": ...} (canonical)."""
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{where} is not valid Unicode text") from None
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("base64"), str):
        text: str = value["base64"]
        try:
            decoded = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"{where} is not valid base64") from None
        if base64.b64encode(decoded).decode("ascii") != text:
            raise ValueError(f"{where} is not canonical base64")
        return decoded
    raise ValueError(f"{where} is neither a string nor {{\"base64\": ...}}")


class Encoder:
    """Builds one digest: the domain as a value, then (name, content) fields."""

    __slots__ = ("_parts",)

    def __init__(self, domain: str) -> None:
        self._parts: list[bytes] = [_name(domain)]

    def raw(self, name: str, content: bytes) -> None:
        self._parts.append(_name(name))
        self._parts.append(_pack_length(len(content)))
        self._parts.append(content)

    def string(self, name: str, value: object) -> None:
        if not isinstance(value, str):
            raise ValueError(f"{name} is not a string")
        self.raw(name, value.encode("utf-8"))

    def bytes_field(self, name: str, value: object) -> None:
        self.raw(name, wire_bytes(value, name))

    def integer(self, name: str, value: object) -> None:
        if type(value) is not int:
            raise ValueError(f"{name} is not an integer")
        self.raw(name, str(value).encode("ascii"))

    def boolean(self, name: str, value: object) -> None:
        if type(value) is not bool:
            raise ValueError(f"{name} is not a boolean")
        self.raw(name, b"true" if value else b"false")

    def floating(self, name: str, value: object) -> None:
        self.raw(name, _float_bits(value, name))

    def count(self, name: str, value: int) -> None:
        self.raw(name, str(value).encode("ascii"))

    def hexdigest(self) -> str:
        return hashlib.sha256(b"".join(self._parts)).hexdigest()

    def encoding(self) -> bytes:
        return b"".join(self._parts)


def _float_bits(value: object, name: str) -> bytes:
    if isinstance(value, str):
        if value == "NaN":
            return _NAN_BITS
        if value == "Infinity":
            return _pack_double(math.inf)
        if value == "-Infinity":
            return _pack_double(-math.inf)
        raise ValueError(f"{name} is not a number")
    if type(value) is int:
        return _pack_double(float(value))
    if type(value) is float:
        return _NAN_BITS if math.isnan(value) else _pack_double(value)
    raise ValueError(f"{name} is not a number")


def _list(value: object, name: str) -> Sequence[Any]:
    """A list field: missing or null is the empty list."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError(f"{name} is not a list")
    return value


def _object(value: object, name: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{name} is not an object")
    return value


def _optional_string(value: object, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{name} is not a string")
    return value


def request_digest(request: Mapping[str, Any]) -> str:
    """``plimsoll.run-request.v1`` of a wire request (trace_id and environment not covered;
    ``image`` is, when named)."""
    e = Encoder(REQUEST_DOMAIN)
    e.integer("protocol", request.get("protocol"))
    e.string("minimum_isolation", _optional_string(request.get("minimum_isolation"),
                                                   "minimum_isolation"))
    timeout = request.get("timeout_ms")
    e.integer("timeout_ms", 0 if timeout is None else timeout)
    e.string("grant_profile", _optional_string(request.get("grant_profile"), "grant_profile"))
    # Row 4a: the one field encoded only when present, so a request naming no image (absent,
    # null or "") keeps the digest it always had.
    image = request.get("image")
    if image is not None and image != "":
        e.string("image", image)
    kinds = [k for k in ("javascript", "python", "project", "cell") if request.get(k) is not None]
    e.count("payloads", len(kinds))
    for kind in kinds:
        payload = _object(request[kind], kind)
        e.string("kind", kind)
        if kind == "javascript" or kind == "python":
            e.bytes_field(kind + ".code", payload.get("code"))
        elif kind == "project":
            files = _list(payload.get("files"), "project.files")
            e.count("project.files", len(files))
            for entry in files:
                entry = _object(entry, "project.files[]")
                e.string("project.file.path", entry.get("path"))
                e.bytes_field("project.file.content", entry.get("content"))
            steps = _list(payload.get("steps"), "project.steps")
            e.count("project.steps", len(steps))
            for argv in steps:
                argv = _list(argv, "project.steps[]")
                e.count("project.step.argv", len(argv))
                for argument in argv:
                    e.string("project.step.arg", argument)
            artifacts = _list(payload.get("artifacts"), "project.artifacts")
            e.count("project.artifacts", len(artifacts))
            for path in artifacts:
                e.string("project.artifact", path)
        else:
            e.string("cell.language", payload.get("language"))
            e.bytes_field("cell.code", payload.get("code"))
    return e.hexdigest()


def result_digest(result: Mapping[str, Any]) -> str:
    """``plimsoll.run-result.v1`` of a wire answer (its ``record`` and unknown fields ignored)."""
    e = Encoder(RESULT_DOMAIN)
    get = result.get
    e.string("provider", get("provider"))
    e.string("isolation", get("isolation"))
    e.string("environment", get("environment"))
    e.string("kind", get("kind"))
    e.integer("exit_code", get("exit_code"))
    e.boolean("timed_out", get("timed_out"))
    e.bytes_field("stdout", get("stdout"))
    e.bytes_field("stderr", get("stderr"))
    e.boolean("stdout_truncated", get("stdout_truncated"))
    e.boolean("stderr_truncated", get("stderr_truncated"))
    e.integer("duration_ms", get("duration_ms"))
    if get("outcome") is not None:
        e.string("outcome", get("outcome"))
    steps = _list(get("steps"), "steps")
    e.count("steps", len(steps))
    for step in steps:
        step = _object(step, "steps[]")
        command = _list(step.get("command"), "steps[].command")
        e.count("step.command", len(command))
        for argument in command:
            e.string("step.command.arg", argument)
        e.integer("step.exit_code", step.get("exit_code"))
        e.boolean("step.timed_out", step.get("timed_out"))
        e.bytes_field("step.stdout", step.get("stdout"))
        e.bytes_field("step.stderr", step.get("stderr"))
        e.boolean("step.stdout_truncated", step.get("stdout_truncated"))
        e.boolean("step.stderr_truncated", step.get("stderr_truncated"))
        e.integer("step.duration_ms", step.get("duration_ms"))
    artifacts = _list(get("artifacts"), "artifacts")
    e.count("artifacts", len(artifacts))
    for artifact in artifacts:
        artifact = _object(artifact, "artifacts[]")
        e.string("artifact.path", artifact.get("path"))
        e.bytes_field("artifact.content", artifact.get("content"))
        e.boolean("artifact.truncated", artifact.get("truncated"))
    if get("value") is not None:
        e.bytes_field("cell.value", get("value"))
    cell_flags = ("value_truncated", "interpreter_started", "state_kept")
    present = [get(flag) is not None for flag in cell_flags]
    if any(present):
        if not all(present):
            raise ValueError("a cell answer carries value_truncated, interpreter_started and "
                             "state_kept together")
        for flag in cell_flags:
            e.boolean("cell." + flag, get(flag))
    elif get("value") is not None:
        raise ValueError("value appears without the cell's flags")
    broker = get("broker")
    if broker is not None:
        broker = _object(broker, "broker")
        e.string("broker.profile", broker.get("profile"))
        e.integer("broker.calls", broker.get("calls"))
        e.integer("broker.denied", broker.get("denied"))
        # The call trace's rows, then how many were left out: an absent list is empty, an absent
        # count is 0.
        routes = _list(broker.get("routes"), "broker.routes")
        e.count("broker.routes", len(routes))
        for row in routes:
            row = _object(row, "broker.routes[]")
            e.string("broker.route.method", row.get("method"))
            e.string("broker.route.route", row.get("route"))
            e.integer("broker.route.status", row.get("status"))
            e.boolean("broker.route.allowed", row.get("allowed"))
            e.string("broker.route.reason", row.get("reason"))
            e.integer("broker.route.count", row.get("count"))
        dropped = broker.get("routes_dropped")
        e.integer("broker.routes_dropped", 0 if dropped is None else dropped)
    advice = _list(get("advice"), "advice")
    e.count("advice", len(advice))
    for finding in advice:
        finding = _object(finding, "advice[]")
        e.string("advice.pattern", finding.get("pattern"))
        e.string("advice.route", finding.get("route"))
        e.string("advice.message", finding.get("message"))
        e.integer("advice.extra_calls", finding.get("extra_calls"))
        e.floating("advice.added_latency_ms", finding.get("added_latency_ms"))
        e.integer("advice.bytes", finding.get("bytes"))
    # Rows 18 and 19: rich outputs (SPEC §7), last and only when there is something to say, so a
    # result without displays keeps the digest it always had.
    displays = _list(get("displays"), "displays")
    if displays:
        e.count("displays", len(displays))
        for display in displays:
            display = _object(display, "displays[]")
            e.string("display.mime", display.get("mime"))
            e.bytes_field("display.data", display.get("data"))
            width, height = display.get("width"), display.get("height")
            e.integer("display.width", 0 if width is None else width)
            e.integer("display.height", 0 if height is None else height)
    truncated = get("displays_truncated")
    if truncated is not None:
        if type(truncated) is not bool:
            raise ValueError("displays_truncated is not a boolean")
        if truncated:
            e.boolean("displays_truncated", True)
    return e.hexdigest()


_SESSION_FIELDS = ("session", "sequence", "previous_sha256")


def record_digest(record: Mapping[str, Any]) -> str:
    """``plimsoll.run-record.v1`` of a wire record (``record_sha256`` is not an input)."""
    e = Encoder(RECORD_DOMAIN)
    get = record.get
    e.integer("version", get("version"))
    e.string("request_sha256", get("request_sha256"))
    e.string("result_sha256", get("result_sha256"))
    e.string("provider", get("provider"))
    e.string("isolation", get("isolation"))
    e.string("environment", get("environment"))
    e.string("policy", get("policy"))
    e.integer("started_unix_ms", get("started_unix_ms"))
    e.integer("ended_unix_ms", get("ended_unix_ms"))
    present = [get(name) is not None for name in _SESSION_FIELDS]
    if any(present):
        if not all(present):
            raise ValueError("a record carries session, sequence and previous_sha256 together")
        e.string("session", get("session"))
        e.integer("sequence", get("sequence"))
        e.string("previous_sha256", get("previous_sha256"))
    return e.hexdigest()


def policy_digest(limits: Mapping[str, Any]) -> str:
    """``plimsoll.policy.v1`` of a ``limits`` object (the sixteen fields, in order)."""
    e = Encoder(POLICY_DOMAIN)
    for name in POLICY_FIELDS:
        e.integer(name, limits.get(name))
    return e.hexdigest()


def session_digest(session_id: str) -> str:
    """The record's ``session``: plain SHA-256 of the session ID's bytes, no framing."""
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


def encoding_digest(domain: str, fields: Sequence[Mapping[str, Any]]) -> tuple[str, bytes]:
    """A digest of typed fields ``{name, type, value}`` (the vectors' ``encoding``).

    Returns the hex digest and the exact bytes hashed.
    """
    e = Encoder(domain)
    for field in fields:
        name, kind, value = field["name"], field["type"], field["value"]
        if kind == "integer":
            e.integer(name, value)
        elif kind == "boolean":
            e.boolean(name, value)
        elif kind == "float":
            e.floating(name, value)
        elif kind == "count":
            if type(value) is not int or value < 0:
                raise ValueError(f"{name} is not a count")
            e.count(name, value)
        elif kind in ("bytes", "string"):
            e.bytes_field(name, value)
        else:
            raise ValueError(f"unknown field type {kind!r}")
    return e.hexdigest(), e.encoding()
