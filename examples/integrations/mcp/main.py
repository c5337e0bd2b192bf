"""Talks to plimsoll's MCP server the way any MCP client does: here the Python MCP SDK's Client.

    pip install 'plimsoll[mcp]'
    PLIMSOLL_URL=http://127.0.0.1:8470 python main.py            # spawns the server over stdio
    PLIMSOLL_URL=... python main.py --http http://127.0.0.1:8471/mcp   # a server already running

Lists the tools, describes the daemon, runs a snippet in a fresh sandbox and two cells in a
session (if the daemon meets the floor), and prints each structured result. No model is called:
the calls below are the ones a model would make.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any, Dict

from mcp import Client, StdioServerParameters


def show(name: str, result: Any) -> Dict[str, Any]:
    structured: Dict[str, Any] = result.structured_content or {}
    print(f"{name}: {json.dumps(structured, indent=2)}")
    return structured


async def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server: Any = sys.argv[2]
    else:
        env = {name: os.environ[name] for name in ("PLIMSOLL_URL", "PLIMSOLL_TOKEN",
                                                    "PLIMSOLL_MCP_FLOOR") if name in os.environ}
        server = StdioServerParameters(command=sys.executable, args=["-m", "plimsoll.mcp"],
                                       env=env)
    async with Client(server) as client:
        tools = await client.list_tools()
        print("tools:", ", ".join(tool.name for tool in tools.tools))
        described = show("describe", await client.call_tool("describe", {}))
        show("run_code", await client.call_tool(
            "run_code", {"language": "javascript", "code": "console.log(6 * 7)"}))
        if not described.get("meets_floor") or "python" not in described.get("languages", []):
            print("(no session: the daemon is below the floor or runs no python)")
            return
        opened = show("open_session", await client.call_tool("open_session", {}))
        if not opened["opened"]:
            return  # e.g. stateless HTTP (protocol 2026-07-28): no MCP session to keep it in
        handle = opened["session_id"]
        show("run_cell", await client.call_tool(
            "run_cell", {"session_id": handle, "language": "python", "code": "x = 6"}))
        show("run_cell", await client.call_tool(
            "run_cell", {"session_id": handle, "language": "python", "code": "x * 7"}))
        show("close_session", await client.call_tool("close_session", {"session_id": handle}))


if __name__ == "__main__":
    asyncio.run(main())
