"""Placement across three daemons (SPEC §12): embedded, linux (or a second embedded), disabled;
the first is stopped with SIGTERM mid-test."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import List

import pytest

from plimsoll import AsyncPool, Pool, RefusedError, Reason

from conftest import need


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return  # exited; its parent (the harness) reaps it later
        except FileNotFoundError:
            return
        time.sleep(0.05)
    raise AssertionError(f"daemon {pid} did not stop")


def test_placement() -> None:
    urls = need("PLIMSOLL_TEST_PLACEMENT_URLS").split(",")
    stop_pid = int(need("PLIMSOLL_TEST_PLACEMENT_STOP_PID"))
    try:
        _placement(urls, stop_pid)
    finally:
        try:  # the harness expects the first daemon stopped, whatever happened above
            os.kill(stop_pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def _placement(urls: List[str], stop_pid: int) -> None:
    assert len(urls) == 3
    first, second, third = urls
    pool = Pool(urls, describe_ttl=60.0)
    second_is_linux = pool.clients[1].describe().provider == "linux"

    # In order: the first daemon that can take it.
    result = pool.run_javascript("console.log(6*7)")
    assert result.stdout == b"42\n"
    assert result.provider == "embedded"

    # The disabled daemon runs nothing: a pool of it alone refuses, nothing ran, retryable.
    with Pool([third]) as disabled_only:
        with pytest.raises(RefusedError) as refused:
            disabled_only.run_javascript("1")
        assert refused.value.not_dispatched == Reason.UNSUPPORTED
        assert refused.value.ran is False

    # A floor no daemon meets: refused isolation, nothing sent anywhere.
    with pytest.raises(RefusedError) as refused:
        pool.run_javascript("1", minimum_isolation="vm")
    assert refused.value.not_dispatched == Reason.ISOLATION

    # Python: only linux runs it.
    if second_is_linux:
        python = pool.run_python("print(6*7)")
        assert python.provider == "linux" and python.stdout == b"42\n"
    else:
        with pytest.raises(RefusedError) as refused:
            pool.run_python("print(1)")
        assert refused.value.not_dispatched == Reason.UNSUPPORTED

    # A session opened on the first daemon stays there.
    session = pool.open_session()
    assert session.run_cell("javascript", "let x = 41").exit_code == 0
    pinned_to = session._client

    # Stop the first daemon mid-test.
    os.kill(stop_pid, signal.SIGTERM)
    _wait_gone(stop_pid)

    # Runs move on to the second daemon: the first is unreachable (capacity, nothing sent),
    # even though its describe is still cached.
    moved = pool.run_javascript("console.log(1)")
    assert moved.stdout == b"1\n"
    assert moved.provider == ("linux" if second_is_linux else "embedded")

    # The session does not move: its call fails on its own daemon.
    with pytest.raises(RefusedError) as refused:
        session.run_cell("javascript", "x + 1")
    assert refused.value.not_dispatched == Reason.CAPACITY
    assert session._client is pinned_to

    # The async pool places the same way (the first daemon is down now).
    async def async_part() -> None:
        async with AsyncPool(urls) as apool:
            r = await apool.run_javascript("console.log(2)")
            assert r.stdout == b"2\n" and r.record.request_sha256
            async with await apool.open_session() as s:
                cell = await s.run_cell("javascript", "6*7")
                assert cell.value == b"42"
            with pytest.raises(RefusedError) as refused:
                await apool.run_javascript("1", minimum_isolation="vm")
            assert refused.value.not_dispatched == Reason.ISOLATION
    asyncio.run(async_part())
    pool.close()
