"""CrewAI: a tool that runs the model's code in plimsoll.

>>> from crewai import Agent                                       # doctest: +SKIP
>>> from plimsoll import Client
>>> from plimsoll.integrations.crewai import PlimsollRunCodeTool
>>> agent = Agent(role=..., goal=..., backstory=...,
...               tools=[PlimsollRunCodeTool(Client("http://127.0.0.1:8470"))])

The tool's arguments (``args_schema``, :class:`RunCodeInput`): ``language`` (``python`` or
``javascript``), ``code``, optional ``files`` (path to text, written to ``/work`` first: the
project payload) and optional ``session_key``: calls that name one run as cells in that key's
plimsoll session, whose interpreter keeps its variables (``keep_sessions=True``; :meth:`close`
ends them). It returns the JSON of one tool result (:mod:`plimsoll.tools`): ``ran``,
``refused``, ``summary``, ``exit_code``, capped ``stdout`` / ``stderr``, ``isolation``,
``record_sha256``... A non-zero exit is a result, never an exception. ``_arun`` runs the same
:class:`~plimsoll.tools.CodeRunner` in a worker thread. The floor is ``container`` unless
``minimum_isolation`` says otherwise.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, Literal, Optional, Type, Union

from crewai.tools import BaseTool  # type: ignore[import-not-found, unused-ignore]
from pydantic import BaseModel, Field, PrivateAttr  # type: ignore[import-not-found, unused-ignore]

from ..client import Client, Pool
from ..tools import CodeRunner

__all__ = ["PlimsollRunCodeTool", "RunCodeInput"]


class RunCodeInput(BaseModel):  # type: ignore[misc, unused-ignore]
    """The arguments the model gives the tool."""

    language: Literal["python", "javascript"] = Field(description="the program's language")
    code: str = Field(description="the program; print what you want to see")
    files: Optional[Dict[str, str]] = Field(
        default=None, description="input files, path to text, written to the working directory")
    session_key: Optional[str] = Field(
        default=None, description="run as a cell in this key's kept interpreter (variables "
                                  "survive between calls with the same key)")


class PlimsollRunCodeTool(BaseTool):  # type: ignore[misc, unused-ignore]
    """Runs code in plimsoll; ``target`` is a :class:`plimsoll.Client` or Pool."""

    name: str = "run_code"
    description: str = (
        "Runs Python or JavaScript in an isolated sandbox and returns JSON: 'ran' is true, "
        "false (nothing ran: 'refused' says why) or \"unknown\"; a non-zero 'exit_code' is the "
        "program's own failure. Give 'session_key' to keep variables between calls.")
    args_schema: Type[BaseModel] = RunCodeInput

    _runner: CodeRunner = PrivateAttr()

    def __init__(self, target: Union[Client, Pool], *, minimum_isolation: Optional[str] = None,
                 timeout_ms: Optional[int] = None, keep_sessions: bool = True,
                 **data: Any) -> None:
        super().__init__(**data)
        self._runner = CodeRunner(target, minimum_isolation=minimum_isolation,
                                  timeout_ms=timeout_ms, keep_sessions=keep_sessions)

    @property
    def runner(self) -> CodeRunner:
        return self._runner

    def _run(self, language: str, code: str, files: Optional[Dict[str, str]] = None,
             session_key: Optional[str] = None, **_: Any) -> str:
        return json.dumps(self._runner.run(language, code, files, key=session_key))

    async def _arun(self, language: str, code: str, files: Optional[Dict[str, str]] = None,
                    session_key: Optional[str] = None, **_: Any) -> str:
        return await asyncio.to_thread(self._run, language, code, files, session_key)

    def close_session(self, session_key: str) -> Optional[Dict[str, Any]]:
        """Ends one key's kept session (its end, or None)."""
        return self._runner.close_session(session_key)

    def close(self) -> None:
        """Ends every kept session."""
        self._runner.close()
