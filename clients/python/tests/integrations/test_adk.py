"""plimsoll.integrations.adk against google-adk and real daemons (tests/clients/README.md).

The way ADK tests its own executors (a real InvocationContext over mocked agent, session and
session service), and through an InMemoryRunner whose model is a scripted BaseLlm: it answers
with a code block, ADK runs it in plimsoll, and the model's next request holds the result.
Embedded (tier process, JavaScript only) for most checks; linux for Python and files.
"""

from __future__ import annotations

import asyncio
import base64
import os
from typing import Any, AsyncGenerator, List
from unittest.mock import MagicMock

import pytest

from conftest import linux_url, need
from google.adk.agents import LlmAgent  # type: ignore[import-not-found, unused-ignore]
from google.adk.agents.base_agent import BaseAgent  # type: ignore[import-not-found, unused-ignore]
from google.adk.agents.invocation_context import InvocationContext  # type: ignore[import-not-found, unused-ignore]
from google.adk.code_executors.code_execution_utils import (  # type: ignore[import-not-found, unused-ignore]
    CodeExecutionInput, File)
from google.adk.models.base_llm import BaseLlm  # type: ignore[import-not-found, unused-ignore]
from google.adk.models.llm_request import LlmRequest  # type: ignore[import-not-found, unused-ignore]
from google.adk.models.llm_response import LlmResponse  # type: ignore[import-not-found, unused-ignore]
from google.adk.runners import InMemoryRunner  # type: ignore[import-not-found, unused-ignore]
from google.adk.sessions.base_session_service import BaseSessionService  # type: ignore[import-not-found, unused-ignore]
from google.adk.sessions.session import Session  # type: ignore[import-not-found, unused-ignore]
from google.genai import types  # type: ignore[import-not-found, unused-ignore]

from plimsoll import Client
from plimsoll.integrations.adk import PlimsollCodeExecutor



def context(session_id: str = "adk-session-1") -> Any:
    session = MagicMock(spec=Session)
    session.id = session_id
    return InvocationContext(invocation_id="invocation-1", agent=MagicMock(spec=BaseAgent),
                             session=session, session_service=MagicMock(spec=BaseSessionService))


def test_the_default_floor_refuses_on_embedded_and_the_model_sees_nothing_ran() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        executor = PlimsollCodeExecutor(client, language="javascript")
        assert executor.minimum_isolation == "container"
        result = executor.execute_code(context(), CodeExecutionInput(code="console.log(1)"))
    assert result.stderr == "nothing ran: isolation"
    assert result.stdout == "" and result.exit_code is None


def test_stderr_only_when_the_run_failed() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        executor = PlimsollCodeExecutor(client, language="javascript",
                                        minimum_isolation="process")
        ok = executor.execute_code(context(), CodeExecutionInput(code="console.log(6*7)"))
        noisy = executor.execute_code(context(), CodeExecutionInput(
            code="console.error('deprecated'); console.log('fine')"))
        failed = executor.execute_code(context(), CodeExecutionInput(
            code="throw new Error('boom')"))
    assert ok.stdout == "42\n" and ok.stderr == "" and ok.exit_code == 0
    assert noisy.stderr == "" and noisy.exit_code == 0
    assert noisy.stdout.startswith("fine\n") and "deprecated" in noisy.stdout
    assert failed.exit_code == 1 and "boom" in failed.stderr
    assert failed.stderr.endswith("[ran: exit 1]")


def test_stateful_keeps_variables_per_adk_session_and_close_ends_them() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        executor = PlimsollCodeExecutor(client, language="javascript",
                                        minimum_isolation="process", stateful=True)
        first = executor.execute_code(context("a"), CodeExecutionInput(
            code="var n = 41", execution_id="a"))
        second = executor.execute_code(context("a"), CodeExecutionInput(
            code="console.log(n + 1)", execution_id="a"))
        other = executor.execute_code(context("b"), CodeExecutionInput(
            code="console.log(typeof n)"))  # no execution ID: the ADK session's
        assert executor.runner.session("b") is not executor.runner.session("a")
        end = executor.close_session("a")
        executor.close()
    assert first.stderr == "" and second.stdout.startswith("42")
    assert other.stdout.startswith("undefined")
    assert end is not None and end["ended"] and end["calls"] == 2


@pytest.mark.linux
def test_python_with_input_and_output_files_on_linux() -> None:
    with Client(linux_url()) as client:
        executor = PlimsollCodeExecutor(client, output_files=["out/report.txt", "absent.txt"])
        csv = base64.b64encode(b"a,b\n1,2\n").decode()
        result = executor.execute_code(context(), CodeExecutionInput(
            code=("import os\nrows = open('data.csv').read().splitlines()\n"
                  "os.makedirs('out', exist_ok=True)\n"
                  "open('out/report.txt', 'w').write(str(len(rows)))\nprint(rows[1])"),
            input_files=[File(name="data.csv", content=csv, mime_type="text/csv"),
                         File(name="raw.bin", content=b"\x00\x01")]))
        # Nothing kept: the one-call session is already closed.
        assert executor.runner.close_session("any") is None
    assert result.stderr == "" and result.exit_code == 0 and result.stdout == "1,2\n"
    assert [(f.name, f.content, f.mime_type) for f in result.output_files] == [
        ("out/report.txt", b"2", "text/plain")]


@pytest.mark.linux
def test_python_stateful_on_linux_at_the_default_floor() -> None:
    with Client(linux_url()) as client:
        executor = PlimsollCodeExecutor(client, stateful=True)
        executor.execute_code(context("s"), CodeExecutionInput(code="x = 6", execution_id="s"))
        result = executor.execute_code(context("s"), CodeExecutionInput(
            code="import sys\nprint(x * 7)\nprint('note', file=sys.stderr)", execution_id="s"))
        executor.close()
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.startswith("42\n") and "note" in result.stdout


class ScriptedLlm(BaseLlm):  # type: ignore[misc, unused-ignore]
    """A model that answers from a script: each reply is the next text, no model is called."""

    replies: List[str]
    requests: List[Any] = []

    async def generate_content_async(self, llm_request: LlmRequest,
                                     stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        text = self.replies[min(len(self.requests), len(self.replies)) - 1]
        yield LlmResponse(content=types.Content(role="model",
                                                parts=[types.Part.from_text(text=text)]))


def run_agent(executor: PlimsollCodeExecutor, model: ScriptedLlm) -> List[Any]:
    agent = LlmAgent(name="coder", model=model, instruction="Write code.",
                     code_executor=executor)
    runner = InMemoryRunner(agent=agent, app_name="plimsoll-test")

    async def go() -> List[Any]:
        session = await runner.session_service.create_session(app_name="plimsoll-test",
                                                              user_id="u")
        message = types.Content(role="user", parts=[types.Part.from_text(text="6 times 7?")])
        return [event async for event in runner.run_async(
            user_id="u", session_id=session.id, new_message=message)]
    return asyncio.run(go())


def results_of(events: List[Any]) -> List[Any]:
    return [part.code_execution_result for event in events if event.content
            for part in event.content.parts or [] if part.code_execution_result]


def test_an_in_memory_runner_runs_the_models_code_block_in_plimsoll() -> None:
    model = ScriptedLlm(model="scripted", replies=[
        "Let me compute it.\n```javascript\nconsole.log(6*7)\n```", "It is 42."])
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        events = run_agent(PlimsollCodeExecutor(client, language="javascript",
                                                minimum_isolation="process"), model)
    executed = results_of(events)
    assert len(executed) == 1
    assert executed[0].outcome == types.Outcome.OUTCOME_OK and "42" in executed[0].output
    assert len(model.requests) == 2
    # The result reaches the model's next request (as a result part, or as text ADK made of it).
    seen = [str(part.code_execution_result.output if part.code_execution_result else part.text)
            for content in model.requests[1].contents for part in content.parts or []]
    assert any("42" in text for text in seen)
    assert events[-1].content.parts[0].text == "It is 42."


def test_an_in_memory_runner_shows_a_refusal_as_a_failed_execution() -> None:
    model = ScriptedLlm(model="scripted", replies=[
        "```javascript\nconsole.log(1)\n```", "Nothing ran."])
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        events = run_agent(PlimsollCodeExecutor(client, language="javascript"), model)
    executed = results_of(events)
    assert executed and executed[0].outcome == types.Outcome.OUTCOME_FAILED
    assert executed[0].output == "nothing ran: isolation"


@pytest.mark.linux
def test_an_in_memory_runner_with_python_on_linux() -> None:
    model = ScriptedLlm(model="scripted", replies=[
        "```python\nimport platform\nprint(sum(range(10)))\n```", "45."])
    with Client(linux_url()) as client:
        executor = PlimsollCodeExecutor(client, stateful=True)
        events = run_agent(executor, model)
        executor.close()
    executed = results_of(events)
    assert executed and executed[0].outcome == types.Outcome.OUTCOME_OK
    assert "45" in executed[0].output
