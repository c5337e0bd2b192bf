"""plimsoll's MCP server (``pip install 'plimsoll[mcp]'``; run ``python -m plimsoll.mcp``).

See :mod:`plimsoll.mcp.server` and docs/integrations.md ("MCP server").
"""

from .server import DaemonDescription, PlimsollMCP, RunResult, SessionClosed, SessionOpened

__all__ = ["PlimsollMCP", "RunResult", "SessionOpened", "SessionClosed", "DaemonDescription"]
