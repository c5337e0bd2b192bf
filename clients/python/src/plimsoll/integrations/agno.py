"""Agno: a toolkit that runs the model's code in plimsoll.

>>> from agno.agent import Agent                                   # doctest: +SKIP
>>> from plimsoll import Client
>>> from plimsoll.integrations.agno import PlimsollTools
>>> agent = Agent(model=..., tools=[PlimsollTools(Client("http://127.0.0.1:8470"))])

Tools (each sync, with an async twin Agno picks in ``arun``):

* ``run_code(language, code, input_files)``: a fresh sandbox per call; ``input_files`` (path
  to text; Agno reserves the name ``files`` for its media) are written to ``/work`` first
  (the project payload).
* ``run_cell(language, code)`` and ``close_session()``: a plimsoll session per Agno session
  (``run_context.session_id``), whose interpreters keep their variables between cells; left
  out with ``sessions=False``.

Each returns the JSON of one tool result (:mod:`plimsoll.tools`): ``ran``, ``refused``,
``summary``, ``exit_code``, capped ``stdout`` / ``stderr``, ``isolation``, ``record_sha256``...
A non-zero exit is a result; nothing raises for what the sandbox did. The floor is
``container`` unless ``minimum_isolation`` says otherwise. The async tools run the same
:class:`~plimsoll.tools.CodeRunner` in a worker thread.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from agno.run import RunContext  # type: ignore[import-not-found, unused-ignore]
from agno.tools import Toolkit  # type: ignore[import-not-found, unused-ignore]

from ..client import Client, Pool
from ..tools import CodeRunner

__all__ = ["PlimsollTools"]

INSTRUCTIONS = (
    "run_code runs Python or JavaScript in an isolated sandbox (a fresh one per call; files are "
    "written to the working directory first). run_cell runs code in this conversation's kept "
    "interpreter, so variables survive between calls; close_session ends it. Each returns JSON: "
    "'ran' is true, false (nothing ran: 'refused' says why) or \"unknown\"; a non-zero "
    "'exit_code' is the program's own failure.")


def _json(shaped: Optional[Dict[str, Any]]) -> str:
    return json.dumps(shaped if shaped is not None else {"ended": False, "calls": 0})


class PlimsollTools(Toolkit):  # type: ignore[misc, unused-ignore]
    """plimsoll's tools for an Agno agent; ``target`` is a :class:`plimsoll.Client` or Pool."""

    def __init__(self, target: Union[Client, Pool], *, minimum_isolation: Optional[str] = None,
                 timeout_ms: Optional[int] = None, sessions: bool = True,
                 **kwargs: Any) -> None:
        self.runner = CodeRunner(target, minimum_isolation=minimum_isolation,
                                 timeout_ms=timeout_ms, keep_sessions=sessions)
        tools: List[Callable[..., Any]] = [self.run_code]
        async_tools: List[Tuple[Callable[..., Any], str]] = [(self.arun_code, "run_code")]
        if sessions:
            tools += [self.run_cell, self.close_session]
            async_tools += [(self.arun_cell, "run_cell"), (self.aclose_session, "close_session")]
        kwargs.setdefault("name", "plimsoll_tools")
        kwargs.setdefault("instructions", INSTRUCTIONS)
        kwargs.setdefault("add_instructions", True)
        super().__init__(tools=tools, async_tools=async_tools, **kwargs)

    def run_code(self, language: str, code: str,
                 input_files: Optional[Dict[str, str]] = None) -> str:
        """Runs code in a fresh isolated sandbox and returns the result as JSON.

        Args:
            language: "python" or "javascript".
            code: the program to run; print what you want to see.
            input_files: optional input files, path to text, written to the working
                directory first.
        """
        return json.dumps(self.runner.run(language, code, input_files))

    async def arun_code(self, language: str, code: str,
                        input_files: Optional[Dict[str, str]] = None) -> str:
        """Runs code in a fresh isolated sandbox and returns the result as JSON.

        Args:
            language: "python" or "javascript".
            code: the program to run; print what you want to see.
            input_files: optional input files, path to text, written to the working
                directory first.
        """
        return await asyncio.to_thread(self.run_code, language, code, input_files)

    def run_cell(self, run_context: RunContext, language: str, code: str) -> str:
        """Runs code in this conversation's kept interpreter (variables survive between calls).

        Args:
            language: "python" or "javascript".
            code: the cell; its last expression's value is returned as "value".
        """
        return json.dumps(self.runner.run(language, code, key=_key(run_context)))

    async def arun_cell(self, run_context: RunContext, language: str, code: str) -> str:
        """Runs code in this conversation's kept interpreter (variables survive between calls).

        Args:
            language: "python" or "javascript".
            code: the cell; its last expression's value is returned as "value".
        """
        return await asyncio.to_thread(self.run_cell, run_context, language, code)

    def close_session(self, run_context: RunContext) -> str:
        """Ends this conversation's kept interpreters; returns JSON with 'ended' and 'calls'."""
        return _json(self.runner.close_session(_key(run_context)))

    async def aclose_session(self, run_context: RunContext) -> str:
        """Ends this conversation's kept interpreters; returns JSON with 'ended' and 'calls'."""
        return await asyncio.to_thread(self.close_session, run_context)

    def close(self) -> None:
        """Ends every kept session."""
        self.runner.close()


def _key(run_context: Any) -> str:
    return str(getattr(run_context, "session_id", None) or "default")
