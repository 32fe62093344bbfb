"""Content-Length framing of the bridge (jupyterlab_cellmate/framing.py) on a real
asyncio StreamReader, fed byte-exact frames in every chunking: split frames, several
frames per chunk, oversize and malformed headers."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from jupyterlab_cellmate.framing import HEADER_LIMIT, FramingError, encode_frame, read_frame

MAX = 1024


def bodies() -> list[bytes]:
    return [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "cellmate/hello"}).encode(),
        "ünïcödé — 漢字 🐍".encode(),
        b"",
        b"x" * MAX,
    ]


def read_all(chunks: list[bytes], max_size: int = MAX) -> list[bytes | None]:
    """Feed ``chunks`` into a StreamReader as the reader reads; frames until the clean end (None)."""

    async def go() -> list[bytes | None]:
        reader = asyncio.StreamReader()

        async def feed() -> None:
            # One chunk per loop turn, so the reader really waits inside a frame.
            for chunk in chunks:
                reader.feed_data(chunk)
                await asyncio.sleep(0)
            reader.feed_eof()

        feeder = asyncio.ensure_future(feed())
        out: list[bytes | None] = []
        try:
            while True:
                body = await read_frame(reader, max_size)
                out.append(body)
                if body is None:
                    return out
        finally:
            feeder.cancel()

    return asyncio.run(go())


def test_encode_frame_is_byte_exact() -> None:
    assert encode_frame(b'{"a":1}') == b'Content-Length: 7\r\n\r\n{"a":1}'
    assert encode_frame("é".encode()) == b"Content-Length: 2\r\n\r\n\xc3\xa9"


def test_several_frames_in_one_chunk() -> None:
    stream = b"".join(encode_frame(b) for b in bodies())
    assert read_all([stream]) == [*bodies(), None]


@pytest.mark.parametrize("seed", range(20))
def test_frames_split_at_random_points(seed: int) -> None:
    stream = b"".join(encode_frame(b) for b in bodies())
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(stream)), k=min(12, len(stream) - 1)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]
    assert b"".join(chunks) == stream
    assert read_all(chunks) == [*bodies(), None]


def test_one_byte_at_a_time() -> None:
    stream = encode_frame(b'{"id":2}') + encode_frame(b"[]")
    assert read_all([stream[i : i + 1] for i in range(len(stream))]) == [b'{"id":2}', b"[]", None]


def test_other_headers_and_a_stray_blank_line_are_tolerated() -> None:
    stream = b"\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: 2\r\n\r\n{}"
    assert read_all([stream]) == [b"{}", None]


def test_oversize_frame_is_refused_before_its_body_is_read() -> None:
    with pytest.raises(FramingError, match=f"frame of {MAX + 1} bytes exceeds the {MAX}-byte limit"):
        read_all([b"Content-Length: %d\r\n\r\n" % (MAX + 1)])  # no body at all: never awaited


def test_exactly_max_size_is_accepted() -> None:
    assert read_all([encode_frame(b"y" * MAX)]) == [b"y" * MAX, None]


@pytest.mark.parametrize(
    ("stream", "message"),
    [
        (b"Content-Type: x\r\n\r\n{}", "header block without Content-Length"),
        (b"Content-Length: two\r\n\r\n", "bad Content-Length"),
        (b"Content-Length: -1\r\n\r\n", "negative Content-Length"),
        (b"garbage\r\n\r\n", "malformed header line"),
        (b"X-Pad: " + b"a" * HEADER_LIMIT + b"\r\nContent-Length: 2\r\n\r\n{}", "header block too long"),
    ],
)
def test_malformed_headers_raise_framing_error(stream: bytes, message: str) -> None:
    with pytest.raises(FramingError, match=message):
        read_all([stream])


def test_end_of_stream_inside_a_frame_is_incomplete_not_clean() -> None:
    with pytest.raises(asyncio.IncompleteReadError):
        read_all([encode_frame(b'{"id":3}')[:-2]])
    with pytest.raises(asyncio.IncompleteReadError):
        read_all([b"Content-Length: 2\r\n"])


def test_clean_end_between_frames_is_none() -> None:
    assert read_all([]) == [None]
