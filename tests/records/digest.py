"""An independent implementation of plimsoll's run-record digests.

Standard library only. Written from docs/run-records.md, not from the C++
code, so that the shared vectors in testdata/records/vectors.json are checked
by two implementations. It works directly on the wire form (SPEC §4): the
parsed JSON objects a client sends and receives.

    import digest
    digest.request_digest({"protocol": 1, "javascript": {"code": "1+1"}})
"""

import base64
import hashlib
import math
import struct

REQUEST_DOMAIN = "plimsoll.run-request.v1"
RESULT_DOMAIN = "plimsoll.run-result.v1"
RECORD_DOMAIN = "plimsoll.run-record.v1"
POLICY_DOMAIN = "plimsoll.policy.v1"

PAYLOAD_ORDER = ("javascript", "python", "project", "cell", "module")

LIMITS_ORDER = (
    "memory_bytes",
    "cpus_millis",
    "pids",
    "tmp_bytes",
    "work_bytes",
    "output_cap_bytes",
    "snippet_timeout_default_ms",
    "snippet_timeout_max_ms",
    "project_timeout_default_ms",
    "project_timeout_max_ms",
    "run_ceiling_ms",
    "max_code_bytes",
    "max_project_files",
    "max_project_bytes",
    "max_artifacts",
    "max_artifact_bytes",
)

CANONICAL_NAN = struct.pack(">Q", 0x7FF8000000000000)


def value(data: bytes) -> bytes:
    """A value: u64 big-endian length, then the bytes."""
    return struct.pack(">Q", len(data)) + data


def wire_bytes(item) -> bytes:
    """A byte field as it travels: a JSON string (UTF-8) or {"base64": ...}."""
    if isinstance(item, str):
        return item.encode("utf-8")
    if isinstance(item, dict) and set(item) == {"base64"}:
        return base64.b64decode(item["base64"], validate=True)
    raise TypeError(f"not a byte field: {item!r}")


def wire_float(item) -> float:
    """A float as it travels: a JSON number or "NaN" / "Infinity" / "-Infinity"."""
    if isinstance(item, bool):
        raise TypeError("a boolean is not a float")
    if isinstance(item, (int, float)):
        return float(item)
    specials = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
    if item in specials:
        return specials[item]
    raise TypeError(f"not a float: {item!r}")


def encode_integer(number) -> bytes:
    if isinstance(number, bool) or not isinstance(number, int):
        raise TypeError(f"not an integer: {number!r}")
    return str(number).encode("ascii")


def encode_boolean(flag) -> bytes:
    if not isinstance(flag, bool):
        raise TypeError(f"not a boolean: {flag!r}")
    return b"true" if flag else b"false"


def encode_float(number: float) -> bytes:
    if math.isnan(number):
        return CANONICAL_NAN
    return struct.pack(">d", number)


class Digest:
    """SHA-256 over value(domain) then field(name, content) pairs."""

    def __init__(self, domain: str):
        self._hash = hashlib.sha256()
        self.transcript = bytearray()
        self._feed(value(domain.encode("utf-8")))

    def _feed(self, data: bytes) -> None:
        self._hash.update(data)
        self.transcript += data

    def field(self, name: str, content: bytes) -> None:
        self._feed(value(name.encode("utf-8")) + value(content))

    def string(self, name: str, text) -> None:
        if not isinstance(text, str):
            raise TypeError(f"{name} is not a string: {text!r}")
        self.field(name, text.encode("utf-8"))

    def bytes(self, name: str, item) -> None:
        self.field(name, wire_bytes(item))

    def integer(self, name: str, number) -> None:
        self.field(name, encode_integer(number))

    def boolean(self, name: str, flag) -> None:
        self.field(name, encode_boolean(flag))

    def float(self, name: str, item) -> None:
        self.field(name, encode_float(wire_float(item)))

    def count(self, name: str, items) -> None:
        self.field(name, str(len(items)).encode("ascii"))

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def _absent(item) -> bool:
    return item is None


def _only(obj: dict, known, where: str) -> dict:
    """Refuses a key the digest does not know: a misspelt or new field would
    otherwise be left out of the digest without a word (the wire refuses
    unknown fields for the same reason)."""
    if not isinstance(obj, dict):
        raise TypeError(f"{where} is not an object: {obj!r}")
    unknown = sorted(set(obj) - set(known))
    if unknown:
        raise ValueError(f"{where} has unknown field(s) {unknown}")
    return obj


REQUEST_FIELDS = ("protocol", "minimum_isolation", "timeout_ms", "trace_id", "grant_profile",
                  "environment", "image") + PAYLOAD_ORDER
RESULT_FIELDS = ("provider", "isolation", "environment", "kind", "exit_code", "timed_out", "stdout",
                 "stderr", "stdout_truncated", "stderr_truncated", "duration_ms", "outcome", "steps",
                 "artifacts", "value", "value_truncated", "interpreter_started", "state_kept",
                 "broker", "advice", "displays", "displays_truncated", "record")
STEP_FIELDS = ("command", "exit_code", "timed_out", "stdout", "stderr", "stdout_truncated",
               "stderr_truncated", "duration_ms")
ARTIFACT_FIELDS = ("path", "content", "truncated")
BROKER_FIELDS = ("profile", "calls", "denied", "routes", "routes_dropped")
BROKER_ROUTE_FIELDS = ("method", "route", "status", "allowed", "reason", "count")
DISPLAY_FIELDS = ("mime", "data", "width", "height")
ADVICE_FIELDS = ("pattern", "route", "message", "extra_calls", "added_latency_ms", "bytes")
RECORD_FIELDS = ("version", "request_sha256", "result_sha256", "provider", "isolation", "environment",
                 "policy", "started_unix_ms", "ended_unix_ms", "session", "sequence", "previous_sha256",
                 "record_sha256")


def request_digest(request: dict) -> str:
    """Covers protocol, floor, timeout, grant profile, a named image and every payload."""
    _only(request, REQUEST_FIELDS, "request")
    d = Digest(REQUEST_DOMAIN)
    d.integer("protocol", request["protocol"])
    d.string("minimum_isolation", request.get("minimum_isolation") or "")
    timeout = request.get("timeout_ms")
    d.integer("timeout_ms", 0 if timeout is None else timeout)
    d.string("grant_profile", request.get("grant_profile") or "")
    if request.get("image"):  # present only when named (docs/run-records.md, row 4a)
        d.string("image", request["image"])
    kinds = [k for k in PAYLOAD_ORDER if not _absent(request.get(k))]
    d.count("payloads", kinds)
    for kind in kinds:
        payload = request[kind]
        d.string("kind", kind)
        known = {"javascript": ("code",), "python": ("code",), "project": ("files", "steps", "artifacts"),
                 "cell": ("language", "code"), "module": ("model", "rows", "end_time", "step")}[kind]
        _only(payload, known, kind)
        if kind in ("javascript", "python"):
            d.bytes(f"{kind}.code", payload["code"])
        elif kind == "project":
            files = payload.get("files") or []
            d.count("project.files", files)
            for entry in files:
                _only(entry, ("path", "content"), "project.file")
                d.string("project.file.path", entry["path"])
                d.bytes("project.file.content", entry["content"])
            steps = payload.get("steps") or []
            d.count("project.steps", steps)
            for argv in steps:
                d.count("project.step.argv", argv)
                for argument in argv:
                    d.string("project.step.arg", argument)
            artifacts = payload.get("artifacts") or []
            d.count("project.artifacts", artifacts)
            for path in artifacts:
                d.string("project.artifact", path)
        elif kind == "module":
            d.string("module.model", payload["model"])
            rows = payload.get("rows") or []
            d.count("module.rows", rows)
            for row in rows:
                d.count("module.row", row)
                for number in row:
                    d.float("module.value", number)
            d.float("module.end_time", payload["end_time"])
            d.float("module.step", payload["step"])
        else:
            d.string("cell.language", payload["language"])
            d.bytes("cell.code", payload["code"])
    return d.hexdigest()


def result_digest(result: dict) -> str:
    """Covers every field of the answer except `record`."""
    _only(result, RESULT_FIELDS, "result")
    d = Digest(RESULT_DOMAIN)
    d.string("provider", result["provider"])
    d.string("isolation", result["isolation"])
    d.string("environment", result["environment"])
    d.string("kind", result["kind"])
    d.integer("exit_code", result["exit_code"])
    d.boolean("timed_out", result["timed_out"])
    d.bytes("stdout", result["stdout"])
    d.bytes("stderr", result["stderr"])
    d.boolean("stdout_truncated", result["stdout_truncated"])
    d.boolean("stderr_truncated", result["stderr_truncated"])
    d.integer("duration_ms", result["duration_ms"])
    if "outcome" in result:
        d.string("outcome", result["outcome"])
    steps = result.get("steps", [])
    d.count("steps", steps)
    for step in steps:
        _only(step, STEP_FIELDS, "step")
        d.count("step.command", step["command"])
        for argument in step["command"]:
            d.string("step.command.arg", argument)
        d.integer("step.exit_code", step["exit_code"])
        d.boolean("step.timed_out", step["timed_out"])
        d.bytes("step.stdout", step["stdout"])
        d.bytes("step.stderr", step["stderr"])
        d.boolean("step.stdout_truncated", step["stdout_truncated"])
        d.boolean("step.stderr_truncated", step["stderr_truncated"])
        d.integer("step.duration_ms", step["duration_ms"])
    artifacts = result.get("artifacts", [])
    d.count("artifacts", artifacts)
    for artifact in artifacts:
        _only(artifact, ARTIFACT_FIELDS, "artifact")
        d.string("artifact.path", artifact["path"])
        d.bytes("artifact.content", artifact["content"])
        d.boolean("artifact.truncated", artifact["truncated"])
    # A cell's answer (SPEC §9): the four come together; value only when the
    # cell ended in an expression with a value.
    if "interpreter_started" in result:
        if "value" in result:
            d.bytes("cell.value", result["value"])
        d.boolean("cell.value_truncated", result["value_truncated"])
        d.boolean("cell.interpreter_started", result["interpreter_started"])
        d.boolean("cell.state_kept", result["state_kept"])
    if "broker" in result:
        broker = _only(result["broker"], BROKER_FIELDS, "broker")
        d.string("broker.profile", broker["profile"])
        d.integer("broker.calls", broker["calls"])
        d.integer("broker.denied", broker["denied"])
        # The call trace's rows, then how many were left out (both default
        # when absent: an empty list, 0).
        routes = broker.get("routes", [])
        d.count("broker.routes", routes)
        for row in routes:
            _only(row, BROKER_ROUTE_FIELDS, "broker.route")
            d.string("broker.route.method", row["method"])
            d.string("broker.route.route", row["route"])
            d.integer("broker.route.status", row["status"])
            d.boolean("broker.route.allowed", row["allowed"])
            d.string("broker.route.reason", row["reason"])
            d.integer("broker.route.count", row["count"])
        d.integer("broker.routes_dropped", broker.get("routes_dropped", 0))
    advice = result.get("advice", [])
    d.count("advice", advice)
    for finding in advice:
        _only(finding, ADVICE_FIELDS, "advice")
        d.string("advice.pattern", finding["pattern"])
        d.string("advice.route", finding["route"])
        d.string("advice.message", finding["message"])
        d.integer("advice.extra_calls", finding["extra_calls"])
        d.float("advice.added_latency_ms", finding["added_latency_ms"])
        d.integer("advice.bytes", finding["bytes"])
    # Rows 18 and 19 (SPEC §7): only when present and not empty, only when
    # present and true, so results without displays keep their digests.
    displays = result.get("displays", [])
    if not isinstance(displays, list):
        raise TypeError(f"displays is not a list: {displays!r}")
    if displays:
        d.count("displays", displays)
        for display in displays:
            _only(display, DISPLAY_FIELDS, "display")
            d.string("display.mime", display["mime"])
            d.bytes("display.data", display["data"])
            d.integer("display.width", display.get("width", 0))
            d.integer("display.height", display.get("height", 0))
    truncated = result.get("displays_truncated", False)
    encode_boolean(truncated)  # refuses a non-boolean
    if truncated:
        d.boolean("displays_truncated", True)
    return d.hexdigest()


SESSION_FIELDS = ("session", "sequence", "previous_sha256")


def record_digest(record: dict) -> str:
    """Covers every record field except record_sha256."""
    _only(record, RECORD_FIELDS, "record")
    d = Digest(RECORD_DOMAIN)
    d.integer("version", record["version"])
    d.string("request_sha256", record["request_sha256"])
    d.string("result_sha256", record["result_sha256"])
    d.string("provider", record["provider"])
    d.string("isolation", record["isolation"])
    d.string("environment", record["environment"])
    d.string("policy", record["policy"])
    d.integer("started_unix_ms", record["started_unix_ms"])
    d.integer("ended_unix_ms", record["ended_unix_ms"])
    present = [name for name in SESSION_FIELDS if name in record]
    if present:
        if len(present) != len(SESSION_FIELDS):
            raise ValueError("session fields come all together or not at all")
        d.string("session", record["session"])
        d.integer("sequence", record["sequence"])
        d.string("previous_sha256", record["previous_sha256"])
    return d.hexdigest()


def policy_digest(limits: dict) -> str:
    d = Digest(POLICY_DOMAIN)
    if set(limits) != set(LIMITS_ORDER):
        raise ValueError("limits must carry exactly the Limits fields")
    for name in LIMITS_ORDER:
        d.integer(name, limits[name])
    return d.hexdigest()


def session_id_digest(session_id: str) -> str:
    """Plain SHA-256 of the session ID's bytes: no domain, no framing."""
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


def encoding_digest(encoding: dict):
    """A generic list of typed fields; returns (hex digest, transcript bytes)."""
    _only(encoding, ("domain", "fields"), "encoding")
    d = Digest(encoding["domain"])
    for entry in encoding["fields"]:
        _only(entry, ("type", "name", "value"), "encoding field")
        kind, name, item = entry["type"], entry["name"], entry["value"]
        if kind == "integer":
            d.integer(name, item)
        elif kind == "count":
            d.field(name, encode_integer(item))
        elif kind == "boolean":
            d.boolean(name, item)
        elif kind == "float":
            d.float(name, item)
        elif kind == "bytes":
            d.bytes(name, item)
        else:
            raise ValueError(f"unknown field type {kind!r}")
    return d.hexdigest(), bytes(d.transcript)
