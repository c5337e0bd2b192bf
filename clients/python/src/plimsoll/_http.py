"""A small HTTP/1.1 exchange, without I/O: the request writer and a response parser with caps.

The sync and async clients drive :class:`ResponseParser` with the bytes they receive.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

MAX_HEAD_BYTES = 64 * 1024
_MAX_LINE = 4096

Headers = List[Tuple[str, str]]


class HttpError(Exception):
    """The answer is not readable HTTP/1.1."""


class BodyTooLarge(HttpError):
    """The body is above the cap (by Content-Length or as it streams)."""


def encode_request(method: str, target: str, host: str, headers: Sequence[Tuple[str, str]],
                   body: Optional[bytes]) -> bytes:
    lines = [f"{method} {target} HTTP/1.1\r\nHost: {host}\r\n"]
    for name, value in headers:
        lines.append(f"{name}: {value}\r\n")
    if body is not None:
        lines.append(f"Content-Length: {len(body)}\r\n\r\n")
        return "".join(lines).encode("latin-1") + body
    lines.append("\r\n")
    return "".join(lines).encode("latin-1")


_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILER, _UNTIL_CLOSE, _DONE = range(8)


class ResponseParser:
    """Parses one response. ``feed`` returns True when the response is complete."""

    __slots__ = ("max_body", "status", "headers", "keep_alive", "stray", "_state", "_buf",
                 "_parts", "_size", "_remaining")

    def __init__(self, max_body: int) -> None:
        self.max_body = max_body
        self.status = 0
        self.headers: Headers = []
        self.keep_alive = True
        self.stray = False  # bytes came after the response's end
        self._state = _HEAD
        self._buf = bytearray()
        self._parts: List[bytes] = []
        self._size = 0
        self._remaining = 0

    @property
    def done(self) -> bool:
        return self._state == _DONE

    @property
    def body(self) -> bytes:
        return self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)

    def values(self, name: str) -> List[str]:
        return [v for k, v in self.headers if k == name]

    def feed(self, data: bytes) -> bool:
        state = self._state
        if state == _DONE:
            if data:
                self.stray = True
                self.keep_alive = False
            return True
        if state == _HEAD:
            self._buf += data
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buf) > MAX_HEAD_BYTES:
                    raise HttpError(f"its header is larger than {MAX_HEAD_BYTES} bytes")
                return False
            if end > MAX_HEAD_BYTES:
                raise HttpError(f"its header is larger than {MAX_HEAD_BYTES} bytes")
            head = bytes(self._buf[:end])
            data = bytes(self._buf[end + 4:])
            self._buf = bytearray()
            self._parse_head(head)
            if 100 <= self.status < 200:  # an interim answer: the real one follows
                self.headers = []
                self._state = _HEAD
                return self.feed(data)
            state = self._state
            if state == _DONE:
                return self.feed(data)
        if state == _LENGTH:
            need = self._remaining
            if len(data) < need:
                if data:
                    self._parts.append(data)
                self._remaining -= len(data)
                return False
            self._parts.append(data[:need] if len(data) > need else data)
            self._remaining = 0
            self._state = _DONE
            if len(data) > need:
                self.stray = True
                self.keep_alive = False
            return True
        if state == _UNTIL_CLOSE:
            self._size += len(data)
            if self._size > self.max_body:
                raise BodyTooLarge("its body is larger than the limit")
            self._parts.append(data)
            return False
        self._buf += data
        return self._chunked()

    def feed_eof(self) -> bool:
        """The peer closed. True when that completes the response (a body read until close)."""
        if self._state == _UNTIL_CLOSE:
            self._state = _DONE
            self.keep_alive = False
            return True
        if self._state == _DONE:
            self.keep_alive = False
            return True
        raise HttpError("the connection closed before a complete answer")

    def _parse_head(self, head: bytes) -> None:
        text = head.decode("latin-1")
        lines = text.split("\r\n")
        status_line = lines[0]
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or parts[0] not in ("HTTP/1.1", "HTTP/1.0") or len(parts[1]) != 3 \
                or not parts[1].isdigit():
            raise HttpError("its status line is not HTTP/1.1")
        self.status = int(parts[1])
        headers: Headers = []
        for line in lines[1:]:
            colon = line.find(":")
            if colon <= 0 or line[0] in " \t" or line[colon - 1] in " \t":
                raise HttpError("it has a malformed header line")
            headers.append((line[:colon].lower(), line[colon + 1:].strip(" \t")))
        self.headers = headers
        if self.status < 200:
            return
        connection = ",".join(v for k, v in headers if k == "connection").lower()
        tokens = {t.strip() for t in connection.split(",")}
        self.keep_alive = parts[0] == "HTTP/1.1" and "close" not in tokens
        if self.status in (204, 304):
            self._state = _DONE
            return
        codings = [v for k, v in headers if k == "transfer-encoding"]
        lengths = [v for k, v in headers if k == "content-length"]
        if codings:
            if lengths:
                raise HttpError("it has both Transfer-Encoding and Content-Length")
            listed = [c.strip().lower() for c in ",".join(codings).split(",") if c.strip()]
            if listed != ["chunked"]:
                raise HttpError(f"its transfer encoding {','.join(codings)!r} is not chunked")
            self._state = _CHUNK_SIZE
            return
        if lengths:
            values = {v.strip() for v in ",".join(lengths).split(",")}
            value = values.pop() if len(values) == 1 else ""
            if not value.isdigit() or not value.isascii() or len(value) > 19:
                raise HttpError("its Content-Length is not one number")
            length = int(value)
            if length > self.max_body:
                raise BodyTooLarge(f"its body of {length} bytes (Content-Length) is larger than "
                                   "the limit")
            if length == 0:
                self._parts.append(b"")
                self._state = _DONE
            else:
                self._remaining = length
                self._state = _LENGTH
            return
        self.keep_alive = False
        self._state = _UNTIL_CLOSE

    def _chunked(self) -> bool:
        buf = self._buf
        while True:
            state = self._state
            if state == _CHUNK_SIZE:
                end = buf.find(b"\r\n")
                if end < 0:
                    if len(buf) > _MAX_LINE:
                        raise HttpError("a chunk size line is too long")
                    return False
                line = bytes(buf[:end]).split(b";", 1)[0].strip()
                del buf[:end + 2]
                try:
                    if not line or len(line) > 16:
                        raise ValueError
                    size = int(line, 16)
                except ValueError:
                    raise HttpError("a chunk size is not hexadecimal") from None
                if size == 0:
                    self._state = _TRAILER
                    continue
                if self._size + size > self.max_body:
                    raise BodyTooLarge("its chunked body is larger than the limit")
                self._size += size
                self._remaining = size
                self._state = _CHUNK_DATA
            elif state == _CHUNK_DATA:
                if not buf:
                    return False
                take = min(self._remaining, len(buf))
                self._parts.append(bytes(buf[:take]))
                del buf[:take]
                self._remaining -= take
                if self._remaining == 0:
                    self._state = _CHUNK_END
            elif state == _CHUNK_END:
                if len(buf) < 2:
                    return False
                if buf[:2] != b"\r\n":
                    raise HttpError("a chunk does not end with CRLF")
                del buf[:2]
                self._state = _CHUNK_SIZE
            elif state == _TRAILER:
                end = buf.find(b"\r\n")
                if end < 0:
                    if len(buf) > _MAX_LINE:
                        raise HttpError("a trailer line is too long")
                    return False
                del buf[:end + 2]
                if end == 0:
                    self._state = _DONE
                    if buf:
                        self.stray = True
                        self.keep_alive = False
                    if not self._parts:
                        self._parts.append(b"")
                    return True
            else:
                return True
