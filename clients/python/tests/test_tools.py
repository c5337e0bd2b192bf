"""plimsoll.tools: the one tool-result shape and the runner every integration calls.

Against the harness's real daemons: embedded (tier process, so the default floor `container`
refuses there) and linux (tier container: python, input files, sessions with /work).
"""

from __future__ import annotations

import os

import pytest

from conftest import linux_url, need
from plimsoll import Client
from plimsoll.tools import DEFAULT_FLOOR, OUTPUT_CAP_CHARS, CodeRunner, error_result



def test_the_default_floor_is_container_and_a_weaker_daemon_runs_nothing() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        runner = CodeRunner(client)
        assert runner.minimum_isolation == DEFAULT_FLOOR == "container"
        shaped = runner.run("javascript", "console.log(1)")
    assert shaped["ran"] is False
    assert shaped["refused"] == "isolation"
    assert shaped["summary"] == "nothing ran: isolation"
    assert "exit_code" not in shaped and "stdout" not in shaped


def test_a_result_is_shaped_whatever_its_exit_code() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        runner = CodeRunner(client, minimum_isolation="process")
        ok = runner.run("javascript", "console.log(6*7)")
        failed = runner.run("javascript", "throw new Error('boom')")
    assert ok["ran"] is True and ok["exit_code"] == 0 and ok["stdout"] == "42\n"
    assert ok["isolation"] == "process" and len(ok["record_sha256"]) == 64
    assert ok["stdout_truncated"] is False and ok["timed_out"] is False
    assert "value" not in ok and "state_kept" not in ok
    assert failed["ran"] is True and failed["exit_code"] == 1
    assert "boom" in failed["stderr"] and failed["summary"] == "ran: exit 1"


def test_outputs_are_capped_at_16000_characters_and_say_so() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        shaped = CodeRunner(client, minimum_isolation="process").run(
            "javascript", "console.log('\u00e9'.repeat(20000))")
    assert len(shaped["stdout"]) == OUTPUT_CAP_CHARS
    assert shaped["stdout_truncated"] is True


def test_an_unknown_language_runs_nothing() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        shaped = CodeRunner(client).run("cobol", "DISPLAY 1")
    assert shaped["ran"] is False and shaped["refused"] == "request"


def test_an_answer_that_fails_its_checks_is_unknown_never_a_result() -> None:
    url = need("PLIMSOLL_TEST_ADVERSARY_URL") + "/flip_stdout/python-tools"
    with Client(url) as client:
        shaped = CodeRunner(client, minimum_isolation="process").run("javascript",
                                                                      "console.log(6*7)")
    assert shaped["ran"] == "unknown"
    assert shaped["error"]["code"] == "data_loss"
    assert shaped["summary"] == "unknown whether it ran: data_loss"
    assert "stdout" not in shaped


def test_a_conversation_keeps_its_session_and_its_variables() -> None:
    with Client(need("PLIMSOLL_TEST_EMBEDDED_URL")) as client:
        runner = CodeRunner(client, minimum_isolation="process", keep_sessions=True)
        first = runner.run("javascript", "let x = 41", key="chat-1")
        second = runner.run("javascript", "x + 1", key="chat-1")
        other = runner.run("javascript", "typeof x", key="chat-2")
        ended = runner.close_session("chat-1")
        runner.close()
    assert first["interpreter_started"] is True and first["displays"] == []
    assert second["value"] == "42" and second["state_kept"] is True
    assert second["interpreter_started"] is False
    assert other["value"] == "'undefined'"
    assert ended is not None and ended["ended"] == "closed" and ended["calls"] == 2


@pytest.mark.linux
def test_input_files_travel_with_a_fresh_run() -> None:
    with Client(linux_url()) as client:
        shaped = CodeRunner(client).run(
            "python", "print(open('data.csv').read().count('\\n'))",
            files={"data.csv": "a,b\n1,2\n"})
    assert shaped["ran"] is True and shaped["stdout"] == "2\n"
    assert shaped["isolation"] == "container"


@pytest.mark.linux
def test_input_files_reach_a_kept_session() -> None:
    with Client(linux_url()) as client:
        runner = CodeRunner(client, keep_sessions=True)
        shaped = runner.run("python", "open('/work/in.txt').read()", files=[
            {"path": "in.txt", "content": "hello"}], key="chat")
        again = runner.run("python", "len(open('/work/in.txt').read())", key="chat")
        runner.close()
    assert shaped["value"] == "'hello'" and again["value"] == "5"


def test_error_result_of_a_refusal_names_the_reason() -> None:
    from plimsoll import PlimsollError, Reason
    shaped = error_result(PlimsollError("failed_precondition", "below", Reason.ISOLATION))
    assert shaped == {"ran": False, "refused": "isolation", "summary": "nothing ran: isolation",
                      "error": {"code": "failed_precondition", "message": "below"}}
