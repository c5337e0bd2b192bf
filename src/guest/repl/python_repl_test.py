"""Tests for python_repl.py, driven as plimsoll-guest drives it.

Each test starts the server as a subprocess with the request pipe on fd 3, the answer pipe on
fd 4 (via pass_fds), /dev/null on fd 0 and stdout/stderr pipes drained by threads. Every wait
is bounded by WAIT_SECONDS, so a broken server fails a test instead of hanging the suite.

Run: python3 src/guest/repl/python_repl_test.py
"""

import fcntl
import json
import os
import select
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Any

SERVER = Path(__file__).resolve().with_name("python_repl.py")
WAIT_SECONDS = 30.0
MIB = 1024 * 1024


def _high_fd(fd: int) -> int:
    """Moves fd above the numbers the server's channel must use in the child."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


def _popen_with_channel(requests: int, answers: int, cwd: str) -> subprocess.Popen[bytes]:
    """Starts the server with `requests` as its fd 3 and `answers` as its fd 4.

    pass_fds keeps descriptor numbers, so the two ends sit at 3 and 4 in this process for
    the duration of the Popen call; whatever this process had there is put back after.
    """
    saved: dict[int, tuple[int, bool] | None] = {}
    for fd in (3, 4):
        try:
            saved[fd] = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10), os.get_inheritable(fd))
        except OSError:
            saved[fd] = None
    try:
        os.dup2(requests, 3)
        os.dup2(answers, 4)
        return subprocess.Popen(
            [sys.executable, "-I", str(SERVER)], pass_fds=(3, 4), cwd=cwd,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    finally:
        for fd, copy in saved.items():
            if copy is None:
                os.close(fd)
            else:
                os.dup2(copy[0], fd, inheritable=copy[1])
                os.close(copy[0])


class _Drain:
    """Reads one of the server's output pipes to EOF on a thread, as the agent does."""

    def __init__(self, pipe: Any) -> None:
        self._fd = pipe.fileno()
        self._pipe = pipe
        self._data = bytearray()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while chunk := os.read(self._fd, 65536):
            self._data += chunk

    def text(self) -> str:
        """Everything written, once every writer has closed the pipe."""
        self._thread.join(WAIT_SECONDS)
        if self._thread.is_alive():
            raise AssertionError("an output pipe did not reach EOF in time")
        self._pipe.close()
        return self._data.decode("utf-8", errors="backslashreplace")


def _deadline() -> float:
    return time.monotonic() + WAIT_SECONDS


def _wait_for(fd: int, readable: bool, deadline: float) -> None:
    remaining = deadline - time.monotonic()
    ready = select.select([fd] if readable else [], [] if readable else [fd], [],
                          max(remaining, 0))
    if not ready[0] and not ready[1]:
        raise AssertionError("the server did not read or answer in time")


class ReplServer:
    """One server process and the agent's end of its channel."""

    def __init__(self, cwd: str) -> None:
        request_read, request_write = (_high_fd(fd) for fd in os.pipe())
        answer_read, answer_write = (_high_fd(fd) for fd in os.pipe())
        try:
            self.process = _popen_with_channel(request_read, answer_write, cwd)
        finally:
            os.close(request_read)
            os.close(answer_write)
        self._requests: int | None = request_write
        self._answers = answer_read
        os.set_blocking(self._requests, False)
        self.stdout = _Drain(self.process.stdout)
        self.stderr = _Drain(self.process.stderr)

    def send_bytes(self, data: bytes) -> None:
        assert self._requests is not None
        view, deadline = memoryview(data), _deadline()
        while view:
            _wait_for(self._requests, readable=False, deadline=deadline)
            try:
                view = view[os.write(self._requests, view):]
            except BlockingIOError:
                continue

    def send(self, request: dict[str, Any]) -> None:
        payload = json.dumps(request).encode()
        self.send_bytes(struct.pack(">I", len(payload)) + payload)

    def _read_exactly(self, count: int, deadline: float) -> bytes:
        data = b""
        while len(data) < count:
            _wait_for(self._answers, readable=True, deadline=deadline)
            chunk = os.read(self._answers, count - len(data))
            if not chunk:
                break
            data += chunk
        return data

    def read_answer(self) -> dict[str, Any] | None:
        """The next answer, or None when the server closed the channel without one."""
        deadline = _deadline()
        header = self._read_exactly(4, deadline)
        if not header:
            return None
        assert len(header) == 4, "the answer channel ended inside a header"
        (length,) = struct.unpack(">I", header)
        payload = self._read_exactly(length, deadline)
        assert len(payload) == length, "the answer channel ended inside a frame"
        answer = json.loads(payload.decode("utf-8"))
        assert isinstance(answer, dict)
        return answer

    def run(self, code: str, **fields: Any) -> dict[str, Any]:
        self.send({"code": code, **fields})
        answer = self.read_answer()
        assert answer is not None, "the server ended without answering"
        return answer

    def close_requests(self) -> None:
        if self._requests is not None:
            os.close(self._requests)
            self._requests = None

    def wait(self) -> int:
        """The exit status, after checking that no answer came without a request."""
        status = self.process.wait(WAIT_SECONDS)
        leftover = self._read_exactly(1, _deadline())
        assert leftover == b"", "the server wrote an answer nobody asked for"
        return status

    def finish(self) -> tuple[int, str, str]:
        """Closes the request channel (clean EOF) and returns the status, stdout and stderr."""
        self.close_requests()
        status = self.wait()
        return status, self.stdout.text(), self.stderr.text()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(WAIT_SECONDS)

    def cleanup(self) -> None:
        if self.process.poll() is None:
            self.kill()
        self.close_requests()
        os.close(self._answers)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


class ReplTestCase(unittest.TestCase):
    def setUp(self) -> None:
        work = tempfile.TemporaryDirectory()
        self.addCleanup(work.cleanup)
        self.work_directory = os.path.realpath(work.name)

    def start(self) -> ReplServer:
        server = ReplServer(self.work_directory)
        self.addCleanup(server.cleanup)
        return server

    def assertNoServerFrames(self, stderr: str) -> None:
        self.assertNotIn("python_repl", stderr)
        self.assertNotIn("asyncio", stderr)


class StateTest(ReplTestCase):
    def test_variables_survive_between_cells(self) -> None:
        server = self.start()
        self.assertEqual(server.run("x = 41"), {"exit_code": 0})
        self.assertEqual(server.run("x + 1"), {"exit_code": 0, "value": "42"})
        self.assertEqual(server.run("import math\ndef area(r):\n    return math.pi * r * r"),
                         {"exit_code": 0})
        self.assertEqual(server.run("round(area(1), 2)"), {"exit_code": 0, "value": "3.14"})
        self.assertEqual(server.finish(), (0, "", ""))

    def test_cells_run_in_main_with_builtins(self) -> None:
        server = self.start()
        self.assertEqual(server.run("__name__")["value"], "'__main__'")
        self.assertEqual(server.run("import builtins\n__builtins__ is builtins")["value"], "True")
        pickled = "import pickle\nclass Point:\n    pass\ntype(pickle.loads(pickle.dumps(Point())))"
        self.assertEqual(server.run(pickled)["value"], "<class '__main__.Point'>")
        self.assertEqual(server.finish()[0], 0)

    def test_work_directory_is_cwd_and_importable(self) -> None:
        Path(self.work_directory, "helper.py").write_text("ANSWER = 42\n")
        server = self.start()
        self.assertEqual(server.run("import os\nos.getcwd()")["value"], repr(self.work_directory))
        self.assertEqual(server.run("import helper\nhelper.ANSWER")["value"], "42")
        self.assertEqual(server.finish()[0], 0)


_FAKE_DISPLAY_HOOK = """import sys, types
hook = types.ModuleType('plimsoll_display')
hook.calls = 0
def show_figures():
    hook.calls += 1
    if hook.calls == 3:
        raise RuntimeError('cannot draw')
hook.show_figures = show_figures
sys.modules['plimsoll_display'] = hook"""


class DisplaysTest(ReplTestCase):
    """The image's displays hook (image/variants/data/python) runs after every cell."""

    def test_figures_left_open_are_shown_after_every_cell(self) -> None:
        server = self.start()
        self.assertEqual(server.run(_FAKE_DISPLAY_HOOK), {"exit_code": 0})
        self.assertEqual(server.run("hook.calls")["value"], "1")
        # The third call fails: the cell still answers, the failure is on stderr.
        self.assertEqual(server.run("hook.calls")["value"], "2")
        self.assertEqual(server.run("hook.calls")["value"], "3")
        status, _, stderr = server.finish()
        self.assertEqual(status, 0)
        self.assertIn("a figure could not be saved as a display: RuntimeError('cannot draw')",
                      stderr)

    def test_without_the_hook_nothing_is_called(self) -> None:
        server = self.start()
        self.assertEqual(server.run("import sys\n'plimsoll_display' in sys.modules")["value"],
                         "False")
        self.assertEqual(server.finish(), (0, "", ""))


class ValueTest(ReplTestCase):
    def test_last_expression_gives_the_value(self) -> None:
        server = self.start()
        self.assertEqual(server.run("1 + 1"), {"exit_code": 0, "value": "2"})
        self.assertEqual(server.run("'text'"), {"exit_code": 0, "value": "'text'"})
        self.assertEqual(server.run("a = 2\nb = 3\na * b"), {"exit_code": 0, "value": "6"})

    def test_statements_and_none_give_no_value(self) -> None:
        server = self.start()
        for code in ("y = 3", "None", "print('shown')", "if True:\n    5", "def f():\n    return 1",
                     "", "# only a comment"):
            with self.subTest(code=code):
                self.assertEqual(server.run(code), {"exit_code": 0})
        self.assertEqual(server.finish(), (0, "shown\n", ""))

    def test_underscore_is_the_last_value(self) -> None:
        server = self.start()
        self.assertEqual(server.run("6 * 7")["value"], "42")
        self.assertEqual(server.run("_ + 1")["value"], "43")
        self.assertEqual(server.run("None"), {"exit_code": 0})
        self.assertEqual(server.run("_")["value"], "43")  # None does not replace it

    def test_value_is_cut_on_a_character_boundary(self) -> None:
        server = self.start()
        accented = "'é' * 10"  # repr is "'" + 10 two-byte characters + "'": 22 bytes
        self.assertEqual(server.run(accented, value_cap_bytes=4),
                         {"exit_code": 0, "value": "'é", "value_truncated": True})
        self.assertEqual(server.run(accented, value_cap_bytes=5),
                         {"exit_code": 0, "value": "'éé", "value_truncated": True})
        self.assertEqual(server.run(accented, value_cap_bytes=0),
                         {"exit_code": 0, "value": "", "value_truncated": True})
        self.assertEqual(server.run(accented, value_cap_bytes=22),
                         {"exit_code": 0, "value": "'" + "é" * 10 + "'"})
        default_cap = server.run("'x' * 70000")
        self.assertEqual(default_cap["value"], "'" + "x" * 65535)
        self.assertIs(default_cap["value_truncated"], True)

    def test_lone_surrogate_in_a_repr_is_escaped(self) -> None:
        server = self.start()
        code = "class S:\n    def __repr__(self):\n        return '\\ud800'\nS()"
        self.assertEqual(server.run(code), {"exit_code": 0, "value": "\\ud800"})

    def test_repr_that_raises_is_an_error_with_its_traceback(self) -> None:
        server = self.start()
        code = ("class Bad:\n    def __repr__(self):\n        raise RuntimeError('no repr')\n"
                "kept = 1\nBad()")
        self.assertEqual(server.run(code, cell=1), {"exit_code": 1})
        self.assertEqual(server.run("kept")["value"], "1")
        status, _, stderr = server.finish()
        self.assertEqual(status, 0)
        self.assertEqual(stderr, "Traceback (most recent call last):\n"
                                 '  File "<cell 1>", line 3, in __repr__\n'
                                 "    raise RuntimeError('no repr')\n"
                                 "RuntimeError: no repr\n")


class ErrorTest(ReplTestCase):
    def test_exception_keeps_state_and_hides_server_frames(self) -> None:
        server = self.start()
        self.assertEqual(server.run("def fail():\n    raise ValueError('boom')", cell=1),
                         {"exit_code": 0})
        self.assertEqual(server.run("kept = 'yes'\nfail()\nnot_reached = 1", cell=2),
                         {"exit_code": 1})
        self.assertEqual(server.run("kept")["value"], "'yes'")
        self.assertEqual(server.run("'not_reached' in globals()")["value"], "False")
        status, stdout, stderr = server.finish()
        self.assertEqual((status, stdout), (0, ""))
        self.assertEqual(stderr, "Traceback (most recent call last):\n"
                                 '  File "<cell 2>", line 2, in <module>\n'
                                 "    fail()\n"
                                 '  File "<cell 1>", line 2, in fail\n'
                                 "    raise ValueError('boom')\n"
                                 "ValueError: boom\n")

    def test_chained_exception_is_printed_whole(self) -> None:
        server = self.start()
        code = "try:\n    {}['k']\nexcept KeyError as e:\n    raise TypeError('t') from e"
        self.assertEqual(server.run(code), {"exit_code": 1})
        stderr = server.finish()[2]
        self.assertIn("KeyError: 'k'", stderr)
        self.assertIn("direct cause of the following exception", stderr)
        self.assertTrue(stderr.endswith("TypeError: t\n"), stderr)
        self.assertNoServerFrames(stderr)

    def test_cell_numbers_name_the_file(self) -> None:
        server = self.start()
        self.assertEqual(server.run("1/0")["exit_code"], 1)
        self.assertEqual(server.run("1/0", cell=7)["exit_code"], 1)
        self.assertEqual(server.run("1/0")["exit_code"], 1)  # the server's own count goes on
        stderr = server.finish()[2]
        self.assertEqual([line for line in stderr.splitlines() if "File" in line],
                         ['  File "<cell 1>", line 1, in <module>',
                          '  File "<cell 7>", line 1, in <module>',
                          '  File "<cell 3>", line 1, in <module>'])

    def test_syntax_error_is_printed_like_the_repl_and_state_survives(self) -> None:
        server = self.start()
        server.run("kept = 5")
        self.assertEqual(server.run("x = = 1", cell=2), {"exit_code": 1})
        self.assertEqual(server.run("kept")["value"], "5")
        status, _, stderr = server.finish()
        self.assertEqual(status, 0)
        self.assertEqual(stderr, '  File "<cell 2>", line 1\n'
                                 "    x = = 1\n"
                                 "        ^\n"
                                 "SyntaxError: invalid syntax\n")

    def test_syntax_error_found_after_parsing_shows_its_line(self) -> None:
        server = self.start()
        self.assertEqual(server.run("x = 1\nreturn x", cell=4), {"exit_code": 1})
        self.assertEqual(server.run("'x' in globals()")["value"], "False")  # nothing ran
        stderr = server.finish()[2]
        self.assertEqual(stderr, '  File "<cell 4>", line 2\n'
                                 "    return x\n"
                                 "    ^^^^^^^^\n"
                                 "SyntaxError: 'return' outside function\n")

    def test_input_raises_eof_error(self) -> None:
        server = self.start()
        self.assertEqual(server.run("input()"), {"exit_code": 1})
        self.assertEqual(server.run("import sys\nsys.stdin.read()")["value"], "''")
        stderr = server.finish()[2]
        self.assertTrue(stderr.endswith("EOFError: EOF when reading a line\n"), stderr)
        self.assertNoServerFrames(stderr)


class SystemExitTest(ReplTestCase):
    def test_system_exit_ends_the_interpreter_with_its_status(self) -> None:
        cases = [("exit()", 0, ""), ("raise SystemExit", 0, ""), ("quit(3)", 3, ""),
                 ("import sys\nsys.exit(7)", 7, ""), ("import sys\nsys.exit(-1)", 255, ""),
                 ("import sys\nsys.exit(None)", 0, ""), ("raise SystemExit(True)", 1, ""),
                 ("import sys\nsys.exit('bye')", 1, "bye\n"),
                 ("import asyncio\nawait asyncio.sleep(0)\nraise SystemExit(4)", 4, "")]
        for code, status, stderr in cases:
            with self.subTest(code=code):
                server = self.start()
                server.run("print('before')")
                self.assertEqual(server.run(code),
                                 {"exit_code": status, "interpreter_ended": True})
                self.assertEqual(server.wait(), status)
                self.assertEqual(server.stdout.text(), "before\n")
                self.assertEqual(server.stderr.text(), stderr)


class ProtocolTest(ReplTestCase):
    def _assert_refused(self, frame: bytes, close_after: bool = True) -> None:
        server = self.start()
        self.assertEqual(server.run("1")["value"], "1")  # earlier cells were answered
        server.send_bytes(frame)
        if close_after:
            server.close_requests()
        self.assertEqual(server.wait(), 3)  # and no answer to the bad frame
        self.assertIn("python_repl: ", server.stderr.text())

    def test_malformed_requests_end_with_status_3_and_no_answer(self) -> None:
        def framed(payload: bytes) -> bytes:
            return struct.pack(">I", len(payload)) + payload

        payloads = [b"{not json", b"\xff\xfe{}", b"[]", b'"code"', b"null", b"{}",
                    b'{"code": 1}', b'{"code": null}', b'{"code": "1", "code": "2"}',
                    b'{"code": "1", "value_cap_bytes": "9"}',
                    b'{"code": "1", "value_cap_bytes": -1}',
                    b'{"code": "1", "value_cap_bytes": true}',
                    b'{"code": "1", "value_cap_bytes": NaN}',
                    b'{"code": "1", "cell": 1.5}', b'{"code": "1", "unknown": 0}']
        for payload in payloads:
            with self.subTest(payload=payload):
                self._assert_refused(framed(payload))
        with self.subTest("EOF inside a header"):
            self._assert_refused(b"\x00\x00")
        with self.subTest("EOF inside a body"):
            self._assert_refused(struct.pack(">I", 20) + b'{"code": ')

    def test_oversize_length_is_refused_before_the_body(self) -> None:
        # The request pipe stays open: the server must not wait for 16 MiB + 1 bytes.
        self._assert_refused(struct.pack(">I", 16 * MIB + 1), close_after=False)
        self._assert_refused(struct.pack(">I", 0xFFFFFFFF), close_after=False)

    def test_frame_of_exactly_16_mib_is_accepted(self) -> None:
        server = self.start()
        prefix, suffix = b'{"code": "40 + 2 #', b'"}'
        payload = prefix + b"x" * (16 * MIB - len(prefix) - len(suffix)) + suffix
        server.send_bytes(struct.pack(">I", len(payload)) + payload)
        self.assertEqual(server.read_answer(), {"exit_code": 0, "value": "42"})
        self.assertEqual(server.finish()[0], 0)

    def test_clean_eof_exits_0(self) -> None:
        server = self.start()
        self.assertEqual(server.finish(), (0, "", ""))
        server = self.start()
        server.run("x = 1")
        self.assertEqual(server.finish(), (0, "", ""))

    def test_missing_channel_exits_3(self) -> None:
        result = subprocess.run([sys.executable, "-I", str(SERVER)], stdin=subprocess.DEVNULL,
                                capture_output=True, timeout=WAIT_SECONDS, check=False)
        self.assertEqual(result.returncode, 3)
        self.assertIn(b"python_repl: fds 3 and 4", result.stderr)


class ChannelIsolationTest(ReplTestCase):
    def test_cell_cannot_reach_the_channel(self) -> None:
        server = self.start()
        is_open = "import os\ndef is_open(fd):\n    try:\n        os.fstat(fd)\n" \
                  "        return True\n    except OSError:\n        return False\n"
        self.assertEqual(server.run(is_open + "(is_open(3), is_open(4))")["value"],
                         "(False, False)")
        # The channel now sits at >= 100 with close-on-exec set.
        moved = ("import fcntl\n"
                 "[(fd, bool(fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC))"
                 " for fd in range(3, 1024) if is_open(fd)]")
        self.assertEqual(server.run(moved)["value"], "[(100, True), (101, True)]")

    def test_programs_a_cell_starts_do_not_inherit_the_channel(self) -> None:
        server = self.start()
        code = ("import os, subprocess\n"
                "os.system('ls -l /proc/self/fd')\n"
                "subprocess.run(['ls', '-l', '/proc/self/fd'], close_fds=False, check=True)\nNone")
        self.assertEqual(server.run(code), {"exit_code": 0})
        status, stdout, _ = server.finish()
        self.assertEqual(status, 0)
        listings = [line.split()[-3:] for line in stdout.splitlines() if " -> " in line]
        self.assertEqual(len(listings), 8, stdout)  # 0, 1, 2 and ls's own 3, twice
        for number, _, target in listings:
            if number == "3":
                self.assertTrue(target.startswith("/proc/"), stdout)  # the listed directory
            else:
                self.assertIn(number, ("0", "1", "2"), stdout)


class OutputTest(ReplTestCase):
    def test_output_is_in_the_pipes_before_the_answer(self) -> None:
        # Nothing ends a line, so only the server's flush puts this in the pipes; the kill
        # right after the answer leaves anything still buffered unwritten.
        server = self.start()
        code = "import sys\nprint('out', end='')\nsys.stderr.write('err')\nNone"
        self.assertEqual(server.run(code), {"exit_code": 0})
        server.kill()
        self.assertEqual((server.stdout.text(), server.stderr.text()), ("out", "err"))

    def test_replaced_stdout_is_flushed_then_restored(self) -> None:
        server = self.start()
        # `kept` stops garbage collection from flushing the replacement on the server's behalf.
        code = ("import sys\nkept = sys.stdout = open(1, 'w', closefd=False)\n"
                "print('through the replacement', end='')")
        self.assertEqual(server.run(code), {"exit_code": 0})
        self.assertEqual(server.run("sys.stdout is sys.__stdout__")["value"], "True")
        server.kill()
        self.assertEqual(server.stdout.text(), "through the replacement")

    def test_closed_stdout_is_reopened_for_the_next_cell(self) -> None:
        server = self.start()
        self.assertEqual(server.run("import sys\nsys.stdout.close()"), {"exit_code": 0})
        self.assertEqual(server.run("print('still here')"), {"exit_code": 0})
        self.assertEqual(server.finish(), (0, "still here\n", ""))

    def test_prints_and_child_output_keep_their_order(self) -> None:
        server = self.start()
        code = ("import os, sys\nprint('a')\nos.system('echo b')\nprint('c')\n"
                "print('e1', file=sys.stderr)\nos.system('echo e2 >&2')\n"
                "print('e3', file=sys.stderr)")
        self.assertEqual(server.run(code), {"exit_code": 0})
        self.assertEqual(server.run("print('d')"), {"exit_code": 0})
        self.assertEqual(server.finish(), (0, "a\nb\nc\nd\n", "e1\ne2\ne3\n"))

    def test_large_output_does_not_deadlock(self) -> None:
        server = self.start()
        code = ("import sys\nsys.stdout.write('o' * (1 << 20))\n"
                "sys.stderr.write('e' * (1 << 20))\nNone")
        self.assertEqual(server.run(code), {"exit_code": 0})
        status, stdout, stderr = server.finish()
        self.assertEqual((status, len(stdout), len(stderr)), (0, MIB, MIB))
        self.assertEqual(set(stdout + stderr), {"o", "e"})


class AwaitTest(ReplTestCase):
    def test_top_level_await(self) -> None:
        server = self.start()
        self.assertEqual(server.run("import asyncio\nawait asyncio.sleep(0, 42)")["value"], "42")
        self.assertEqual(server.run("v = await asyncio.sleep(0, 'kept')"), {"exit_code": 0})
        self.assertEqual(server.run("v")["value"], "'kept'")

    def test_tasks_live_on_one_loop_across_cells(self) -> None:
        server = self.start()
        # Only the last line awaits, yet the statements before it also run inside the loop.
        code = ("import asyncio\ntask = asyncio.create_task(asyncio.sleep(0, 5))\n"
                "await asyncio.sleep(0)")
        self.assertEqual(server.run(code), {"exit_code": 0})
        self.assertEqual(server.run("await task")["value"], "5")
        self.assertEqual(server.run("late = asyncio.create_task(asyncio.sleep(0, 6))\nawait late")
                         ["value"], "6")

    def test_exception_after_await_hides_asyncio_frames(self) -> None:
        server = self.start()
        code = "import asyncio\nawait asyncio.sleep(0)\nraise ValueError('after await')"
        self.assertEqual(server.run(code, cell=3), {"exit_code": 1})
        self.assertEqual(server.run("asyncio.__name__")["value"], "'asyncio'")
        stderr = server.finish()[2]
        self.assertEqual(stderr, "Traceback (most recent call last):\n"
                                 '  File "<cell 3>", line 3, in <module>\n'
                                 "    raise ValueError('after await')\n"
                                 "ValueError: after await\n")


if __name__ == "__main__":
    unittest.main()
