"""Agno with plimsoll's toolkit: python3 main.py (pip install 'plimsoll[agno]').

PLIMSOLL_URL names the daemon; PLIMSOLL_FLOOR lowers the floor (default container). The model
here is scripted so the example runs without a model key: give Agent a real model instead.
"""

import json
import os
from dataclasses import dataclass
from typing import Any, Iterator

from agno.agent import Agent
from agno.models.base import Model
from agno.models.response import ModelResponse

from plimsoll import Client
from plimsoll.integrations.agno import PlimsollTools


@dataclass
class Scripted(Model):
    id: str = "scripted"

    def invoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        tool_results = [m for m in kwargs["messages"] if m.role == "tool"]
        if tool_results:
            return ModelResponse(role="assistant",
                                 content=f"sandbox said: {tool_results[-1].content}")
        call = {"language": "javascript", "code": "console.log([1,2,3].map(x => x * x))"}
        return ModelResponse(role="assistant", tool_calls=[{
            "id": "call_1", "type": "function",
            "function": {"name": "run_code", "arguments": json.dumps(call)}}])

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self.invoke(*args, **kwargs)

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponse]:
        yield self.invoke(*args, **kwargs)

    async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> Any:
        yield self.invoke(*args, **kwargs)

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response


if __name__ == "__main__":
    with Client(os.environ.get("PLIMSOLL_URL", "http://127.0.0.1:8470")) as client:
        tools = PlimsollTools(client, minimum_isolation=os.environ.get("PLIMSOLL_FLOOR"))
        print(Agent(model=Scripted(), tools=[tools]).run("Square 1, 2 and 3.").content)
        tools.close()
