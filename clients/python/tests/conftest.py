"""Shared test helpers: the harness environment (tests/clients/README.md)."""

from __future__ import annotations

import os
from typing import Any, Optional

import pytest


def env(name: str) -> str:
    return os.environ.get(name, "")


def need(name: str) -> str:
    """The variable's value, or skip the test saying what is missing."""
    value = os.environ.get(name, "")
    if not value:
        pytest.skip(f"{name} is not set (run through tests/clients/harness.py)")
    return value


def part() -> str:
    return os.environ.get("PLIMSOLL_TEST_PART", "all")


def embedded_url() -> Optional[str]:
    return os.environ.get("PLIMSOLL_TEST_EMBEDDED_URL") or None


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Each skipped test as `skipped: <test>: <reason>` (the harness's convention)."""
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(
            report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        terminalreporter.write_line(f"skipped: {report.nodeid.split('::')[-1]}: {reason}")
