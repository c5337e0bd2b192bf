"""CrewAI with plimsoll's run_code tool: python3 main.py (pip install 'plimsoll[crewai]').

PLIMSOLL_URL names the daemon; PLIMSOLL_FLOOR lowers the floor (default container). The LLM
here is scripted so the example runs without a model key: give Agent a real llm instead.
"""

import json
import os
import re
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")

from crewai import Agent, Crew, Task  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402

from plimsoll import Client  # noqa: E402
from plimsoll.integrations.crewai import PlimsollRunCodeTool  # noqa: E402


class Scripted(BaseLLM):
    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        text = messages if isinstance(messages, str) else "\n".join(
            str(m.get("content", "")) for m in messages)
        seen = re.findall(r"Observation: (\{.*\})", text)
        if seen:
            return f"Thought: I now know the final answer\nFinal Answer: {seen[-1]}"
        call = {"language": "javascript", "code": "console.log(2 ** 10)"}
        return f"Thought: run it\nAction: run_code\nAction Input: {json.dumps(call)}"


if __name__ == "__main__":
    with Client(os.environ.get("PLIMSOLL_URL", "http://127.0.0.1:8470")) as client:
        tool = PlimsollRunCodeTool(client, minimum_isolation=os.environ.get("PLIMSOLL_FLOOR"))
        agent = Agent(role="coder", goal="compute with code", backstory="careful",
                      llm=Scripted(model="scripted"), tools=[tool])
        task = Task(description="What is 2 to the 10th?", expected_output="the tool's JSON",
                    agent=agent)
        print(Crew(agents=[agent], tasks=[task]).kickoff().raw)
        tool.close()
