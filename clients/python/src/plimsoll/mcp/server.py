"""plimsoll as an MCP server: any MCP client can run code in plimsoll as a tool.

Built on the official Python MCP SDK (``mcp`` 2.x, its high-level ``MCPServer``), served over
stdio or streamable HTTP (``python -m plimsoll.mcp --transport stdio|http``). Every tool answers
with structured content and publishes its output schema; a run's result is the one tool-result
shape of :mod:`plimsoll.tools` (SPEC §11), made by its :class:`~plimsoll.tools.CodeRunner`.

Tools: ``run_code`` (a fresh sandbox per call), ``open_session`` / ``run_cell`` /
``close_session`` (one sandbox kept across calls, its variables too) and ``describe``.

A plimsoll session belongs to the MCP session that opened it: its handle means nothing in any
other MCP session, and it is closed when its MCP session ends (the client hangs up, an HTTP
client's DELETE, the SDK's idle timeout) and at server shutdown. Each MCP session has its own
:class:`~plimsoll.Client`, so one session's long run does not hold up another's. The stateless
protocol revision (2026-07-28) has no MCP session: over stdio the one client process stands for
it (its sessions close when stdin closes); over HTTP ``open_session`` is refused, ``run_code``
and ``describe`` work as ever.

The daemon's address and token come from the operator (``PLIMSOLL_URL``, ``PLIMSOLL_TOKEN``), never
from the model, and the token is never printed. The floor is ``container`` unless the operator
sets another (``PLIMSOLL_MCP_FLOOR`` or ``--floor``); a model may ask ``run_code`` for a stronger
floor, never a weaker one.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Optional, Union, cast

import anyio.to_thread  # type: ignore[import-not-found, unused-ignore]
from typing_extensions import NotRequired, TypedDict

from mcp.server.mcpserver import Context, MCPServer  # type: ignore[import-not-found, unused-ignore]
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # type: ignore[import-not-found, unused-ignore]
from pydantic import Field  # type: ignore[import-not-found, unused-ignore]
from typing_extensions import Annotated

from .. import __version__
from ..client import Client
from ..errors import PlimsollError, Reason
from ..results import tier_meets
from ..tools import DEFAULT_FLOOR, CodeRunner, error_result

__all__ = ["PlimsollMCP", "RunResult", "SessionOpened", "SessionClosed", "DaemonDescription",
           "SERVER_NAME"]

SERVER_NAME = "plimsoll"
#: The tiers a floor may name (``none`` and ``unknown`` are what a daemon may report, not floors).
FLOORS = ("process", "container", "kernel", "vm")
Language = Literal["python", "javascript"]
Floor = Literal["process", "container", "kernel", "vm"]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
_STATE_KEY = "plimsoll.mcp"

INSTRUCTIONS = (
    "Runs code in plimsoll, a sandbox. run_code runs a snippet in a fresh sandbox; open_session, "
    "run_cell and close_session keep one sandbox (and its variables) across calls. Every result "
    "says whether the code ran: ran true (exit_code, stdout, stderr), ran false (nothing ran: "
    "refused says why, e.g. isolation when the sandbox is weaker than the floor), or ran "
    "\"unknown\". A non-zero exit code is a result, not a failure of the tool.")


class ToolErrorInfo(TypedDict):
    """Why a call gave no result: the daemon's (or this server's) error code and message."""

    code: str
    message: str


class InputFile(TypedDict):
    """One input file, written under /work before the code runs."""

    path: Annotated[str, Field(description="a path relative to /work, e.g. data/input.csv")]
    content: Annotated[str, Field(description="the file's text")]


class RunResult(TypedDict):
    """The one tool-result shape (SPEC §11, plimsoll.tools)."""

    ran: Annotated[Union[bool, Literal["unknown"]], Field(
        description="true: it ran (see exit_code); false: nothing ran (see refused); "
                    "\"unknown\": whether it ran is not known")]
    summary: Annotated[str, Field(description="one line: 'ran: exit 0', 'nothing ran: isolation'")]
    refused: NotRequired[Annotated[str, Field(description="why nothing ran (ran false)")]]
    error: NotRequired[ToolErrorInfo]
    exit_code: NotRequired[int]
    timed_out: NotRequired[bool]
    stdout: NotRequired[Annotated[str, Field(description="at most 16000 characters")]]
    stdout_truncated: NotRequired[bool]
    stderr: NotRequired[Annotated[str, Field(description="at most 16000 characters")]]
    stderr_truncated: NotRequired[bool]
    value: NotRequired[Annotated[str, Field(description="a cell's value, when it has one")]]
    displays: NotRequired[List[Dict[str, Any]]]
    isolation: NotRequired[Annotated[str, Field(description="the tier the code ran at")]]
    record_sha256: NotRequired[Annotated[str, Field(description="the digest of its run record")]]
    state_kept: NotRequired[Annotated[bool, Field(
        description="session cells: the session's earlier state was still there")]]
    interpreter_started: NotRequired[Annotated[bool, Field(
        description="session cells: a fresh interpreter was started for this cell")]]


class SessionOpened(TypedDict):
    """What ``open_session`` gives: the handle for run_cell / close_session, or why not."""

    opened: bool
    summary: str
    session_id: NotRequired[Annotated[str, Field(
        description="this MCP session's handle for the sandbox session (not the daemon's ID)")]]
    isolation: NotRequired[str]
    provider: NotRequired[str]
    ran: NotRequired[Union[bool, Literal["unknown"]]]
    refused: NotRequired[str]
    error: NotRequired[ToolErrorInfo]


class SessionClosed(TypedDict):
    """What ``close_session`` gives: how the session ended, or why it could not be closed."""

    closed: bool
    summary: str
    ended: NotRequired[str]
    calls: NotRequired[int]
    last_record_sha256: NotRequired[str]
    error: NotRequired[ToolErrorInfo]


class DaemonDescription(TypedDict):
    """What ``describe`` gives: the daemon's wall and what it runs, against this server's floor."""

    reachable: bool
    floor: Annotated[str, Field(description="the floor this server asks for unless raised")]
    summary: str
    provider: NotRequired[str]
    tier: NotRequired[str]
    meets_floor: NotRequired[bool]
    languages: NotRequired[List[str]]
    sessions: NotRequired[bool]
    projects: NotRequired[bool]
    error: NotRequired[ToolErrorInfo]


@dataclass
class _Binding:
    """What one MCP session owns: its own client and runner, and its open sandbox sessions."""

    client: Client
    runner: CodeRunner
    handles: Dict[str, str] = field(default_factory=dict)  # handle -> provider
    closed: bool = False
    sessions: bool = True  # False: no MCP session to bind a sandbox session to

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.runner.close()
        self.handles.clear()
        self.client.close()


def _stronger(floor: str, asked: Optional[str]) -> str:
    """The stronger of the operator's floor and the one a tool call asked for."""
    if asked and not tier_meets(floor, asked):
        return asked
    return floor


def _refusal(code: str, message: str) -> Dict[str, Any]:
    return error_result(PlimsollError(code, message, Reason.REQUEST))


class PlimsollMCP:
    """The MCP server: an ``MCPServer`` with plimsoll's five tools, bound to one daemon.

    ``url`` and ``token`` are the daemon's (``token`` defaults to ``PLIMSOLL_TOKEN``, as for
    :class:`~plimsoll.Client`). ``floor`` is the operator's minimum isolation (``container``
    unless given). ``client_options`` go to each MCP session's :class:`~plimsoll.Client`.
    """

    def __init__(self, url: str, *, token: Optional[str] = None, floor: Optional[str] = None,
                 transport: Literal["stdio", "http"] = "stdio",
                 timeout_ms: Optional[int] = None, log_level: LogLevel = "WARNING",
                 **client_options: Any) -> None:
        self.floor = floor or DEFAULT_FLOOR
        if self.floor not in FLOORS:
            raise ValueError(f"floor must be one of {', '.join(FLOORS)}")
        self.timeout_ms = timeout_ms
        self.log_level = log_level
        self._url = url
        self._token = token
        self._client_options = client_options
        # The URL and options are checked now, not at the first tool call.
        Client(url, token=token, **client_options).close()
        self.transport = transport
        self._live: Dict[int, _Binding] = {}
        self._stateless: Optional[_Binding] = None
        self._lock = threading.Lock()
        self.server: Any = MCPServer(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS,
                                          log_level=log_level)
        self._register()

    def __repr__(self) -> str:
        return f"PlimsollMCP(floor={self.floor!r}, mcp_sessions={len(self._live)})"

    @property
    def open_mcp_sessions(self) -> int:
        """How many MCP sessions currently hold a client (and maybe sandbox sessions)."""
        return len(self._live)

    # -- binding to the MCP session ---------------------------------------------------------

    def _new_binding(self) -> _Binding:
        client = Client(self._url, token=self._token, **self._client_options)
        runner = CodeRunner(client, minimum_isolation=self.floor, timeout_ms=self.timeout_ms,
                            keep_sessions=True)
        return _Binding(client, runner)

    def _binding(self, ctx: Any) -> _Binding:
        """This MCP session's binding, made on its first tool call.

        The SDK keeps one ``Connection`` per MCP session (a stdio connection, a stateful
        streamable-HTTP session), with per-connection ``state`` and an ``exit_stack`` that it
        unwinds when that session ends: the binding lives in the one and its close is pushed
        on the other.
        """
        session = ctx.request_context.session
        if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self._stateless_binding()
        connection = session._connection
        binding = connection.state.get(_STATE_KEY)
        if isinstance(binding, _Binding):
            return binding
        made = self._new_binding()
        connection.state[_STATE_KEY] = made
        with self._lock:
            self._live[id(made)] = made
        connection.exit_stack.push_async_callback(self._end, made)
        return made

    def _stateless_binding(self) -> _Binding:
        """2026-07-28 requests carry no MCP session: one binding stands for them all.

        Over stdio that is the one client at the other end of the pipe, so its sessions work
        and close with the server; over HTTP anyone may send the next request, so
        ``open_session`` refuses there (``_Binding.sessions`` is false).
        """
        if self._stateless is None:
            made = self._new_binding()
            made.sessions = self.transport == "stdio"
            with self._lock:
                self._live[id(made)] = made
            self._stateless = made
        return self._stateless

    async def _end(self, binding: _Binding) -> None:
        """The MCP session ended: close its sandbox sessions (off the event loop)."""
        await anyio.to_thread.run_sync(self._close_binding, binding)

    def _close_binding(self, binding: _Binding) -> None:
        with self._lock:
            self._live.pop(id(binding), None)
        binding.close()

    def close(self) -> None:
        """Closes every MCP session's sandbox sessions (server shutdown)."""
        with self._lock:
            bindings = list(self._live.values())
            self._live.clear()
        for binding in bindings:
            binding.close()

    # -- the tools --------------------------------------------------------------------------

    def run_code(self, binding: _Binding, language: str, code: str,
                 files: Optional[List[InputFile]], floor: Optional[str]) -> RunResult:
        runner = CodeRunner(binding.client, minimum_isolation=_stronger(self.floor, floor),
                            timeout_ms=self.timeout_ms)
        return cast(RunResult, runner.run(language, code, _file_list(files)))

    def open_session(self, binding: _Binding) -> SessionOpened:
        if not binding.sessions:
            return cast(SessionOpened, {"opened": False, **_refusal(
                "failed_precondition", "this MCP connection has no session to keep a sandbox "
                "session in (stateless HTTP): use run_code")})
        handle = "s-" + secrets.token_hex(12)
        try:
            session = binding.runner.session(handle)
        except PlimsollError as error:
            return cast(SessionOpened, {"opened": False, **error_result(error)})
        binding.handles[handle] = session.opened.provider
        return {"opened": True, "session_id": handle, "isolation": session.opened.isolation,
                "provider": session.opened.provider,
                "summary": f"session open at isolation {session.opened.isolation}"}

    def run_cell(self, binding: _Binding, session_id: str, language: str, code: str,
                 files: Optional[List[InputFile]]) -> RunResult:
        if session_id not in binding.handles:
            return cast(RunResult, _refusal(
                "not_found", "no such session in this MCP session (open one with open_session)"))
        return cast(RunResult, binding.runner.run(language, code, _file_list(files),
                                                  key=session_id))

    def close_session(self, binding: _Binding, session_id: str) -> SessionClosed:
        if binding.handles.pop(session_id, None) is None:
            return {"closed": False, "summary": "no such session in this MCP session",
                    "error": {"code": "not_found",
                              "message": "no such session in this MCP session"}}
        end = binding.runner.close_session(session_id)
        if end is None or "ended" not in end:
            shaped = end or {}
            return cast(SessionClosed, {"closed": False, "summary": shaped.get(
                "summary", "the session could not be closed"), **(
                {"error": shaped["error"]} if "error" in shaped else {})})
        return {"closed": True, "ended": str(end["ended"]), "calls": int(end["calls"]),
                "last_record_sha256": str(end["last_record_sha256"]),
                "summary": f"session {end['ended']} after {end['calls']} calls"}

    def describe(self, binding: _Binding) -> DaemonDescription:
        try:
            described = binding.client.describe()
        except PlimsollError as error:
            return {"reachable": False, "floor": self.floor,
                    "summary": f"the daemon did not answer: {error.code}",
                    "error": {"code": error.code, "message": error.message}}
        meets = tier_meets(described.tier, self.floor)
        return {"reachable": True, "floor": self.floor, "provider": described.provider,
                "tier": described.tier, "meets_floor": meets,
                "languages": list(described.languages), "sessions": described.sessions,
                "projects": described.projects,
                "summary": (f"{described.provider} at tier {described.tier}: "
                            + ("meets" if meets else "below") + f" the floor {self.floor}")}

    def _register(self) -> None:
        server = self.server

        async def run_code(
                language: Annotated[Language, Field(description="python or javascript")],
                code: Annotated[str, Field(description="the program to run")],
                ctx: Context,
                files: Annotated[Optional[List[InputFile]], Field(
                    description="input files, written under /work first")] = None,
                floor: Annotated[Optional[Floor], Field(
                    description="a stronger floor than the server's, if wanted")] = None,
        ) -> RunResult:
            binding = self._binding(ctx)
            result: RunResult = await anyio.to_thread.run_sync(
                lambda: self.run_code(binding, language, code, files, floor))
            return result

        async def open_session(ctx: Context) -> SessionOpened:
            binding = self._binding(ctx)
            result: SessionOpened = await anyio.to_thread.run_sync(
                lambda: self.open_session(binding))
            return result

        async def run_cell(
                session_id: Annotated[str, Field(description="the handle open_session gave")],
                language: Annotated[Language, Field(description="python or javascript")],
                code: Annotated[str, Field(description="the cell to run")],
                ctx: Context,
                files: Annotated[Optional[List[InputFile]], Field(
                    description="files written into the session's /work first")] = None,
        ) -> RunResult:
            binding = self._binding(ctx)
            result: RunResult = await anyio.to_thread.run_sync(
                lambda: self.run_cell(binding, session_id, language, code, files))
            return result

        async def close_session(
                session_id: Annotated[str, Field(description="the handle open_session gave")],
                ctx: Context) -> SessionClosed:
            binding = self._binding(ctx)
            result: SessionClosed = await anyio.to_thread.run_sync(
                lambda: self.close_session(binding, session_id))
            return result

        async def describe(ctx: Context) -> DaemonDescription:
            binding = self._binding(ctx)
            result: DaemonDescription = await anyio.to_thread.run_sync(
                lambda: self.describe(binding))
            return result

        server.add_tool(run_code, name="run_code", title="Run code in a sandbox", description=(
            "Runs a python or javascript program in a fresh plimsoll sandbox, with optional "
            "input files in /work. Says whether it ran, its exit code and capped outputs."),
            structured_output=True)
        server.add_tool(open_session, name="open_session", title="Open a sandbox session",
                        description=("Opens a sandbox kept across run_cell calls (variables "
                                     "survive between cells). Close it with close_session."),
                        structured_output=True)
        server.add_tool(run_cell, name="run_cell", title="Run a cell in a session", description=(
            "Runs a python or javascript cell in an open session; its variables stay for the "
            "next cell. Gives the cell's value, outputs and whether state was kept."),
            structured_output=True)
        server.add_tool(close_session, name="close_session", title="Close a sandbox session",
                        description="Closes a session that open_session opened.",
                        structured_output=True)
        server.add_tool(describe, name="describe", title="Describe the sandbox", description=(
            "Which provider and isolation tier the sandbox has, whether it meets this server's "
            "floor, and what it runs."), structured_output=True)


def _file_list(files: Optional[List[InputFile]]) -> Optional[List[Dict[str, Any]]]:
    if not files:
        return None
    return [{"path": entry["path"], "content": entry["content"]} for entry in files]

