# mypy: ignore-missing-imports, allow-subclassing-any
"""Google ADK: a code executor that runs the model's code in plimsoll.

>>> from google.adk.agents import LlmAgent                      # doctest: +SKIP
>>> from plimsoll import Client
>>> from plimsoll.integrations.adk import PlimsollCodeExecutor
>>> executor = PlimsollCodeExecutor(Client("http://127.0.0.1:8470"), stateful=True)
>>> agent = LlmAgent(name="calc", model="...", code_executor=executor)

ADK extracts a code block from the model's answer, calls :meth:`PlimsollCodeExecutor.
execute_code` and shows the model ``stdout`` as "Code execution result", or ``stderr`` as a
failed execution: ADK treats *any* stderr as failure (and counts it towards
``error_retry_attempts``). So ``stderr`` is set only when the run failed: a non-zero exit, a
timeout, or nothing ran ("nothing ran: isolation"); a run that exited 0 with warnings on stderr
is a success whose warnings are shown after the output. ``exit_code`` is ``None`` when nothing
ran or the outcome is unknown.

``stateful=True`` keeps one plimsoll session per ADK execution ID (the ADK session's ID), so
variables survive between code blocks; :meth:`close` ends them. Input files (ADK ``File``,
content base64 text or raw bytes) are written to ``/work`` through the project payload, and
the paths in ``output_files`` are read back from ``/work`` after a run and handed to ADK,
which saves them as artifacts.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import uuid
from typing import Any, Dict, List, Optional, Union

# The ignores are for a type check without the framework (the client's own run-tests).
from google.adk.code_executors.base_code_executor import (  # type: ignore[import-not-found, unused-ignore]
    BaseCodeExecutor)
from google.adk.code_executors.code_execution_utils import (  # type: ignore[import-not-found, unused-ignore]
    CodeExecutionInput, CodeExecutionResult, File)
from pydantic import PrivateAttr  # type: ignore[import-not-found, unused-ignore]

from ..client import Client, Pool
from ..errors import PlimsollError
from ..tools import LANGUAGES, CodeRunner

__all__ = ["PlimsollCodeExecutor", "to_execution_result"]

_DELIMITERS = {
    "python": [("```tool_code\n", "\n```"), ("```python\n", "\n```")],
    "javascript": [("```javascript\n", "\n```"), ("```js\n", "\n```")],
}


def _content(file: File) -> Union[str, bytes]:
    # ADK's own rule (get_content_as_bytes): text is base64, bytes are the content.
    content: Union[str, bytes] = file.content
    if isinstance(content, bytes):
        return content
    try:
        return base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError):
        return content


def to_execution_result(shaped: Dict[str, Any],
                        output_files: Optional[List[File]] = None) -> CodeExecutionResult:
    """ADK's result of one tool result (:mod:`plimsoll.tools`): stderr only for a failure."""
    files = list(output_files or [])
    if shaped["ran"] is not True:
        return CodeExecutionResult(stdout="", stderr=str(shaped["summary"]),
                                   output_files=files, exit_code=None)
    stdout = str(shaped["stdout"])
    stderr = str(shaped["stderr"])
    exit_code = int(shaped["exit_code"])
    if "value" in shaped:  # a cell's value, shown the way a notebook shows it: after the output
        stdout += ("" if not stdout or stdout.endswith("\n") else "\n") + str(shaped["value"])
    if shaped["stdout_truncated"]:
        stdout += "\n[stdout truncated]"
    if exit_code == 0 and not shaped["timed_out"]:
        if stderr:
            stdout += "\n[stderr of a run that exited 0]\n" + stderr
        return CodeExecutionResult(stdout=stdout, stderr="", output_files=files,
                                   exit_code=0)
    failure = stderr or f"the code exited with status {exit_code}"
    if shaped["timed_out"]:
        failure += "\n[timed out]"
    return CodeExecutionResult(stdout=stdout, stderr=f"{failure}\n[{shaped['summary']}]",
                               output_files=files, exit_code=exit_code)


class PlimsollCodeExecutor(BaseCodeExecutor):
    """Runs ADK's code blocks in plimsoll, at ``minimum_isolation`` (``container`` unless set).

    ``target`` is a :class:`plimsoll.Client` or :class:`plimsoll.Pool`. ``language`` is
    ``python`` (ADK's code blocks) or ``javascript`` (blocks fenced ``javascript`` / ``js``).
    """

    language: str = "python"
    minimum_isolation: Optional[str] = None
    output_files: List[str] = []

    _runner: CodeRunner = PrivateAttr()

    def __init__(self, target: Union[Client, Pool], **data: Any) -> None:
        if data.get("language", "python") not in LANGUAGES:
            raise ValueError(f"language must be one of {', '.join(LANGUAGES)}")
        if "code_block_delimiters" not in data:
            data["code_block_delimiters"] = _DELIMITERS[data.get("language", "python")]
        super().__init__(**data)
        timeout = self.timeout_seconds
        self._runner = CodeRunner(target, minimum_isolation=self.minimum_isolation,
                                  timeout_ms=None if timeout is None else int(timeout) * 1000,
                                  keep_sessions=True)
        self.minimum_isolation = self._runner.minimum_isolation

    def __deepcopy__(self, memo: Optional[Dict[int, Any]] = None) -> "PlimsollCodeExecutor":
        # An agent copied by ADK shares the executor: its runner holds connections and sessions.
        return self

    @property
    def runner(self) -> CodeRunner:
        return self._runner

    def execute_code(self, invocation_context: Any,
                     code_execution_input: CodeExecutionInput) -> CodeExecutionResult:
        key: Optional[str] = None
        throwaway = False
        if self.stateful:
            key = code_execution_input.execution_id or invocation_context.session.id
        elif self.output_files:
            key, throwaway = f"adk-once-{uuid.uuid4().hex}", True
        files = {f.name: _content(f) for f in code_execution_input.input_files}
        try:
            shaped = self._runner.run(self.language, code_execution_input.code, files or None,
                                      key=key)
            outputs: List[File] = []
            if key is not None and shaped["ran"] is True and self.output_files:
                outputs, note = self._collect(key)
                if note:
                    shaped = {**shaped, "stdout": str(shaped["stdout"]) + note}
        finally:
            if throwaway and key is not None:
                self._runner.close_session(key)
        return to_execution_result(shaped, outputs)

    def _collect(self, key: str) -> tuple[List[File], str]:
        try:
            artifacts = self._runner.session(key).download(self.output_files)
        except PlimsollError as error:
            return [], f"\n[output files not read back: {error.code}: {error.message}]"
        files: List[File] = []
        cut: List[str] = []
        for artifact in artifacts:
            mime = mimetypes.guess_type(artifact.path)[0] or "application/octet-stream"
            files.append(File(name=artifact.path, content=artifact.content, mime_type=mime))
            if artifact.truncated:
                cut.append(artifact.path)
        return files, (f"\n[output files cut at the daemon's cap: {', '.join(cut)}]"
                       if cut else "")

    def close_session(self, execution_id: str) -> Optional[Dict[str, Any]]:
        """Ends the plimsoll session of one ADK execution ID (its end, or None)."""
        return self._runner.close_session(execution_id)

    def close(self) -> None:
        """Ends every kept session."""
        self._runner.close()
