"""The shared conformance scenarios (testdata/clients/scenarios.json), each run with Client and
with AsyncClient against the daemons and proxies that tests/clients/harness.py starts."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from conftest import linux_url, need, under_harness

import plimsoll
from plimsoll import (AsyncClient, AsyncSession, Client, DataLossError, PlimsollError,
                      RefusedError, Result, Session)

_RUN = secrets.token_hex(4)  # the proxy keeps per-key state: a fresh key per test run


class ScenarioError(AssertionError):
    pass


def _scenarios() -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    path = os.environ.get("PLIMSOLL_TEST_SCENARIOS", "")
    if not path:
        return {}, []
    with open(path, encoding="utf-8") as handle:
        document: Dict[str, Any] = json.load(handle)
    if document.get("format") != "plimsoll.client-scenarios.v1":
        raise ScenarioError(f"unknown scenario format {document.get('format')!r}")
    return document, list(document["scenarios"])


DOCUMENT, SCENARIOS = _scenarios()
CLIENT_OPTIONS = {"token", "max_response_bytes", "allow_cleartext"}


def _target_url(scenario: Dict[str, Any], flavour: str) -> Tuple[str, Dict[str, Any]]:
    """The client URL and the options the target implies, or skip."""
    target: str = scenario["target"]
    options: Dict[str, Any] = {}
    if scenario.get("needs") == "linux" or target.startswith(("linux", "adversary_linux:")):
        linux_url()  # a skip only when this host cannot run the linux provider
    simple = {"embedded": "PLIMSOLL_TEST_EMBEDDED_URL", "embedded_unix":
              "PLIMSOLL_TEST_EMBEDDED_UNIX", "linux": "PLIMSOLL_TEST_LINUX_URL",
              "tls": "PLIMSOLL_TEST_TLS_URL", "unreachable": "PLIMSOLL_TEST_UNREACHABLE_URL"}
    if target in simple:
        url = os.environ.get(simple[target], "")
        if target == "tls":
            options["ca_file"] = os.environ.get("PLIMSOLL_TEST_TLS_CA")
    elif target == "non_loopback":
        url = DOCUMENT.get("constants", {}).get("non_loopback_url", "")
    elif target.startswith("adversary:") or target.startswith("adversary_linux:"):
        which, mode = target.split(":", 1)
        base = os.environ.get("PLIMSOLL_TEST_ADVERSARY_URL" if which == "adversary"
                              else "PLIMSOLL_TEST_ADVERSARY_LINUX_URL", "")
        url = f"{base}/{mode}/{scenario['name']}-{flavour}-{_RUN}" if base else ""
    else:
        raise ScenarioError(f"unknown target {target!r}")
    if not url:
        if under_harness():
            pytest.fail(f"no URL for target {target!r} (tests/clients/harness.py sets one)")
        pytest.skip(f"no URL for target {target!r} (run through tests/clients/harness.py)")
    for key, value in scenario.get("client", {}).items():
        if key not in CLIENT_OPTIONS:
            raise ScenarioError(f"unknown client option {key!r}")
        if key == "token":
            if value == "tls":
                value = os.environ.get("PLIMSOLL_TEST_TLS_TOKEN", "")
            elif value == "wrong":
                value = "plimsoll-wrong-" + "a" * 43
            else:
                raise ScenarioError(f"unknown token kind {value!r}")
        options[key] = value
    if "token" not in options:
        options["token"] = None
    return url, options


def _files(entries: List[Dict[str, Any]]) -> List[Tuple[str, Any]]:
    out: List[Tuple[str, Any]] = []
    for entry in entries:
        unknown = set(entry) - {"path", "content", "content_base64"}
        if unknown:
            raise ScenarioError(f"unknown file keys {sorted(unknown)}")
        content = (base64.b64decode(entry["content_base64"]) if "content_base64" in entry
                   else entry["content"])
        out.append((entry["path"], content))
    return out


_RUN_ARGS = {"code", "minimum_isolation", "timeout_ms", "environment", "grant_profile",
             "trace_id", "image"}
_ARGS = {
    "describe": set(), "run_javascript": _RUN_ARGS, "run_python": _RUN_ARGS,
    "run_project": {"files", "steps", "artifacts", "minimum_isolation", "timeout_ms",
                    "environment", "grant_profile", "trace_id", "image"},
    "open_session": {"minimum_isolation", "lifetime_ms", "idle_timeout_ms", "environment",
                     "image"},
    "run_cell": {"language", "code", "timeout_ms"}, "session_run_javascript": {"code",
                                                                              "timeout_ms"},
    "session_upload": {"files"}, "session_download": {"paths"}, "session_info": set(),
    "close_session": set(),
}


def _check_args(op: str, args: Dict[str, Any]) -> None:
    if op not in _ARGS:
        raise ScenarioError(f"unknown op {op!r}")
    unknown = set(args) - _ARGS[op]
    if unknown:
        raise ScenarioError(f"op {op}: unknown args {sorted(unknown)}")


def _project_kwargs(args: Dict[str, Any]) -> Dict[str, Any]:
    kwargs = {k: v for k, v in args.items() if k not in ("files",)}
    kwargs["files"] = _files(args.get("files", []))
    return kwargs


class SyncDriver:
    """Makes the client at the first step, so an option refused there is that step's error."""

    def __init__(self, url: str, options: Dict[str, Any]) -> None:
        self.url, self.options = url, options
        self.client: Optional[Client] = None
        self.session: Optional[Session] = None

    def call(self, op: str, args: Dict[str, Any]) -> Any:
        if self.client is None:
            self.client = Client(self.url, **self.options)
        c = self.client
        if op == "describe":
            return c.describe()
        if op == "run_javascript":
            return c.run_javascript(**args)
        if op == "run_python":
            return c.run_python(**args)
        if op == "run_project":
            return c.run_project(**_project_kwargs(args))
        if op == "open_session":
            self.session = c.open_session(**args)
            return self.session
        s = self.session
        if s is None:
            raise ScenarioError(f"op {op} needs an open_session step first")
        if op == "run_cell":
            return s.run_cell(**args)
        if op == "session_run_javascript":
            return s.run_javascript(**args)
        if op == "session_upload":
            return s.upload(_files(args["files"]))
        if op == "session_download":
            return s.download(args["paths"])
        if op == "session_info":
            return s.info()
        if op == "close_session":
            return s.close()
        raise ScenarioError(f"unknown op {op!r}")

    def finish(self) -> None:
        if self.session is not None and self.session._end is None:
            try:
                self.session.close()
            except PlimsollError:
                pass
        if self.client is not None:
            self.client.close()


class AsyncDriver:
    def __init__(self, url: str, options: Dict[str, Any]) -> None:
        self.url, self.options = url, options
        self.client: Optional[AsyncClient] = None
        self.session: Optional[AsyncSession] = None
        self.loop = asyncio.new_event_loop()

    async def _call(self, op: str, args: Dict[str, Any]) -> Any:
        if self.client is None:
            self.client = AsyncClient(self.url, **self.options)
        c = self.client
        if op == "describe":
            return await c.describe()
        if op == "run_javascript":
            return await c.run_javascript(**args)
        if op == "run_python":
            return await c.run_python(**args)
        if op == "run_project":
            return await c.run_project(**_project_kwargs(args))
        if op == "open_session":
            self.session = await c.open_session(**args)
            return self.session
        s = self.session
        if s is None:
            raise ScenarioError(f"op {op} needs an open_session step first")
        if op == "run_cell":
            return await s.run_cell(**args)
        if op == "session_run_javascript":
            return await s.run_javascript(**args)
        if op == "session_upload":
            return await s.upload(_files(args["files"]))
        if op == "session_download":
            return await s.download(args["paths"])
        if op == "session_info":
            return await s.info()
        if op == "close_session":
            return await s.close()
        raise ScenarioError(f"unknown op {op!r}")

    def call(self, op: str, args: Dict[str, Any]) -> Any:
        return self.loop.run_until_complete(self._call(op, args))

    def finish(self) -> None:
        async def end() -> None:
            if self.session is not None and self.session._end is None:
                try:
                    await self.session.close()
                except PlimsollError:
                    pass
            if self.client is not None:
                await self.client.close()
        try:
            self.loop.run_until_complete(end())
        finally:
            self.loop.close()


def _result_field(result: Result, name: str) -> Any:
    if name in ("stdout", "stderr"):
        return getattr(result, name + "_text")
    if name == "value":
        return result.value_text
    if name == "steps":
        return [{"exit_code": s.exit_code, "stdout": s.stdout_text} for s in result.steps]
    if name == "artifacts":
        return [{"path": a.path, "content": a.content_text} for a in result.artifacts]
    if name in ("exit_code", "timed_out", "killed_for_memory", "stdout_truncated",
                "stderr_truncated", "isolation", "provider", "kind", "outcome",
                "interpreter_started", "state_kept", "ran", "environment", "value_truncated",
                "duration_ms"):
        return getattr(result, name)
    raise ScenarioError(f"unknown result field {name!r}")


def _compare(kind: str, got: Dict[str, Any], want: Dict[str, Any]) -> List[str]:
    problems = []
    for key, value in want.items():
        if got.get(key, object()) != value:
            problems.append(f"{kind}.{key}: got {got.get(key)!r}, want {value!r}")
    return problems


def _check(expect: Dict[str, Any], outcome: Any, error: Optional[PlimsollError]) -> List[str]:
    if len(expect) != 1:
        raise ScenarioError(f"an expect holds exactly one key, not {sorted(expect)}")
    (kind, want), = expect.items()
    if kind == "error":
        unknown = set(want) - {"class", "code", "not_dispatched", "retryable", "ran"}
        if unknown:
            raise ScenarioError(f"unknown error expect keys {sorted(unknown)}")
        if error is None:
            return [f"expected an error {want}, got a success: {outcome!r}"]
        klass = ("refused" if isinstance(error, RefusedError) else
                 "data_loss" if isinstance(error, DataLossError) else "error")
        got = {"class": klass, "code": error.code,
               "not_dispatched": error.not_dispatched.value if error.not_dispatched else None,
               "retryable": error.is_retryable, "ran": error.ran}
        problems = _compare("error", got, want)
        return problems + ([f"  the error: {error!r}"] if problems else [])
    if error is not None:
        return [f"expected {kind} {want}, got an error: {error!r}"]
    if kind == "result":
        if not isinstance(outcome, Result):
            return [f"expected a result, got {outcome!r}"]
        problems = []
        for key, value in want.items():
            if key == "stdout_startswith":
                if not outcome.stdout_text.startswith(value):
                    problems.append(f"stdout {outcome.stdout_text[:80]!r} does not start with "
                                    f"{value!r}")
            elif key == "stdout_length":
                if len(outcome.stdout) != value:
                    problems.append(f"stdout length {len(outcome.stdout)}, want {value}")
            elif _result_field(outcome, key) != value:
                problems.append(f"result.{key}: got {_result_field(outcome, key)!r}, want "
                                f"{value!r}")
        return problems
    if kind == "describe":
        got = {"provider": outcome.provider, "tier": outcome.tier, "protocol": outcome.protocol}
        unknown = set(want) - set(got)
        if unknown:
            raise ScenarioError(f"unknown describe fields {sorted(unknown)}")
        return _compare("describe", got, want)
    if kind == "session":
        # An open_session step answers the session (its `opened`), session_info its state.
        opened = outcome.opened if isinstance(outcome, (Session, AsyncSession)) else outcome
        got = {"provider": opened.provider, "isolation": opened.isolation,
               "environment": opened.environment, "image": opened.image}
        unknown = set(want) - set(got)
        if unknown:
            raise ScenarioError(f"unknown session fields {sorted(unknown)}")
        return _compare("session", got, want)
    if kind == "closed":
        got = {"ended": outcome.ended, "calls": outcome.calls,
               "last_record_sha256": outcome.last_record_sha256}
        unknown = set(want) - set(got)
        if unknown:
            raise ScenarioError(f"unknown closed fields {sorted(unknown)}")
        return _compare("closed", got, want)
    if kind == "downloaded":
        got_list = [{"path": a.path, "content": a.content_text} for a in outcome]
        return [] if got_list == want else [f"downloaded {got_list!r}, want {want!r}"]
    raise ScenarioError(f"unknown expect {kind!r}")


def run_scenario(scenario: Dict[str, Any], flavour: str) -> None:
    unknown = set(scenario) - {"name", "about", "target", "client", "steps", "needs"}
    if unknown:
        raise ScenarioError(f"unknown scenario keys {sorted(unknown)}")
    url, options = _target_url(scenario, flavour)
    driver: Any = SyncDriver(url, options) if flavour == "sync" else AsyncDriver(url, options)
    problems: List[str] = []
    try:
        for index, step in enumerate(scenario["steps"]):
            unknown = set(step) - {"op", "args", "expect", "max_ms", "about"}
            if unknown:
                raise ScenarioError(f"step {index}: unknown keys {sorted(unknown)}")
            op, args = step["op"], dict(step.get("args", {}))
            _check_args(op, args)
            started = time.monotonic()
            outcome: Any = None
            error: Optional[PlimsollError] = None
            try:
                outcome = driver.call(op, args)
            except PlimsollError as caught:
                error = caught
            elapsed_ms = (time.monotonic() - started) * 1000
            found = _check(step["expect"], outcome, error)
            if "max_ms" in step and elapsed_ms > step["max_ms"]:
                found.append(f"took {elapsed_ms:.0f} ms, more than max_ms {step['max_ms']}")
            problems += [f"step {index} ({op}): {p}" for p in found]
    finally:
        driver.finish()
    if problems:
        raise AssertionError(f"scenario {scenario['name']} ({flavour}):\n  " +
                             "\n  ".join(problems))


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.get("name", "?"))
def test_scenario(scenario: Dict[str, Any], flavour: str) -> None:
    run_scenario(scenario, flavour)


def test_scenarios_present() -> None:
    need("PLIMSOLL_TEST_SCENARIOS")
    assert SCENARIOS, "the scenario file holds no scenario"


def test_runner_refuses_unknown_ops_and_expects() -> None:
    with pytest.raises(ScenarioError, match="unknown op"):
        _check_args("run_ruby", {})
    with pytest.raises(ScenarioError, match="unknown expect"):
        _check({"banana": {}}, None, None)
    with pytest.raises(ScenarioError, match="unknown error expect keys"):
        _check({"error": {"colour": "red"}}, None, None)
