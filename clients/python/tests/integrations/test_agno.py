"""plimsoll.integrations.agno against agno and real daemons (tests/clients/README.md).

Through a real Agent whose model is a scripted subclass of Agno's Model (it asks for the tool
calls of its script, then answers with what the last tool returned; no model is called), sync
and async, and by calling the tools directly. Embedded (tier process, JavaScript) for most
checks; linux for Python and files.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional, Tuple

import pytest

from conftest import linux_url, need
from agno.agent import Agent  # type: ignore[import-not-found, unused-ignore]
from agno.models.base import Model  # type: ignore[import-not-found, unused-ignore]
from agno.models.response import ModelResponse  # type: ignore[import-not-found, unused-ignore]
from agno.run import RunContext  # type: ignore[import-not-found, unused-ignore]

from plimsoll import Client
from plimsoll.integrations.agno import PlimsollTools



@dataclass
class ScriptedModel(Model):  # type: ignore[misc, unused-ignore]
    """Asks for each scripted tool call in turn, then answers with the last tool result."""

    id: str = "scripted"
    name: str = "Scripted"
    provider: str = "plimsoll-test"
    script: List[Tuple[str, Dict[str, Any]]] = field(default_factory=list)
    calls: int = 0

    def _next(self, messages: List[Any]) -> ModelResponse:
        self.calls += 1
        asked = sum(1 for m in messages if m.role == "assistant" and m.tool_calls)
        if asked < len(self.script):
            name, arguments = self.script[asked]
            return ModelResponse(role="assistant", content="", tool_calls=[{
                "id": f"call_{asked}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)}}])
        tool_results = [m for m in messages if m.role == "tool"]
        return ModelResponse(role="assistant",
                             content=f"final: {tool_results[-1].content if tool_results else ''}")

    def invoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self._next(kwargs["messages"])

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self._next(kwargs["messages"])

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponse]:
        yield self._next(kwargs["messages"])

    async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelResponse]:
        yield self._next(kwargs["messages"])

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        assert isinstance(response, ModelResponse)
        return response

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        assert isinstance(response, ModelResponse)
        return response


def results(output: Any) -> List[Dict[str, Any]]:
    return [json.loads(str(tool.result)) for tool in output.tools or []]


def context(session_id: str) -> Any:
    return RunContext(run_id="run-1", session_id=session_id)


def test_the_default_floor_refuses_on_embedded() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        tools = PlimsollTools(client)
        shaped = json.loads(tools.run_code("javascript", "console.log(1)"))
    assert tools.runner.minimum_isolation == "container"
    assert shaped["ran"] is False and shaped["summary"] == "nothing ran: isolation"


def test_the_tools_directly_sync_and_async() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        tools = PlimsollTools(client, minimum_isolation="process")
        assert sorted(tools.functions) == ["close_session", "run_cell", "run_code"]
        ok = json.loads(tools.run_code("javascript", "console.log(6*7)"))
        failed = json.loads(asyncio.run(tools.arun_code("javascript", "throw new Error('no')")))
        json.loads(tools.run_cell(context("c"), "javascript", "var k = 1"))
        cell = json.loads(asyncio.run(tools.arun_cell(context("c"), "javascript", "k + 41")))
        end = json.loads(asyncio.run(tools.aclose_session(context("c"))))
        tools.close()
    assert ok["ran"] is True and ok["stdout"] == "42\n" and ok["isolation"] == "process"
    assert failed["ran"] is True and failed["exit_code"] == 1
    assert cell["value"] == "42" and cell["state_kept"] is True
    assert end["ended"] == "closed" and end["calls"] == 2


def test_an_agent_calls_run_code_and_sees_the_result() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        model = ScriptedModel(script=[("run_code", {"language": "javascript",
                                                    "code": "console.log(6*7)"})])
        agent = Agent(model=model, tools=[PlimsollTools(client, minimum_isolation="process")])
        output = agent.run("what is 6*7?")
    shaped = results(output)
    assert len(shaped) == 1 and shaped[0]["ran"] is True and shaped[0]["stdout"] == "42\n"
    assert '"stdout": "42\\n"' in str(output.content) and model.calls == 2


def test_an_async_agent_keeps_cells_per_agno_session_and_sees_a_refusal() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        tools = PlimsollTools(client, minimum_isolation="process")
        model = ScriptedModel(script=[
            ("run_cell", {"language": "javascript", "code": "var n = 20"}),
            ("run_cell", {"language": "javascript", "code": "n * 2 + 2"}),
            ("close_session", {})])
        output = asyncio.run(Agent(model=model, tools=[tools]).arun(
            "keep n", session_id="agno-session-7"))
        refused = Agent(model=ScriptedModel(script=[("run_code", {
            "language": "javascript", "code": "1"})]), tools=[PlimsollTools(client)]).run("x")
    first, second, end = results(output)
    assert first["interpreter_started"] is True and second["value"] == "42"
    assert second["state_kept"] is True
    assert end["ended"] == "closed" and end["calls"] == 2
    assert results(refused)[0]["summary"] == "nothing ran: isolation"


@pytest.mark.linux
def test_python_with_files_and_a_session_on_linux() -> None:
    with Client(linux_url()) as client:
        tools = PlimsollTools(client)
        model = ScriptedModel(script=[("run_code", {
            "language": "python", "input_files": {"data/in.txt": "3 4"},
            "code": "a, b = map(int, open('data/in.txt').read().split())\nprint(a * b)"})])
        output = Agent(model=model, tools=[tools]).run("multiply")
        json.loads(tools.run_cell(context("p"), "python", "total = 40"))
        cell = json.loads(tools.run_cell(context("p"), "python", "total + 2"))
        tools.close()
    shaped = results(output)[0]
    assert shaped["ran"] is True and shaped["stdout"] == "12\n"
    assert shaped["isolation"] == "container"
    assert cell["value"] == "42" and cell["state_kept"] is True
