"""The kept Python interpreter of a session: runs cells sent by plimsoll-guest, one at a time.

The guest agent starts this server once per session and sends it one cell per call. The
contract, which the agent side (C++) relies on:

Start
    ``python3 -I python_repl.py`` (the agent carries this file and runs it as ``python3 -I -c
    SOURCE``; both start the same way) with fd 3 = requests (the server reads), fd 4 = answers (the
    server writes), fd 0 = /dev/null, fd 1 and 2 = pipes the agent drains (the cells' stdout
    and stderr), cwd = the session's work directory. The server first moves fds 3 and 4 to
    descriptors >= 100 with close-on-exec set and closes 3 and 4, so no program a cell starts
    inherits the channel and ``input()`` can only reach /dev/null. If fd 3 or 4 is not open
    it exits with status 3. The work directory is put first on ``sys.path``, as it is for a
    ``python3 main.py`` job.

Frames (both directions)
    A 4-byte big-endian unsigned length, then that many bytes of UTF-8 JSON holding one object.

Request
    ``{"code": str, "value_cap_bytes": int >= 0 (default 65536), "cell": int >= 0 (default:
    this server's count of requests, from 1)}``; the cell's file name is ``"<cell N>"``.
    A length over 16 MiB (refused before the body is read), bytes that are not UTF-8, invalid
    JSON (including NaN/Infinity and repeated keys), a non-object, a missing or non-string
    ``code``, a field of the wrong type or an unknown field, or EOF inside a frame: the server
    writes one line to stderr and exits with status 3 without answering. EOF at a frame
    boundary: it exits with status 0.

Answer (written after sys.stdout and sys.stderr are flushed, so the cell's output is in the
pipes before the agent sees the answer)
    ``{"exit_code": 0}`` when the cell ran, plus ``"value": repr(v)`` when the cell ends with
    an expression whose value ``v`` is not None (``v`` is also bound to ``builtins._`` as the
    interactive interpreter does). The value is cut to ``value_cap_bytes`` bytes of UTF-8 on a
    character boundary, with ``"value_truncated": true`` when cut (lone surrogates are written
    as backslash escapes, so the answer is always valid UTF-8).
    ``{"exit_code": 1}`` for a SyntaxError (printed like the REPL prints it), an uncaught
    exception or a ``repr`` that raised (traceback on stderr, starting at the first frame that
    is not the server's: the server's own and asyncio's leading frames are left out).
    ``{"exit_code": n, "interpreter_ended": true}`` for SystemExit: n is 0 for None, the code
    modulo 256 for an int (what the process status will be), 1 otherwise (the code is printed
    on stderr). The server then exits with status n at once (``os._exit``: atexit handlers are
    not run and threads are not waited for; the agent reaps what the session leaves).

Between cells
    One globals dict (the ``__main__`` module, with ``__builtins__``) lives for the session, so
    names, imports and the cwd persist; state also survives exceptions and SyntaxErrors. After
    every cell the server puts its own sys.stdin, sys.stdout and sys.stderr back (flushing the
    cell's replacements first, reopening fd 1 or 2 if the cell closed its stream). stdout and
    stderr are line-buffered. Top-level ``await`` works: a cell that awaits anywhere runs wholly
    inside one event loop kept for the session (created at the first such cell), so tasks it
    creates make progress whenever a later cell awaits; a cell that does not await runs outside
    the loop, as a script would.

Not handled
    SIGINT is not part of the protocol: the agent kills the whole server when a call overruns
    its deadline, and the next call gets a fresh server. A cell that calls ``os._exit`` or
    dies from a signal ends the server without an answer; the agent sees the interpreter end.
    A cell runs in this process and can forge its own answer: that is only its own output, and
    the agent bounds-checks every frame (see README.md).
"""

import ast
import builtins
import fcntl
import functools
import json
import linecache
import os
import struct
import sys
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, NoReturn, TextIO

if TYPE_CHECKING:
    import asyncio

REQUESTS_FD = 3
ANSWERS_FD = 4
CHANNEL_FD_FLOOR = 100  # the channel moves to the first free descriptors at or above this
MAX_REQUEST_BYTES = 16 * 1024 * 1024
DEFAULT_VALUE_CAP_BYTES = 65536
PROTOCOL_ERROR_STATUS = 3

_HEADER = struct.Struct(">I")
_COMPILE_FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
_CO_COROUTINE = 0x0080  # inspect.CO_COROUTINE, without importing inspect at start-up
_REQUEST_FIELDS = frozenset({"code", "value_cap_bytes", "cell"})


class ProtocolError(Exception):
    """The agent sent something outside the contract; the server ends with status 3."""


@dataclass(frozen=True)
class Request:
    code: str
    value_cap_bytes: int
    cell: int | None


# ---- the channel -------------------------------------------------------------------------------


class Channel:
    """Frames in from the requests descriptor and out to the answers descriptor."""

    def __init__(self, requests_fd: int, answers_fd: int) -> None:
        self._requests: IO[bytes] = open(requests_fd, "rb")
        self._answers: IO[bytes] = open(answers_fd, "wb")

    @classmethod
    def take_inherited(cls) -> "Channel":
        """Moves fds 3 and 4 out of reach of input() and of programs a cell starts."""
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, CHANNEL_FD_FLOOR)
                 for fd in (REQUESTS_FD, ANSWERS_FD)]
        os.close(REQUESTS_FD)
        os.close(ANSWERS_FD)
        return cls(moved[0], moved[1])

    def read_request(self) -> Request | None:
        """The next request, or None on EOF at a frame boundary. Raises ProtocolError."""
        header = self._requests.read(_HEADER.size)
        if not header:
            return None
        if len(header) < _HEADER.size:
            raise ProtocolError("the request channel ended inside a frame header")
        (length,) = _HEADER.unpack(header)
        if length > MAX_REQUEST_BYTES:
            raise ProtocolError(f"a request frame of {length} bytes is over the 16 MiB limit")
        payload = self._requests.read(length)
        if len(payload) < length:
            raise ProtocolError("the request channel ended inside a frame")
        return parse_request(payload)

    def write_answer(self, answer: dict[str, Any]) -> None:
        payload = json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode()
        self._answers.write(_HEADER.pack(len(payload)) + payload)
        self._answers.flush()


def parse_request(payload: bytes) -> Request:
    """Decodes one request frame strictly. Raises ProtocolError."""
    try:
        message = json.loads(payload.decode("utf-8"), object_pairs_hook=_object_without_repeats,
                             parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError) as error:  # JSONDecodeError is a ValueError
        raise ProtocolError(f"the request is not UTF-8 JSON: {error}") from None
    if not isinstance(message, dict):
        raise ProtocolError("the request is not a JSON object")
    unknown = message.keys() - _REQUEST_FIELDS
    if unknown:
        raise ProtocolError(f"the request has unknown fields: {sorted(unknown)}")
    code = message.get("code")
    if not isinstance(code, str):
        raise ProtocolError('the request has no string "code"')
    value_cap_bytes = message.get("value_cap_bytes", DEFAULT_VALUE_CAP_BYTES)
    if not _is_count(value_cap_bytes):
        raise ProtocolError('"value_cap_bytes" is not a non-negative integer')
    cell = message.get("cell")
    if cell is not None and not _is_count(cell):
        raise ProtocolError('"cell" is not a non-negative integer')
    return Request(code=code, value_cap_bytes=value_cap_bytes, cell=cell)


def _object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("an object repeats a key")
    return result


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# ---- the standard streams ----------------------------------------------------------------------


class StandardStreams:
    """The server's own sys.stdin/stdout/stderr, put back and flushed after every cell."""

    def __init__(self) -> None:
        # Line buffering keeps a cell's prints in order with the output of programs it starts.
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]
        self._stdin, self._stdout, self._stderr = sys.stdin, sys.stdout, sys.stderr

    def restore_and_flush(self) -> None:
        # A cell's replacement may buffer writes to fd 1 or 2: flush it before dropping it.
        for replacement in (sys.stdout, sys.stderr):
            _flush_quietly(replacement)
        self._stdout = _reopened_if_closed(self._stdout, 1)
        self._stderr = _reopened_if_closed(self._stderr, 2)
        sys.stdin, sys.stdout, sys.stderr = self._stdin, self._stdout, self._stderr
        self.flush()

    def flush(self) -> None:
        _flush_quietly(self._stdout)
        _flush_quietly(self._stderr)


def _flush_quietly(stream: object) -> None:
    # The agent may have stopped reading, or a cell's replacement may be anything: the answer
    # must still go out.
    try:
        stream.flush()  # type: ignore[attr-defined]
    except Exception:
        pass


def _reopened_if_closed(stream: TextIO, fd: int) -> TextIO:
    if not stream.closed:
        return stream
    try:  # sys.stdout and sys.stderr do not own fds 1 and 2, so these are normally still open
        return open(fd, "w", buffering=1, encoding=stream.encoding, errors=stream.errors,
                    closefd=False)
    except OSError:
        return stream


# ---- running cells -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CompiledCell:
    body: types.CodeType
    last_expression: types.CodeType | None  # its value is the cell's value

    @property
    def codes(self) -> tuple[types.CodeType, ...]:
        return (self.body,) if self.last_expression is None else (self.body, self.last_expression)

    @property
    def awaits(self) -> bool:
        """Whether the cell uses top-level await (compiled code then returns a coroutine)."""
        return any(code.co_flags & _CO_COROUTINE for code in self.codes)


class Session:
    """One interpreter state for every cell of a session."""

    def __init__(self, streams: StandardStreams) -> None:
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = main  # so pickle and `import __main__` find the cells' names
        self._globals = main.__dict__
        self._streams = streams
        self._requests_seen = 0
        self._loop: "asyncio.AbstractEventLoop | None" = None

    def run(self, request: Request) -> dict[str, Any]:
        """Runs one cell and returns its answer; the cell's output is flushed on return."""
        self._requests_seen += 1
        filename = f"<cell {self._requests_seen if request.cell is None else request.cell}>"
        answer, report_error = self._run(request, filename)
        _show_open_figures()
        # Errors go to the server's stderr (fd 2) even if the cell replaced sys.stderr.
        self._streams.restore_and_flush()
        if report_error is not None:
            report_error()
            self._streams.flush()
        return answer

    def _run(self, request: Request,
             filename: str) -> tuple[dict[str, Any], Callable[[], None] | None]:
        # Registered first, so tracebacks and warnings show the cell's lines, later calls too.
        lines = request.code.splitlines(keepends=True)
        linecache.cache[filename] = (len(request.code), None, lines, filename)
        try:
            compiled = _compile(request.code, filename)
        except Exception as error:  # also ValueError, RecursionError, MemoryError
            return {"exit_code": 1}, functools.partial(_print_compile_error, error, lines)
        try:
            value = self._evaluate(compiled)
            shown = None if value is None else repr(value)
        except SystemExit as exit_request:
            status, message = _exit_status(exit_request.code)
            ended = {"exit_code": status, "interpreter_ended": True}
            return ended, None if message is None else functools.partial(_print_line, message)
        except BaseException as error:  # a cell may raise anything
            return {"exit_code": 1}, functools.partial(_print_traceback, error)
        answer: dict[str, Any] = {"exit_code": 0}
        if shown is not None:
            builtins._ = value  # type: ignore[attr-defined]
            answer["value"], truncated = _cut_utf8(shown, request.value_cap_bytes)
            if truncated:
                answer["value_truncated"] = True
        return answer, None

    def _evaluate(self, compiled: CompiledCell) -> object:
        if compiled.awaits:
            return self._event_loop().run_until_complete(self._evaluate_awaiting(compiled))
        value = None
        for code in compiled.codes:
            value = eval(code, self._globals)  # running the cell is the point
        return value

    async def _evaluate_awaiting(self, compiled: CompiledCell) -> object:
        # The whole cell runs inside the loop, so its plain statements see a running loop too.
        value = None
        for code in compiled.codes:
            value = eval(code, self._globals)
            if code.co_flags & _CO_COROUTINE:
                value = await value
        return value

    def _event_loop(self) -> "asyncio.AbstractEventLoop":
        if self._loop is None:
            import asyncio  # only sessions that await pay for it

            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
        return self._loop


def _show_open_figures() -> None:
    """The figures a cell left open become its displays (the image's plimsoll_display, when
    the image has it: the data variant; docs/guest-images.md, "Displays")."""
    hook = sys.modules.get("plimsoll_display")
    show = getattr(hook, "show_figures", None)
    if show is None:
        return
    try:
        show()
    except Exception as error:  # a figure that cannot be drawn is the cell's problem
        _print_line(f"plimsoll: a figure could not be saved as a display: {error!r}")


def _compile(code: str, filename: str) -> CompiledCell:
    """Splits off a final expression statement, as the interactive interpreter shows its value."""
    tree = compile(code, filename, "exec", flags=ast.PyCF_ONLY_AST | _COMPILE_FLAGS,
                   dont_inherit=True)
    last_expression = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last_expression = ast.Expression(tree.body.pop().value)
    body = compile(tree, filename, "exec", flags=_COMPILE_FLAGS, dont_inherit=True)
    if last_expression is None:
        return CompiledCell(body, None)
    return CompiledCell(body, compile(last_expression, filename, "eval", flags=_COMPILE_FLAGS,
                                      dont_inherit=True))


def _print_compile_error(error: Exception, lines: list[str]) -> None:
    # Errors found after parsing (e.g. 'return' outside function) come without the line's text.
    if isinstance(error, SyntaxError) and error.text is None and error.lineno:
        if 0 < error.lineno <= len(lines):
            error.text = lines[error.lineno - 1]
    traceback.print_exception(type(error), error, None, file=sys.stderr)


def _print_traceback(error: BaseException) -> None:
    frames = error.__traceback__
    while frames is not None and _is_machinery(frames.tb_frame):
        frames = frames.tb_next
    traceback.print_exception(type(error), error, frames, file=sys.stderr)


def _is_machinery(frame: types.FrameType) -> bool:
    """The server's own frames, and asyncio's between the server and an awaiting cell."""
    if frame.f_globals is globals():
        return True
    module = frame.f_globals.get("__name__")
    return isinstance(module, str) and (module == "asyncio" or module.startswith("asyncio."))


def _exit_status(code: object) -> tuple[int, str | None]:
    """The status the interpreter would exit with for SystemExit(code), and what it prints."""
    if code is None:
        return 0, None
    if isinstance(code, int):
        return code & 0xFF, None
    try:
        return 1, str(code)
    except Exception:  # a code whose str() raises still ends the session
        return 1, None


def _print_line(message: str) -> None:
    print(message, file=sys.stderr)


def _cut_utf8(text: str, cap_bytes: int) -> tuple[str, bool]:
    """At most cap_bytes of UTF-8, cut on a character boundary; and whether it was cut."""
    data = text.encode("utf-8", errors="backslashreplace")
    if len(data) <= cap_bytes:
        return data.decode("utf-8"), False
    end = cap_bytes
    while end > 0 and data[end] & 0xC0 == 0x80:  # a continuation byte: back off to its lead
        end -= 1
    return data[:end].decode("utf-8"), True


# ---- the server --------------------------------------------------------------------------------


def serve() -> NoReturn:
    try:
        channel = Channel.take_inherited()
    except OSError as error:
        _fail(f"fds {REQUESTS_FD} and {ANSWERS_FD} must be the request and answer pipes: {error}")
    streams = StandardStreams()
    sys.path.insert(0, os.getcwd())
    session = Session(streams)
    while True:
        try:
            request = channel.read_request()
        except ProtocolError as error:
            _fail(str(error))
        if request is None:
            streams.flush()
            os._exit(0)
        answer = session.run(request)
        try:
            channel.write_answer(answer)
        except OSError as error:
            _fail(f"cannot write the answer: {error}")
        if answer.get("interpreter_ended"):
            os._exit(answer["exit_code"])


def _fail(reason: str) -> NoReturn:
    print(f"python_repl: {reason}", file=sys.stderr)
    _flush_quietly(sys.stderr)
    os._exit(PROTOCOL_ERROR_STATUS)


if __name__ == "__main__":
    serve()
