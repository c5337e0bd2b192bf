"""``python -m plimsoll.mcp``: serve plimsoll to MCP clients over stdio or streamable HTTP."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
