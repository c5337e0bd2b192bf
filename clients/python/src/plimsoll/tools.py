"""What an agent framework's tool gets from plimsoll: one result shape, one code runner.

Every integration (ADK, Agno, CrewAI, the MCP server) hands the model the same dictionary
(SPEC §11, docs/integrations.md):

======================  ==============================================================
``ran``                 ``True``, ``False`` (nothing ran: see ``refused``) or ``"unknown"``
``refused``             the reason when nothing ran (``"isolation"``, ...), else absent
``summary``             one line for the model: ``"ran: exit 0"``, ``"nothing ran:
                        isolation"``, ``"unknown whether it ran: data_loss"``
``exit_code``           and ``timed_out``: a non-zero exit is a result, never an exception
``stdout``/``stderr``   at most 16 000 characters each; ``stdout_truncated`` /
                        ``stderr_truncated`` say whether the daemon or this cap cut them
``value``, ``displays`` a cell's printed value (absent when it has none) and its rich
                        outputs (none yet: a list, always present for cells)
``state_kept``          and ``interpreter_started``: session-backed calls only
``isolation``           the tier the code ran at; ``record_sha256`` its run record
``error``               the error's code and message when the call did not give a result
======================  ==============================================================

:class:`CodeRunner` is what the tools call: a snippet, or a snippet with input files (a project
payload: the files, the code as ``main.py`` / ``main.js``, one step that runs it), fresh per call
or in a session kept per conversation key. Its floor is ``container`` unless the operator gives
another, so a daemon that cannot meet it answers "nothing ran: isolation" instead of running
the model's code behind a weaker wall.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Mapping, Optional, Sequence, Union

from .client import Client, Pool, Session
from .errors import PlimsollError, Reason
from .results import Result

__all__ = ["DEFAULT_FLOOR", "OUTPUT_CAP_CHARS", "LANGUAGES", "tool_result", "error_result",
           "CodeRunner"]

#: The floor a tool asks for unless the operator sets one (SPEC §11).
DEFAULT_FLOOR = "container"
#: Each of stdout and stderr is cut to this many characters in a tool result.
OUTPUT_CAP_CHARS = 16_000
LANGUAGES = ("python", "javascript")

_ENTRY = {"python": ("main.py", "python3"), "javascript": ("main.js", "node")}
FileInput = Union[Mapping[str, Union[str, bytes]], Sequence[Mapping[str, Any]], None]


def _capped(text: str) -> tuple[str, bool]:
    if len(text) <= OUTPUT_CAP_CHARS:
        return text, False
    return text[:OUTPUT_CAP_CHARS], True


def tool_result(result: Result, *, session: bool = False) -> Dict[str, Any]:
    """The tool result of a call that ran (``ran: True``), whatever its exit code."""
    stdout, stdout_cut = _capped(result.stdout_text)
    stderr, stderr_cut = _capped(result.stderr_text)
    shaped: Dict[str, Any] = {
        "ran": True,
        "summary": f"ran: exit {result.exit_code}" + (" (timed out)" if result.timed_out else "")
                   + (" (killed for memory)" if result.killed_for_memory else ""),
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "stdout": stdout,
        "stdout_truncated": result.stdout_truncated or stdout_cut,
        "stderr": stderr,
        "stderr_truncated": result.stderr_truncated or stderr_cut,
        "isolation": result.isolation,
        "record_sha256": result.record.record_sha256,
    }
    if result.kind == "cell":
        if result.value is not None:
            shaped["value"] = result.value_text
        shaped["displays"] = []
    if session:
        shaped["state_kept"] = bool(result.state_kept)
        shaped["interpreter_started"] = bool(result.interpreter_started)
    return shaped


def error_result(error: PlimsollError) -> Dict[str, Any]:
    """The tool result of a call that gave no result: refused (``ran: False``) or unknown."""
    shaped: Dict[str, Any] = {"ran": error.ran,
                              "error": {"code": error.code, "message": error.message}}
    if error.not_dispatched is not None:
        shaped["refused"] = error.not_dispatched.value
        shaped["summary"] = f"nothing ran: {error.not_dispatched.value}"
    else:
        shaped["summary"] = f"unknown whether it ran: {error.code}"
    return shaped


def _files(files: FileInput) -> Dict[str, Union[str, bytes]]:
    if files is None:
        return {}
    if isinstance(files, Mapping):
        return dict(files)
    out: Dict[str, Union[str, bytes]] = {}
    for entry in files:
        out[str(entry["path"])] = entry["content"]
    return out


class CodeRunner:
    """Runs model-written code for a tool and shapes every outcome with :func:`tool_result`.

    ``target`` is a :class:`Client` or a :class:`Pool` (placement). With ``keep_sessions`` a call
    that names a ``key`` (a conversation) runs in that key's session, opened on first use and
    kept until :meth:`close_session` / :meth:`close`; cells keep their variables between calls.
    Never raises for what the sandbox did: refusals and unknown outcomes are results too.
    """

    def __init__(self, target: Union[Client, Pool], *, minimum_isolation: Optional[str] = None,
                 timeout_ms: Optional[int] = None, keep_sessions: bool = False) -> None:
        self._target = target
        self.minimum_isolation = minimum_isolation or DEFAULT_FLOOR
        self.timeout_ms = timeout_ms
        self.keep_sessions = keep_sessions
        self._sessions: Dict[str, Session] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"CodeRunner(floor={self.minimum_isolation!r}, "
                f"sessions={len(self._sessions)})")

    def run(self, language: str, code: str, files: FileInput = None,
            key: Optional[str] = None) -> Dict[str, Any]:
        """Runs ``code`` (``python`` or ``javascript``) with optional input ``files`` in /work."""
        if language not in LANGUAGES:
            return error_result(PlimsollError(
                "invalid_argument", f"language must be one of {', '.join(LANGUAGES)}",
                Reason.REQUEST))
        try:
            if self.keep_sessions and key is not None:
                return self._run_in_session(key, language, code, _files(files))
            return tool_result(self._run_fresh(language, code, _files(files)))
        except PlimsollError as error:
            return error_result(error)

    def _run_fresh(self, language: str, code: str,
                   files: Dict[str, Union[str, bytes]]) -> Result:
        options: Dict[str, Any] = {"minimum_isolation": self.minimum_isolation,
                                   "timeout_ms": self.timeout_ms}
        if not files:
            if language == "python":
                return self._target.run_python(code, **options)
            return self._target.run_javascript(code, **options)
        entry, program = _ENTRY[language]
        return self._target.run_project({**files, entry: code}, [[program, entry]], **options)

    def _run_in_session(self, key: str, language: str, code: str,
                        files: Dict[str, Union[str, bytes]]) -> Dict[str, Any]:
        session = self.session(key)
        if files:
            session.upload(files)
        return tool_result(session.run_cell(language, code, timeout_ms=self.timeout_ms),
                           session=True)

    def session(self, key: str) -> Session:
        """The session of conversation ``key``, opened at this runner's floor on first use."""
        with self._lock:
            existing = self._sessions.get(key)
        if existing is not None:
            return existing
        opened = self._target.open_session(minimum_isolation=self.minimum_isolation)
        with self._lock:
            kept = self._sessions.setdefault(key, opened)
        if kept is not opened:
            opened.close()
        return kept

    def close_session(self, key: str) -> Optional[Dict[str, Any]]:
        """Closes conversation ``key``'s session; its end (``ended``, ``calls``) or None."""
        with self._lock:
            session = self._sessions.pop(key, None)
        if session is None:
            return None
        try:
            end = session.close()
        except PlimsollError as error:
            return error_result(error)
        return {"ended": end.ended, "calls": end.calls,
                "last_record_sha256": end.last_record_sha256}

    def close(self) -> None:
        """Closes every kept session (errors are dropped: the daemon ends them anyway)."""
        with self._lock:
            keys = list(self._sessions)
        for key in keys:
            self.close_session(key)
