"""Content-Length framing on the companion server's Unix socket.

One frame is a header block, a blank line and a body of exactly ``Content-Length``
bytes (UTF-8 JSON)::

    Content-Length: 52\\r\\n
    \\r\\n
    {"jsonrpc":"2.0","id":1,"method":"cellmate/hello",...}

This is the framing of LSP and DAP (and vscode-jsonrpc's stream reader/writer), so the
companion server can use its one implementation. Other headers (``Content-Type``) are
tolerated and ignored.
"""

from __future__ import annotations

import asyncio

HEADER_LIMIT = 8 * 1024
"""Longest header block accepted (bytes); real ones are ~20 bytes."""


class FramingError(Exception):
    """The peer sent bytes that are not a well-formed frame."""


def encode_frame(body: bytes) -> bytes:
    """Return ``body`` as one frame."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_frame(reader: asyncio.StreamReader, max_size: int) -> bytes | None:
    """Read one frame's body from ``reader``.

    Returns ``None`` on a clean end of stream (between frames). Raises
    :class:`FramingError` for a malformed header block or a body over ``max_size``
    bytes, and :class:`asyncio.IncompleteReadError` when the stream ends inside a frame.
    """
    length: int | None = None
    header_bytes = 0
    while True:
        try:
            line = await reader.readline()
        except ValueError as err:  # a line past the StreamReader's limit
            raise FramingError("header line too long") from err
        if not line:
            if header_bytes == 0:
                return None
            raise asyncio.IncompleteReadError(b"", None)
        if not line.endswith(b"\n"):
            raise asyncio.IncompleteReadError(line, None)
        header_bytes += len(line)
        if header_bytes > HEADER_LIMIT:
            raise FramingError("header block too long")
        text = line.rstrip(b"\r\n")
        if not text:
            if length is not None:
                break
            if header_bytes == len(line):
                header_bytes = 0  # a stray blank line between frames
                continue
            raise FramingError("header block without Content-Length")
        name, sep, value = text.partition(b":")
        if not sep:
            raise FramingError(f"malformed header line {text[:80]!r}")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise FramingError(f"bad Content-Length {value[:40]!r}") from None
            if length < 0:
                raise FramingError("negative Content-Length")
            if length > max_size:
                raise FramingError(f"frame of {length} bytes exceeds the {max_size}-byte limit")
    return await reader.readexactly(length)
