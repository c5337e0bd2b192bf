"""The run calls every client, session and pool has, written once over one ``_send``.

``RunCalls`` (sync) and ``AsyncRunCalls`` (asyncio) turn ``run_javascript``, ``run_python``,
``run_project`` and ``run`` into a wire request; the class that mixes them in says where it goes
(``/v1/runs``, a session's runs, or the daemon placement picks) by defining ``_send``.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

from . import _api
from ._core import Data, Files
from .results import Result

__all__ = ["RunCalls", "AsyncRunCalls"]


class RunCalls:
    def _send(self, request: Dict[str, Any]) -> Result:
        raise NotImplementedError

    def run(self, request: Mapping[str, Any]) -> Result:
        """Sends a wire request built by hand (``{"protocol": 1, "javascript": {...}}``)."""
        return self._send(_api.hand_request(request))

    def run_javascript(self, code: Data, *, minimum_isolation: Optional[str] = None,
                       timeout_ms: Optional[int] = None, environment: Optional[str] = None,
                       grant_profile: Optional[str] = None, trace_id: Optional[str] = None,
                       image: Optional[str] = None) -> Result:
        """Runs a JavaScript snippet."""
        return self._send(_api.code_request("javascript", code, minimum_isolation, timeout_ms,
                                            environment, grant_profile, trace_id, image))

    def run_python(self, code: Data, *, minimum_isolation: Optional[str] = None,
                   timeout_ms: Optional[int] = None, environment: Optional[str] = None,
                   grant_profile: Optional[str] = None, trace_id: Optional[str] = None,
                   image: Optional[str] = None) -> Result:
        """Runs a Python snippet."""
        return self._send(_api.code_request("python", code, minimum_isolation, timeout_ms,
                                            environment, grant_profile, trace_id, image))

    def run_project(self, files: Optional[Files] = None,
                    steps: Optional[Sequence[Sequence[str]]] = None,
                    artifacts: Optional[Sequence[str]] = None, *,
                    minimum_isolation: Optional[str] = None, timeout_ms: Optional[int] = None,
                    environment: Optional[str] = None, grant_profile: Optional[str] = None,
                    trace_id: Optional[str] = None, image: Optional[str] = None) -> Result:
        """Writes ``files`` into /work, runs the argv ``steps`` in order, brings back
        ``artifacts``."""
        return self._send(_api.project_request(files, steps, artifacts, minimum_isolation,
                                               timeout_ms, environment, grant_profile, trace_id,
                                               image))


class AsyncRunCalls:
    async def _send(self, request: Dict[str, Any]) -> Result:
        raise NotImplementedError

    async def run(self, request: Mapping[str, Any]) -> Result:
        """Sends a wire request built by hand (``{"protocol": 1, "javascript": {...}}``)."""
        return await self._send(_api.hand_request(request))

    async def run_javascript(self, code: Data, *, minimum_isolation: Optional[str] = None,
                             timeout_ms: Optional[int] = None, environment: Optional[str] = None,
                             grant_profile: Optional[str] = None,
                             trace_id: Optional[str] = None,
                             image: Optional[str] = None) -> Result:
        """Runs a JavaScript snippet."""
        return await self._send(_api.code_request("javascript", code, minimum_isolation,
                                                  timeout_ms, environment, grant_profile,
                                                  trace_id, image))

    async def run_python(self, code: Data, *, minimum_isolation: Optional[str] = None,
                         timeout_ms: Optional[int] = None, environment: Optional[str] = None,
                         grant_profile: Optional[str] = None,
                         trace_id: Optional[str] = None,
                         image: Optional[str] = None) -> Result:
        """Runs a Python snippet."""
        return await self._send(_api.code_request("python", code, minimum_isolation, timeout_ms,
                                                  environment, grant_profile, trace_id, image))

    async def run_project(self, files: Optional[Files] = None,
                          steps: Optional[Sequence[Sequence[str]]] = None,
                          artifacts: Optional[Sequence[str]] = None, *,
                          minimum_isolation: Optional[str] = None,
                          timeout_ms: Optional[int] = None, environment: Optional[str] = None,
                          grant_profile: Optional[str] = None,
                          trace_id: Optional[str] = None,
                          image: Optional[str] = None) -> Result:
        """Writes ``files`` into /work, runs the argv ``steps`` in order, brings back
        ``artifacts``."""
        return await self._send(_api.project_request(files, steps, artifacts, minimum_isolation,
                                                     timeout_ms, environment, grant_profile,
                                                     trace_id, image))
