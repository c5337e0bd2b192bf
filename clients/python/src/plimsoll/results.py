"""Typed answers: frozen dataclasses built from checked wire answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional, Tuple

__all__ = ["Record", "Step", "Artifact", "Broker", "BrokerRoute", "Advice", "Display", "Result",
           "Describe", "Image", "ImagePackage", "SessionInfo", "SessionState", "SessionEnd",
           "TIERS", "tier_meets"]

#: Tier names from weakest to strongest; ``none`` and ``unknown`` meet no floor.
TIERS = ("none", "unknown", "process", "container", "kernel", "vm")
_RANK = {"process": 1, "container": 2, "kernel": 3, "vm": 4}


def tier_meets(tier: str, floor: str) -> bool:
    """Whether ``tier`` is at least ``floor`` (an empty floor is met by every tier)."""
    if not floor:
        return True
    wanted = _RANK.get(floor)
    return wanted is not None and _RANK.get(tier, 0) >= wanted


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class Record:
    """The run record (SPEC §5) that binds the request sent to the answer received."""

    version: int
    request_sha256: str
    result_sha256: str
    provider: str
    isolation: str
    environment: str
    policy: str
    started_unix_ms: int
    ended_unix_ms: int
    record_sha256: str
    session: Optional[str] = None
    sequence: Optional[int] = None
    previous_sha256: Optional[str] = None


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a project run."""

    command: Tuple[str, ...]
    exit_code: int
    timed_out: bool
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    duration_ms: int

    @property
    def stdout_text(self) -> str:
        return _text(self.stdout)

    @property
    def stderr_text(self) -> str:
        return _text(self.stderr)


@dataclass(frozen=True, slots=True)
class Artifact:
    """A file a project run brought back (``truncated`` when cut at the daemon's cap)."""

    path: str
    content: bytes
    truncated: bool

    @property
    def content_text(self) -> str:
        return _text(self.content)


@dataclass(frozen=True, slots=True)
class BrokerRoute:
    """One row of a granted run's call trace: how many calls had this method, route template,
    status and verdict (never a concrete path).

    ``method`` is GET, HEAD, POST, PUT, PATCH, DELETE or OTHER; ``route`` the matching template
    (``""`` when none matched); ``status`` the upstream's HTTP status (0 when it gave none);
    ``reason`` is ``""`` or why the broker refused (``not_allowed``, ``bad_path``, ``max_calls``,
    ``route_max_calls``, ``circuit_open``, ``body_too_large``, ``upstream_timeout``,
    ``upstream_error``).
    """

    method: str
    route: str
    status: int
    allowed: bool
    reason: str
    count: int


@dataclass(frozen=True, slots=True)
class Broker:
    """The broker call summary of a granted run.

    ``routes`` holds at most 256 rows, sorted by (method, route, status, allowed, reason);
    ``routes_dropped`` counts the distinct rows left out (the least frequent).
    """

    profile: str
    calls: int
    denied: int
    routes: Tuple[BrokerRoute, ...] = ()
    routes_dropped: int = 0


@dataclass(frozen=True, slots=True)
class Advice:
    """One advisor finding."""

    pattern: str
    route: str
    message: str
    extra_calls: int
    added_latency_ms: float
    bytes: int


@dataclass(frozen=True, slots=True)
class Display:
    """A rich output of a run or cell (SPEC §7): a figure (``image/png``), a displayed table
    (``text/html``, then ``text/plain``), or what JavaScript's ``display()`` was given.

    ``width`` and ``height`` are pixels, for images only (``None`` when the daemon sent none).
    """

    mime: str
    data: bytes
    width: Optional[int] = None
    height: Optional[int] = None

    @property
    def data_text(self) -> str:
        return _text(self.data)


@dataclass(frozen=True, slots=True)
class Result:
    """What a run did and where it ran. A non-zero exit code is a result, never an error."""

    exit_code: int
    timed_out: bool
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    duration_ms: int
    provider: str
    isolation: str
    environment: str
    kind: str
    record: Record
    outcome: Optional[str] = None
    steps: Tuple[Step, ...] = ()
    artifacts: Tuple[Artifact, ...] = ()
    value: Optional[bytes] = None
    value_truncated: Optional[bool] = None
    interpreter_started: Optional[bool] = None
    state_kept: Optional[bool] = None
    broker: Optional[Broker] = None
    advice: Tuple[Advice, ...] = ()
    #: Rich outputs in the order they were shown; ``displays_truncated`` when the daemon's caps
    #: dropped some.
    displays: Tuple[Display, ...] = ()
    displays_truncated: bool = False

    @property
    def ran(self) -> Literal[True]:
        """Always ``True``: a result means the code ran."""
        return True

    @property
    def killed_for_memory(self) -> bool:
        """Exit code 137: the run was killed at its memory bound."""
        return self.exit_code == 137

    @property
    def stdout_text(self) -> str:
        return _text(self.stdout)

    @property
    def stderr_text(self) -> str:
        return _text(self.stderr)

    @property
    def value_text(self) -> Optional[str]:
        return None if self.value is None else _text(self.value)


@dataclass(frozen=True, slots=True)
class ImagePackage:
    """A package an image carries, as its own package records list it."""

    name: str
    version: str
    source: str  # "debian", "python" or "npm"


@dataclass(frozen=True, slots=True)
class Image:
    """One of the images a daemon serves (SPEC §7); a request names it with ``image``."""

    name: str
    default: bool  # what a request naming no image runs on
    environment: str  # the image's identity, as ``environment`` pins it
    tier: str  # what its evidence proves now (never above the claim)
    confirmed: bool  # its evidence monitor's verdict
    languages: Tuple[str, ...]
    packages: Tuple[ImagePackage, ...]


@dataclass(frozen=True, slots=True)
class Describe:
    """What a daemon runs and how strong its wall is (``GET /v1/describe``)."""

    protocol: int
    provider: str
    tier: str
    claimed_tier: str
    environment: str
    payloads: Tuple[str, ...]
    languages: Tuple[str, ...]
    projects: bool
    sessions: bool
    grants: bool
    limits: Mapping[str, int]
    raw: Mapping[str, Any] = field(repr=False, compare=False)
    #: The images the daemon serves, the default first (SPEC §7); the fields above are the
    #: default image's. Empty from a daemon that does not list them.
    images: Tuple[Image, ...] = ()


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session as opened (``POST /v1/sessions``). The ID is a bearer secret: not in repr."""

    session_id: str = field(repr=False)
    provider: str
    isolation: str
    environment: str
    created_unix_ms: int
    expires_unix_ms: int
    idle_timeout_ms: int
    limits: Mapping[str, int] = field(repr=False)
    image: str = ""  # the name of the image the session runs on ("" when the answer names none)


@dataclass(frozen=True, slots=True)
class SessionState:
    """A session's state (``GET /v1/sessions/{id}``)."""

    session_id: str = field(repr=False)
    provider: str
    isolation: str
    environment: str
    created_unix_ms: int
    expires_unix_ms: int
    idle_timeout_ms: int
    calls: int
    busy: bool
    queued: bool
    last_used_unix_ms: int
    disk_used_bytes: int
    disk_bytes: int
    interpreters: Tuple[str, ...]
    last_record_sha256: str
    image: str = ""  # the name of the image the session runs on ("" when the answer names none)


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """How a session ended (``DELETE /v1/sessions/{id}``)."""

    ended: str
    calls: int
    last_record_sha256: str
