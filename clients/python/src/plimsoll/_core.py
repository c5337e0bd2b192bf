"""The sans-IO core shared by Client and AsyncClient: URLs and options, request building,
answer parsing and every check an answer must pass before it is believed."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import re
import secrets
import ssl
from dataclasses import dataclass
from typing import (Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple,
                    Union)

from . import records
from .errors import ERROR_CODES, PlimsollError, Reason
from .results import (TIERS, Advice, Artifact, Broker, BrokerRoute, Describe, Display, Image,
                      ImagePackage, Record, Result, SessionEnd, SessionInfo, SessionState, Step,
                      tier_meets)

Data = Union[bytes, bytearray, memoryview, str]
Files = Union[Mapping[str, Data], Iterable[Tuple[str, Data]]]

PROTOCOL = 1
USER_AGENT = "plimsoll-python-client/0.1.0"
DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024
UNSPECIFIED_RUN_BOUND = 300.0
ID_HEADER = "plimsoll-request-id"
MARK_HEADER = "plimsoll-not-dispatched"
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/=]+")
_PATH = re.compile(r"[A-Za-z0-9/\-._~]*")
_DNS = re.compile(r"[A-Za-z0-9\-.]{1,253}")
_HEX32 = re.compile(r"[0-9a-f]{32}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_KINDS = frozenset({"javascript", "python", "project", "cell"})
_OUTCOMES = frozenset({"completed", "setup_failed", "timed_out", "protocol_error"})
_MAX_BROKER_ROUTES = 256  # a broker summary's call trace rows (SPEC §8); more is malformed
_ENDS = frozenset({"closed", "expired", "disk_exceeded", "main_process_ended", "boundary_failed",
                   "sandbox_changed", "shutdown", "replaced", "not_found", "unclaimed"})
_TIER_SET = frozenset(TIERS)
_PACKAGE_SOURCES = frozenset({"debian", "python", "npm"})


def bad_argument(message: str, code: str = "invalid_argument") -> PlimsollError:
    return PlimsollError(code, message, Reason.REQUEST)


# ---------------------------------------------------------------------------------------------
# URLs and options


@dataclass(frozen=True)
class DaemonUrl:
    transport: str  # "http", "https" or "unix"
    host: str = ""
    port: int = 0
    prefix: str = ""
    socket_path: str = ""

    @property
    def host_header(self) -> str:
        if self.transport == "unix":
            return "localhost"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        if self.transport == "unix":
            return "unix:" + self.socket_path
        return f"{self.transport}://{self.host_header}{self.prefix}"

    @property
    def host_is_ip(self) -> bool:
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            return False
        return True


def _bad_url(url: str, problem: str) -> PlimsollError:
    return bad_argument(f'The daemon URL "{url}" {problem} (expected http://HOST:PORT, '
                        "https://HOST:PORT or unix:/PATH).")


def parse_url(url: str) -> DaemonUrl:
    if not isinstance(url, str):
        raise bad_argument("The daemon URL must be a string.")
    lower = url.lower()
    if lower.startswith("unix:"):
        path = url[5:]
        if path.startswith("//"):
            path = path[2:]
        if len(path) < 2 or not path.startswith("/"):
            raise _bad_url(url, "does not name an absolute socket path")
        if "\0" in path:
            raise _bad_url(url, "holds a NUL byte")
        if len(path.encode()) > 107:
            raise _bad_url(url, "names a socket path longer than 107 bytes")
        return DaemonUrl("unix", socket_path=path)
    if lower.startswith("http://"):
        transport, rest = "http", url[7:]
    elif lower.startswith("https://"):
        transport, rest = "https", url[8:]
    else:
        raise _bad_url(url, "has no http://, https:// or unix: scheme")
    if "?" in rest or "#" in rest:
        raise _bad_url(url, "has a query or fragment")
    slash = rest.find("/")
    authority, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
    if "@" in authority:
        raise _bad_url(url, "carries user information; give a token in the client's options "
                            "instead")
    port_text: Optional[str] = None
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            raise _bad_url(url, "has an unclosed [IPv6] host")
        host = authority[1:close].lower()
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise _bad_url(url, "has a bracketed host that is not an IPv6 address") from None
        after = authority[close + 1:]
        if after:
            if not after.startswith(":"):
                raise _bad_url(url, "has text after the ]")
            port_text = after[1:]
    else:
        host, _, port_part = authority.partition(":")
        host = host.lower()
        if ":" in authority:
            port_text = port_part
        if not host:
            raise _bad_url(url, "has no host")
        if not _DNS.fullmatch(host):
            raise _bad_url(url, "has a host that is neither a DNS name nor an IP address")
    port = 443 if transport == "https" else 80
    if port_text is not None:
        if not port_text.isdigit() or not port_text.isascii() or len(port_text) > 5 \
                or not 1 <= int(port_text) <= 65535:
            raise _bad_url(url, "has a port that is not a number from 1 to 65535")
        port = int(port_text)
    path = path.rstrip("/")
    if not _PATH.fullmatch(path):
        raise _bad_url(url, "has a path with characters other than letters, digits and /-._~")
    return DaemonUrl(transport, host=host, port=port, prefix=path)


def is_loopback(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def cleartext_refused(url: DaemonUrl, address: str) -> PlimsollError:
    host = address if url.host == address else f"{url.host} ({address})"
    return bad_argument(
        f"Refusing cleartext http:// to {host}, which is not a loopback address: the token, the "
        "code and its outputs would cross the network unencrypted. Use https://, or allow "
        "cleartext explicitly (allow_cleartext=True) on a network you trust.",
        "failed_precondition")


class _Secret:
    """Holds a value that no repr, str or log may show."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<redacted>"

    __str__ = __repr__


@dataclass(frozen=True)
class Settings:
    url: DaemonUrl
    allow_cleartext: bool
    ssl_context: Optional[ssl.SSLContext]
    max_response_bytes: int
    connect_timeout: float
    call_timeout: float
    run_timeout_margin: float


class Base:
    """Options, request building and answer checks; no I/O."""

    def __init__(self, url: str, *, token: Optional[str] = None, allow_cleartext: bool = False,
                 ca_file: Optional[str] = None,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 connect_timeout: float = 10.0, call_timeout: float = 30.0,
                 run_timeout_margin: float = 30.0,
                 owner_key: Union[bytes, str, None] = None) -> None:
        parsed = parse_url(url)
        if token is None:
            token = os.environ.get("PLIMSOLL_TOKEN") or None
        if token is not None and (not isinstance(token, str) or not _TOKEN.fullmatch(token)):
            raise bad_argument(
                "The bearer token holds characters a token cannot have (only letters, digits "
                "and -._~+/= are allowed); check the token file for stray text.")
        if type(max_response_bytes) is not int or max_response_bytes <= 0:
            raise bad_argument("max_response_bytes must be a positive integer.")
        for name, value in (("connect_timeout", connect_timeout), ("call_timeout", call_timeout)):
            if not isinstance(value, (int, float)) or not value > 0:
                raise bad_argument(f"{name} must be positive.")
        if not isinstance(run_timeout_margin, (int, float)) or not run_timeout_margin >= 0:
            raise bad_argument("run_timeout_margin must not be negative.")
        if parsed.transport == "http" and not allow_cleartext and parsed.host_is_ip \
                and not is_loopback(parsed.host):
            raise cleartext_refused(parsed, parsed.host)
        context: Optional[ssl.SSLContext] = None
        if parsed.transport == "https":
            try:
                context = ssl.create_default_context(cafile=ca_file)
            except (OSError, ssl.SSLError) as error:
                raise bad_argument(f"Cannot read the CA file {ca_file!r}: {error}.",
                                   "failed_precondition") from None
            context.minimum_version = ssl.TLSVersion.TLSv1_2
        elif ca_file is not None:
            raise bad_argument("ca_file is for https:// URLs only.")
        if isinstance(owner_key, str):
            owner_key = owner_key.encode("utf-8")
        self._owner_key = None if owner_key is None else _Secret(owner_key.hex())
        self._settings = Settings(parsed, bool(allow_cleartext), context, max_response_bytes,
                                  float(connect_timeout), float(call_timeout),
                                  float(run_timeout_margin))
        self._url = parsed
        common = [("Accept", "application/json"), ("User-Agent", USER_AGENT)]
        if token:
            common.append(("Authorization", "Bearer " + token))
        self._headers = _Secret("".join(f"{k}: {v}\r\n" for k, v in common))
        self._json_headers = _Secret(self._headers.value + "Content-Type: application/json\r\n")

    @property
    def url(self) -> str:
        return str(self._url)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self._url)!r})"

    __str__ = __repr__

    # -- requests -------------------------------------------------------------------------

    def _encode(self, method: str, path: str, body: Optional[bytes]) -> Tuple[str, bytes]:
        """A fresh request ID and the request's bytes."""
        request_id = secrets.token_hex(16)
        headers = self._json_headers.value if body is not None else self._headers.value
        head = (f"{method} {self._url.prefix}{path} HTTP/1.1\r\nHost: {self._url.host_header}"
                f"\r\n{headers}Plimsoll-Request-Id: {request_id}\r\n")
        if body is None:
            return request_id, (head + "\r\n").encode("latin-1")
        return request_id, (head + f"Content-Length: {len(body)}\r\n\r\n").encode(
            "latin-1") + body

    def _run_budget(self, request: Mapping[str, Any]) -> float:
        timeout = request.get("timeout_ms")
        if type(timeout) is int and timeout > 0:
            return min(timeout / 1000.0, 2.0 ** 30) + self._settings.run_timeout_margin
        return UNSPECIFIED_RUN_BOUND

    def _owner_hmac(self, owner: Optional[str]) -> Optional[str]:
        if owner is None:
            return None
        if self._owner_key is None:
            raise bad_argument("owner needs the owner_key option: the client sends only "
                               "HMAC-SHA256(owner_key, owner), never the name.")
        return hmac.new(bytes.fromhex(self._owner_key.value), owner.encode("utf-8"),
                        hashlib.sha256).hexdigest()


def wire_data(value: Data, where: str) -> Union[str, Dict[str, str]]:
    """Bytes (or text) as they travel: a string when valid UTF-8, else {"base64": ...}."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise bad_argument(f"{where} is not valid Unicode text.") from None
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            import base64
            return {"base64": base64.b64encode(raw).decode("ascii")}
    raise bad_argument(f"{where} must be bytes or str.")


def build_request(payload_kind: str, payload: Dict[str, Any], *,
                  minimum_isolation: Optional[str], timeout_ms: Optional[int],
                  environment: Optional[str], grant_profile: Optional[str],
                  trace_id: Optional[str], image: Optional[str]) -> Dict[str, Any]:
    request: Dict[str, Any] = {"protocol": PROTOCOL}
    if minimum_isolation:
        request["minimum_isolation"] = minimum_isolation
    if timeout_ms is not None:
        if type(timeout_ms) is not int:
            raise bad_argument("timeout_ms must be an integer (milliseconds).")
        request["timeout_ms"] = timeout_ms
    if trace_id is not None:
        request["trace_id"] = trace_id
    if grant_profile is not None:
        request["grant_profile"] = grant_profile
    if environment is not None:
        request["environment"] = environment
    if image:  # absent and "" both mean the daemon's default image (SPEC §7)
        request["image"] = image
    request[payload_kind] = payload
    return request


def project_payload(files: Optional[Files], steps: Optional[Sequence[Sequence[str]]],
                    artifacts: Optional[Sequence[str]]) -> Dict[str, Any]:
    entries: List[Dict[str, Any]] = []
    if files is not None:
        items = files.items() if isinstance(files, Mapping) else files
        for path, content in items:
            entries.append({"path": path, "content": wire_data(content, f"file {path!r}")})
    payload: Dict[str, Any] = {"files": entries}
    payload["steps"] = [list(step) for step in (steps or ())]
    payload["artifacts"] = list(artifacts or ())
    for step in payload["steps"]:
        if isinstance(step, str) or not all(isinstance(a, str) for a in step):
            raise bad_argument("each step is an argv list of strings, such as "
                               "['python3', 'main.py'].")
    return payload


def encode_json(document: Mapping[str, Any]) -> bytes:
    try:
        return json.dumps(document, separators=(",", ":"), allow_nan=False).encode("ascii")
    except (TypeError, ValueError) as error:
        raise bad_argument(f"The request cannot be written as JSON: {error}.") from None


# ---------------------------------------------------------------------------------------------
# Answers


class Answer:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: List[Tuple[str, str]], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def values(self, name: str) -> List[str]:
        return [v for k, v in self.headers if k == name]


class Unreadable(Exception):
    pass


def _pairs(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        raise Unreadable("a key is repeated in one object")
    return document


def _constant(name: str) -> Any:
    raise Unreadable(f"it holds {name}, which is not JSON")


def load_json(body: bytes) -> Dict[str, Any]:
    try:
        document = json.loads(body.decode("utf-8"), object_pairs_hook=_pairs,
                              parse_constant=_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise Unreadable(f"it is not JSON ({error})") from None
    if not isinstance(document, dict):
        raise Unreadable("it is not a JSON object")
    return document


def _printable(value: str, limit: int = 64) -> str:
    text = "".join(c if " " <= c < "\x7f" else "?" for c in value[:limit])
    return text + ("..." if len(value) > limit else "")


def _lost(message: str, request_id: str, status: int) -> PlimsollError:
    return PlimsollError("data_loss", message, None, request_id, status)


def _not_this_calls(problem: str, said: str, request_id: str, status: int) -> PlimsollError:
    message = (f"The daemon's answer is not believed: {problem}. A proxy may have swapped answers "
               "between calls, so the code may have run.")
    if said:
        message += " The answer said: " + said
    return _lost(message, request_id, status)


def echo_problem(sent_id: str, answer: Answer) -> Optional[str]:
    ids = answer.values(ID_HEADER)
    if len(ids) == 1 and ids[0] == sent_id:
        return None
    shown = ", ".join(f'"{_printable(i)}"' for i in ids) or "none"
    return f'it carries request ID {shown} where this call sent "{sent_id}"'


def error_from_answer(sent_id: str, answer: Answer) -> PlimsollError:
    status = answer.status
    try:
        document = load_json(answer.body)
        error = document.get("error")
        if not isinstance(error, dict):
            raise Unreadable("it has no error object")
        code, message = error.get("code"), error.get("message")
        if not isinstance(code, str) or not isinstance(message, str):
            raise Unreadable("its error has no code or message")
        if code not in ERROR_CODES:
            raise Unreadable(f'its error code "{_printable(code)}" is not one plimsoll has')
        mark_text = error.get("not_dispatched")
        mark: Optional[Reason] = None
        if mark_text is not None:
            try:
                mark = Reason(mark_text)
            except ValueError:
                raise Unreadable(f'its not_dispatched "{_printable(str(mark_text))}" is not a '
                                 "reason plimsoll has") from None
        body_id = error.get("request_id")
        if body_id is not None and not isinstance(body_id, str):
            raise Unreadable("its request_id is not a string")
    except Unreadable as why:
        return _lost(f"The daemon answered HTTP {status} with a body that is not a plimsoll "
                     f"error ({why}), so the outcome of the call is unknown and the code may "
                     "have run.", sent_id, status)
    said = f"{code}: {message}"
    problem = echo_problem(sent_id, answer)
    if problem:
        return _not_this_calls(problem, said, sent_id, status)
    if body_id != sent_id:
        return _not_this_calls(f'its body names request ID "{_printable(body_id or "")}" where '
                               f'this call sent "{sent_id}"', said, sent_id, status)
    if mark is not None:
        marks = answer.values(MARK_HEADER)
        if marks != [mark.value]:
            return _not_this_calls(f"its body says nothing ran ({mark.value}) but its "
                                   "Plimsoll-Not-Dispatched header does not say the same", said,
                                   sent_id, status)
    return PlimsollError(code, message, mark, sent_id, status)


def _believed(sent_id: str, answer: Answer, success: int) -> Dict[str, Any]:
    """The body of a success answer that passed the echo check, or raise the error."""
    if answer.status != success:
        raise error_from_answer(sent_id, answer)
    problem = echo_problem(sent_id, answer)
    if problem:
        raise _not_this_calls(problem, "", sent_id, answer.status)
    try:
        return load_json(answer.body)
    except Unreadable as why:
        raise _lost(f"The daemon's answer cannot be read: {why}; the code may have run.",
                    sent_id, answer.status) from None


# Strict readers for known fields.


def _str(d: Mapping[str, Any], key: str, where: str) -> str:
    value = d.get(key)
    if type(value) is not str:
        raise Unreadable(f"{where}{key} is missing or not a string")
    return value


def _int(d: Mapping[str, Any], key: str, where: str) -> int:
    value = d.get(key)
    if type(value) is not int:
        raise Unreadable(f"{where}{key} is missing or not an integer")
    return value


def _bool(d: Mapping[str, Any], key: str, where: str) -> bool:
    value = d.get(key)
    if type(value) is not bool:
        raise Unreadable(f"{where}{key} is missing or not a boolean")
    return value


def _bytes(d: Mapping[str, Any], key: str, where: str) -> bytes:
    value = d.get(key)
    if type(value) is str:
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError:
            raise Unreadable(f"{where}{key} is not valid Unicode") from None
    try:
        return records.wire_bytes(value, where + key)
    except ValueError as why:
        raise Unreadable(str(why)) from None


def _obj(d: Mapping[str, Any], key: str, where: str) -> Dict[str, Any]:
    value = d.get(key)
    if type(value) is not dict:
        raise Unreadable(f"{where}{key} is missing or not an object")
    return value


def _list(d: Mapping[str, Any], key: str, where: str) -> List[Any]:
    value = d.get(key)
    if value is None:
        return []
    if type(value) is not list:
        raise Unreadable(f"{where}{key} is not a list")
    return value


def _opt(d: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = d.get(key)
    if value is not None and type(value) is not kind:
        raise Unreadable(f"{where}{key} is not a {kind.__name__}")
    return value


def _tier(d: Mapping[str, Any], key: str, where: str) -> str:
    value = _str(d, key, where)
    if value not in _TIER_SET:
        raise Unreadable(f'{where}{key} "{_printable(value)}" is not a tier')
    return value


def _hex64(d: Mapping[str, Any], key: str, where: str) -> str:
    value = _str(d, key, where)
    if not _HEX64.fullmatch(value):
        raise Unreadable(f"{where}{key} is not 64 lowercase hex digits")
    return value


def parse_record(d: Mapping[str, Any]) -> Record:
    w = "record."
    session = d.get("session")
    sequence = d.get("sequence")
    previous = d.get("previous_sha256")
    present = (session is not None, sequence is not None, previous is not None)
    if any(present):
        if not all(present):
            raise Unreadable("the record carries some of session, sequence, previous_sha256 "
                             "but not all")
        session, sequence, previous = (_str(d, "session", w), _int(d, "sequence", w),
                                       _str(d, "previous_sha256", w))
    return Record(_int(d, "version", w), _str(d, "request_sha256", w),
                  _str(d, "result_sha256", w), _str(d, "provider", w), _tier(d, "isolation", w),
                  _str(d, "environment", w), _str(d, "policy", w), _int(d, "started_unix_ms", w),
                  _int(d, "ended_unix_ms", w), _str(d, "record_sha256", w), session, sequence,
                  previous)


def _float(value: Any, where: str) -> float:
    if type(value) in (int, float):
        return float(value)
    if value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf").replace("NaN", "nan"))
    raise Unreadable(f"{where} is not a number")


def _size(d: Mapping[str, Any], key: str, where: str) -> Optional[int]:
    """An optional pixel size: absent (or null), or a positive integer."""
    value = d.get(key)
    if value is None:
        return None
    if type(value) is not int or value <= 0:
        raise Unreadable(f"{where}{key} is not a positive integer")
    return value


def parse_result(d: Mapping[str, Any]) -> Result:
    kind = _str(d, "kind", "")
    if kind not in _KINDS:
        raise Unreadable(f'kind "{_printable(kind)}" is not a payload kind')
    outcome = _opt(d, "outcome", str, "")
    if outcome is not None and outcome not in _OUTCOMES:
        raise Unreadable(f'outcome "{_printable(outcome)}" is not an outcome')
    steps = []
    for entry in _list(d, "steps", ""):
        if type(entry) is not dict:
            raise Unreadable("a step is not an object")
        command = _list(entry, "command", "steps[].")
        if not all(type(a) is str for a in command):
            raise Unreadable("a step's command is not a list of strings")
        w = "steps[]."
        steps.append(Step(tuple(command), _int(entry, "exit_code", w),
                          _bool(entry, "timed_out", w), _bytes(entry, "stdout", w),
                          _bytes(entry, "stderr", w), _bool(entry, "stdout_truncated", w),
                          _bool(entry, "stderr_truncated", w), _int(entry, "duration_ms", w)))
    artifacts = []
    for entry in _list(d, "artifacts", ""):
        if type(entry) is not dict:
            raise Unreadable("an artifact is not an object")
        w = "artifacts[]."
        artifacts.append(Artifact(_str(entry, "path", w), _bytes(entry, "content", w),
                                  _bool(entry, "truncated", w)))
    value = None if d.get("value") is None else _bytes(d, "value", "")
    broker_doc = d.get("broker")
    broker = None
    if broker_doc is not None:
        if type(broker_doc) is not dict:
            raise Unreadable("broker is not an object")
        routes = []
        for entry in _list(broker_doc, "routes", "broker."):
            if type(entry) is not dict:
                raise Unreadable("a broker.routes entry is not an object")
            w = "broker.routes[]."
            routes.append(BrokerRoute(_str(entry, "method", w), _str(entry, "route", w),
                                      _int(entry, "status", w), _bool(entry, "allowed", w),
                                      _str(entry, "reason", w), _int(entry, "count", w)))
        if len(routes) > _MAX_BROKER_ROUTES:
            raise Unreadable(f"broker.routes has more than {_MAX_BROKER_ROUTES} rows")
        dropped = _opt(broker_doc, "routes_dropped", int, "broker.")
        broker = Broker(_str(broker_doc, "profile", "broker."), _int(broker_doc, "calls",
                                                                     "broker."),
                        _int(broker_doc, "denied", "broker."), tuple(routes),
                        0 if dropped is None else dropped)
    advice = []
    for entry in _list(d, "advice", ""):
        if type(entry) is not dict:
            raise Unreadable("an advice entry is not an object")
        w = "advice[]."
        advice.append(Advice(_str(entry, "pattern", w), _str(entry, "route", w),
                             _str(entry, "message", w), _int(entry, "extra_calls", w),
                             _float(entry.get("added_latency_ms"), w + "added_latency_ms"),
                             _int(entry, "bytes", w)))
    displays = []
    for entry in _list(d, "displays", ""):
        if type(entry) is not dict:
            raise Unreadable("a displays entry is not an object")
        w = "displays[]."
        mime = _str(entry, "mime", w)
        if not mime:
            raise Unreadable("displays[].mime is empty")
        displays.append(Display(mime, _bytes(entry, "data", w), _size(entry, "width", w),
                                _size(entry, "height", w)))
    displays_truncated = _opt(d, "displays_truncated", bool, "") is True
    return Result(
        _int(d, "exit_code", ""), _bool(d, "timed_out", ""), _bytes(d, "stdout", ""),
        _bytes(d, "stderr", ""), _bool(d, "stdout_truncated", ""),
        _bool(d, "stderr_truncated", ""), _int(d, "duration_ms", ""), _str(d, "provider", ""),
        _tier(d, "isolation", ""), _str(d, "environment", ""), kind,
        parse_record(_obj(d, "record", "")), outcome, tuple(steps), tuple(artifacts), value,
        _opt(d, "value_truncated", bool, ""), _opt(d, "interpreter_started", bool, ""),
        _opt(d, "state_kept", bool, ""), broker, tuple(advice), tuple(displays),
        displays_truncated)


class ChainState:
    """Where a session's record chain stands: the last call's sequence and record digest, and
    the floor the session was opened with ("" for none), which every call's answer must meet
    whatever the call itself asks: an on-path rewriter can lower one call's tier and recompute
    every digest, and only the floor catches that."""

    __slots__ = ("session_sha256", "last_sequence", "last_record_sha256", "floor")

    def __init__(self, session_id: str, floor: Optional[str] = None) -> None:
        self.session_sha256 = records.session_digest(session_id)
        self.last_sequence = 0
        self.last_record_sha256 = ""
        self.floor = floor or ""

    def __repr__(self) -> str:
        return f"ChainState(calls={self.last_sequence}, last={self.last_record_sha256!r})"


def _mismatch(message: str) -> Unreadable:
    return Unreadable("The answer does not match its run record: " + message)


def check_exchange(sent: Mapping[str, Any], request_sha256: str, document: Mapping[str, Any],
                   result: Result, chain: Optional[ChainState]) -> None:
    """CheckExchange (docs/run-records.md §5); raises Unreadable with the reason."""
    record = result.record
    if record.version != 1:
        raise _mismatch(f"record version {record.version} is not 1.")
    if record.request_sha256 != request_sha256:
        raise _mismatch("request_sha256 differs from the digest of the request this client "
                        "sent.")
    try:
        result_sha256 = records.result_digest(document)
        record_sha256 = records.record_digest(document["record"])
    except ValueError as why:
        raise Unreadable(str(why)) from None
    if record.result_sha256 != result_sha256:
        raise _mismatch("result_sha256 differs from the digest of the result received.")
    if record.provider != result.provider:
        raise _mismatch("the record names another provider.")
    if record.isolation != result.isolation:
        raise _mismatch("the record states another tier.")
    if record.environment != result.environment:
        raise _mismatch("the record names another environment.")
    floor = sent.get("minimum_isolation") or ""
    if floor and not tier_meets(result.isolation, floor):
        raise _mismatch(f'the run\'s tier {result.isolation} does not meet the requested floor '
                        f'"{floor}".')
    if chain is not None and chain.floor and not tier_meets(result.isolation, chain.floor):
        raise _mismatch(f'the call\'s tier {result.isolation} does not meet the floor '
                        f'"{chain.floor}" the session was opened with.')
    environment = sent.get("environment") or ""
    if environment and result.environment != environment:
        raise _mismatch("the run's environment is not the one the request required.")
    if record.ended_unix_ms < record.started_unix_ms:
        raise _mismatch("the record ends before it starts.")
    if record.record_sha256 != record_sha256:
        raise _mismatch("record_sha256 differs from the digest of the record's fields.")
    if chain is None:
        if record.session is not None:
            raise _mismatch("a single run's record carries session fields (session, sequence, "
                            "previous_sha256).")
        return
    if record.session is None or record.sequence is None or record.previous_sha256 is None:
        raise _mismatch("a session call's record carries no session fields.")
    if record.session != chain.session_sha256:
        raise _mismatch("the record belongs to another session.")
    expected = chain.last_sequence + 1
    if record.sequence != expected:
        raise _mismatch(f"the record's sequence is {record.sequence}; expected {expected}.")
    previous = "" if expected == 1 else chain.last_record_sha256
    if record.previous_sha256 != previous:
        raise _mismatch("the record's previous_sha256 does not link to the previous call's "
                        "record.")
    chain.last_sequence = record.sequence
    chain.last_record_sha256 = record.record_sha256


def check_run_answer(sent: Mapping[str, Any], sent_id: str, answer: Answer,
                     chain: Optional[ChainState] = None) -> Result:
    document = _believed(sent_id, answer, 200)
    try:
        result = parse_result(document)
        request_sha256 = records.request_digest(sent)
        check_exchange(sent, request_sha256, document, result, chain)
    except Unreadable as why:
        text = str(why)
        if not text.startswith("The answer"):
            text = f"The daemon's answer cannot be read: {text}; the code may have run."
        raise _lost(text, sent_id, answer.status) from None
    except ValueError as why:
        raise _lost(f"The daemon's answer cannot be read: {why}; the code may have run.",
                    sent_id, answer.status) from None
    return result


def _limits(d: Mapping[str, Any], where: str) -> Dict[str, int]:
    limits = _obj(d, "limits", where)
    out: Dict[str, int] = {}
    for name in records.POLICY_FIELDS:
        out[name] = _int(limits, name, where + "limits.")
    return out


def _readable(sent_id: str, answer: Answer, success: int,
              read: Callable[[Dict[str, Any]], Any]) -> Any:
    document = _believed(sent_id, answer, success)
    try:
        return read(document)
    except Unreadable as why:
        raise _lost(f"The daemon's answer cannot be read: {why}.", sent_id,
                    answer.status) from None


def _strings(d: Mapping[str, Any], key: str, where: str) -> Tuple[str, ...]:
    values = _list(d, key, where)
    if not all(type(x) is str for x in values):
        raise Unreadable(f"{where}{key} holds non-strings")
    return tuple(values)


def _images(d: Mapping[str, Any]) -> Tuple[Image, ...]:
    """describe's optional ``images`` (SPEC §7): absent or null is none."""
    images = []
    for entry in _list(d, "images", ""):
        if type(entry) is not dict:
            raise Unreadable("an images entry is not an object")
        w = "images[]."
        packages = []
        for package in _list(entry, "packages", w):
            if type(package) is not dict:
                raise Unreadable("an images[].packages entry is not an object")
            p = w + "packages[]."
            source = _str(package, "source", p)
            if source not in _PACKAGE_SOURCES:
                raise Unreadable(f'{p}source "{_printable(source)}" is not a package source')
            packages.append(ImagePackage(_str(package, "name", p), _str(package, "version", p),
                                         source))
        images.append(Image(_str(entry, "name", w), _bool(entry, "default", w),
                            _str(entry, "environment", w), _tier(entry, "tier", w),
                            _bool(entry, "confirmed", w), _strings(entry, "languages", w),
                            tuple(packages)))
    return tuple(images)


def check_describe_answer(sent_id: str, answer: Answer) -> Describe:
    def read(d: Dict[str, Any]) -> Describe:
        capabilities = _obj(d, "capabilities", "")
        payloads = _list(capabilities, "payloads", "capabilities.")
        languages = _list(capabilities, "languages", "capabilities.")
        if not all(type(x) is str for x in payloads + languages):
            raise Unreadable("capabilities lists hold non-strings")
        sessions = _obj(d, "sessions", "")
        return Describe(_int(d, "protocol", ""), _str(d, "provider", ""), _tier(d, "tier", ""),
                        _tier(d, "claimed_tier", ""), _str(d, "environment", ""),
                        tuple(payloads), tuple(languages),
                        _bool(capabilities, "projects", "capabilities."),
                        _bool(sessions, "enabled", "sessions.")
                        and _bool(capabilities, "sessions", "capabilities."),
                        _bool(capabilities, "grants", "capabilities."), _limits(d, ""), d,
                        _images(d))
    result: Describe = _readable(sent_id, answer, 200, read)
    return result


def _identity(d: Mapping[str, Any]) -> Tuple[str, str, str, str, int, int, int]:
    session_id = _str(d, "session_id", "")
    if not _HEX32.fullmatch(session_id):
        raise Unreadable("session_id is not 32 lowercase hex digits")
    return (session_id, _str(d, "provider", ""), _tier(d, "isolation", ""),
            _str(d, "environment", ""), _int(d, "created_unix_ms", ""),
            _int(d, "expires_unix_ms", ""), _int(d, "idle_timeout_ms", ""))


def _session_image(d: Mapping[str, Any]) -> str:
    """The session's image name; "" when the answer names none."""
    image: Optional[str] = _opt(d, "image", str, "")
    return image or ""


def check_session_open_answer(sent: Mapping[str, Any], sent_id: str,
                              answer: Answer) -> SessionInfo:
    def read(d: Dict[str, Any]) -> SessionInfo:
        info = SessionInfo(*_identity(d), _limits(d, ""), _session_image(d))
        floor = sent.get("minimum_isolation") or ""
        if floor and not tier_meets(info.isolation, floor):
            raise Unreadable(f'the session\'s tier {info.isolation} does not meet the requested '
                             f'floor "{floor}"')
        environment = sent.get("environment") or ""
        if environment and info.environment != environment:
            raise Unreadable("the session's environment is not the one the request required")
        image = sent.get("image") or ""
        if image and info.image != image:
            raise Unreadable("the session's image is not the one the request named")
        return info
    result: SessionInfo = _readable(sent_id, answer, 201, read)
    return result


def check_session_state_answer(sent_id: str, answer: Answer, floor: str = "") -> SessionState:
    """GET /v1/sessions/{id}; ``floor`` is the one the session was opened with ("" for none)."""
    def read(d: Dict[str, Any]) -> SessionState:
        interpreters = _list(d, "interpreters", "")
        if not all(type(x) is str for x in interpreters):
            raise Unreadable("interpreters holds non-strings")
        return SessionState(*_identity(d), _int(d, "calls", ""), _bool(d, "busy", ""),
                            _bool(d, "queued", ""), _int(d, "last_used_unix_ms", ""),
                            _int(d, "disk_used_bytes", ""), _int(d, "disk_bytes", ""),
                            tuple(interpreters), _str(d, "last_record_sha256", ""),
                            _session_image(d))
    result: SessionState = _readable(sent_id, answer, 200, read)
    if floor and not tier_meets(result.isolation, floor):
        raise _lost(f"The session's state states tier {result.isolation}, which does not meet "
                    f'the floor "{floor}" the session was opened with: not believed.', sent_id,
                    answer.status)
    return result


def check_session_close_answer(sent_id: str, answer: Answer, chain: ChainState) -> SessionEnd:
    def read(d: Dict[str, Any]) -> SessionEnd:
        ended = _str(d, "ended", "")
        if ended not in _ENDS:
            raise Unreadable(f'ended "{_printable(ended)}" is not an end reason')
        return SessionEnd(ended, _int(d, "calls", ""), _str(d, "last_record_sha256", ""))
    end: SessionEnd = _readable(sent_id, answer, 200, read)
    if end.calls != chain.last_sequence or end.last_record_sha256 != chain.last_record_sha256:
        raise _lost(f"The session's close names {end.calls} calls ending in record "
                    f'"{_printable(end.last_record_sha256)}", but this client saw '
                    f'{chain.last_sequence} ending in "{chain.last_record_sha256}": a call\'s '
                    "answer was lost or is not this session's.", sent_id, answer.status)
    return end


def check_session_id(session_id: str) -> None:
    if not isinstance(session_id, str) or not _HEX32.fullmatch(session_id):
        raise bad_argument("A session ID is 32 lowercase hex digits, as open_session gave it.")
