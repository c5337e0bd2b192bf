"""plimsoll.integrations.crewai against crewai and real daemons (tests/clients/README.md).

Through a real Agent, Task and Crew whose LLM is a scripted subclass of crewai's BaseLLM (it
answers in CrewAI's text protocol: an Action with its input, then a Final Answer holding what
the tool returned; no model is called), and by calling the tool directly, sync and async.
Embedded (tier process, JavaScript) for most checks; linux for Python and files.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import Any, Dict, List, Optional

import pytest

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
from conftest import linux_url, need
from crewai import Agent, Crew, Task  # type: ignore[import-not-found, unused-ignore]
from crewai.llms.base_llm import BaseLLM  # type: ignore[import-not-found, unused-ignore]

from plimsoll import Client
from plimsoll.integrations.crewai import PlimsollRunCodeTool, RunCodeInput



class ScriptedLLM(BaseLLM):  # type: ignore[misc, unused-ignore]
    """Asks for each scripted tool input in turn, then gives the last observation as answer."""

    script: List[Dict[str, Any]] = []
    prompts: List[str] = []

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None,
             available_functions: Any = None, from_task: Any = None, from_agent: Any = None,
             response_model: Any = None) -> str:
        text = messages if isinstance(messages, str) else "\n".join(
            str(m.get("content", "")) for m in messages)
        self.prompts.append(text)
        asked = len(self.prompts) - 1
        if asked < len(self.script):
            return ("Thought: I should run code.\nAction: run_code\n"
                    f"Action Input: {json.dumps(self.script[asked])}")
        observations = re.findall(r"Observation: (\{.*\})", text)
        return f"Thought: I now know the final answer\nFinal Answer: {observations[-1]}"


def crew_run(tool: PlimsollRunCodeTool, script: List[Dict[str, Any]]) -> Dict[str, Any]:
    llm = ScriptedLLM(model="scripted", script=script)
    agent = Agent(role="coder", goal="run code", backstory="a careful programmer", llm=llm,
                  tools=[tool], allow_delegation=False, max_iter=len(script) + 2)
    task = Task(description="Compute it.", expected_output="the tool's JSON", agent=agent)
    output = Crew(agents=[agent], tasks=[task]).kickoff()
    shaped: Dict[str, Any] = json.loads(str(getattr(output, "raw")))
    return shaped


def test_the_default_floor_refuses_on_embedded() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        tool = PlimsollRunCodeTool(client)
        shaped = json.loads(tool.run(language="javascript", code="console.log(1)"))
    assert tool.runner.minimum_isolation == "container"
    assert shaped["ran"] is False and shaped["summary"] == "nothing ran: isolation"


def test_the_tool_directly_sync_and_async() -> None:
    assert set(RunCodeInput.model_json_schema()["properties"]) == {
        "language", "code", "files", "session_key"}
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        tool = PlimsollRunCodeTool(client, minimum_isolation="process")
        ok = json.loads(tool.run(language="javascript", code="console.log(6*7)"))
        failed = json.loads(asyncio.run(tool.arun(language="javascript",
                                                  code="throw new Error('no')")))
        tool.run(language="javascript", code="var k = 40", session_key="s")
        cell = json.loads(asyncio.run(tool.arun(language="javascript", code="k + 2",
                                                session_key="s")))
        end: Optional[Dict[str, Any]] = tool.close_session("s")
        tool.close()
    assert ok["ran"] is True and ok["stdout"] == "42\n" and ok["isolation"] == "process"
    assert failed["ran"] is True and failed["exit_code"] == 1 and "no" in failed["stderr"]
    assert cell["value"] == "42" and cell["state_kept"] is True
    assert end is not None and end["calls"] == 2


def test_a_crew_runs_the_tool_and_answers_with_its_result() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        shaped = crew_run(PlimsollRunCodeTool(client, minimum_isolation="process"),
                          [{"language": "javascript", "code": "console.log(6*7)"}])
    assert shaped["ran"] is True and shaped["stdout"] == "42\n"
    assert shaped["isolation"] == "process" and len(shaped["record_sha256"]) == 64


def test_a_crew_sees_a_refusal_as_nothing_ran() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        shaped = crew_run(PlimsollRunCodeTool(client),
                          [{"language": "javascript", "code": "console.log(1)"}])
    assert shaped["ran"] is False and shaped["refused"] == "isolation"


@pytest.mark.linux
def test_a_crew_runs_python_with_files_and_a_session_on_linux() -> None:
    with Client(linux_url()) as client:
        tool = PlimsollRunCodeTool(client)
        fresh = crew_run(tool, [{"language": "python", "files": {"in.txt": "3 4"},
                                 "code": "a, b = open('in.txt').read().split()\n"
                                         "print(int(a) * int(b))"}])
        kept = crew_run(tool, [{"language": "python", "code": "n = 41", "session_key": "k"},
                               {"language": "python", "code": "n + 1", "session_key": "k"}])
        tool.close()
    assert fresh["ran"] is True and fresh["stdout"] == "12\n"
    assert fresh["isolation"] == "container"
    assert kept["value"] == "42" and kept["state_kept"] is True
