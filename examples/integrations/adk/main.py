"""Google ADK with plimsoll as its code executor: python3 main.py (pip install 'plimsoll[adk]').

PLIMSOLL_URL names the daemon (a linux provider runs Python at tier container, the default
floor); PLIMSOLL_FLOOR lowers the floor. The model here is scripted so the example runs without
a model key: put a real one (model="gemini-...") in LlmAgent and ask anything.
"""

import asyncio
import os
from typing import Any, AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

from plimsoll import Client
from plimsoll.integrations.adk import PlimsollCodeExecutor


class Scripted(BaseLlm):
    turns: int = 0

    async def generate_content_async(self, llm_request: Any,
                                     stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.turns += 1
        text = ("```python\nprint(sum(i * i for i in range(10)))\n```" if self.turns == 1
                else "Done: the sandbox answered above.")
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


async def main() -> None:
    client = Client(os.environ.get("PLIMSOLL_URL", "http://127.0.0.1:8470"))
    executor = PlimsollCodeExecutor(client, stateful=True,
                                    minimum_isolation=os.environ.get("PLIMSOLL_FLOOR"))
    agent = LlmAgent(name="coder", model=Scripted(model="scripted"), code_executor=executor)
    runner = InMemoryRunner(agent=agent, app_name="example")
    session = await runner.session_service.create_session(app_name="example", user_id="me")
    message = types.Content(role="user", parts=[types.Part(text="Sum of squares below 10?")])
    async for event in runner.run_async(user_id="me", session_id=session.id,
                                        new_message=message):
        for part in (event.content.parts if event.content else None) or []:
            if part.code_execution_result:
                print("sandbox:", part.code_execution_result.outcome,
                      part.code_execution_result.output.strip())
            elif part.text:
                print(f"{event.author}:", part.text.strip())
    executor.close()
    client.close()


if __name__ == "__main__":
    asyncio.run(main())
