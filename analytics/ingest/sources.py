"""Sources: where the lines come from. A log file, plain or gzip, or stdin (`log_open`), read as
lines of bounded length (`log_lines`); the live path hands its lines over itself (analytics/live.py).

A line longer than `MAX_LINE_BYTES` is cut there (the decode stage calls it malformed); a stream
that breaks off (a truncated or corrupt gzip file) yields every complete line before the break,
then raises `BrokenLog`, which says where.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import sys
import zlib
from collections.abc import Iterator
from typing import Protocol

MAX_LINE_BYTES = 1024 * 1024
"""Longer lines are malformed; no line the server writes comes near it."""
READ_BYTES = 256 * 1024
"""The most a read of the (decompressed) input hands out at once."""
GZIP_MAGIC = b"\x1f\x8b"


@contextlib.contextmanager
def log_open(path: str) -> Iterator[io.BufferedIOBase]:
    """A log file (or stdin for "-") as bytes, decompressed when it starts with gzip's magic bytes.
    Raises OSError when the file cannot be opened; stdin is left open."""
    raw = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115 - closed below
    try:
        # BufferedReader wants a raw stream; typeshed's BinaryIO (stdin's buffer) declares no readinto.
        buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)  # type: ignore[type-var]
        if buffered.peek(len(GZIP_MAGIC)).startswith(GZIP_MAGIC):
            # The GzipFile itself, not a BufferedReader over it: when the stream breaks (garbage
            # or a cut-off member after a complete one), a BufferedReader's read-ahead loses the
            # decoded lines it had gathered; GzipFile's read1 hands out what it decoded first.
            with gzip.GzipFile(fileobj=buffered, mode="rb") as unzipped:
                yield unzipped
        else:
            yield buffered
    finally:
        if path != "-":
            raw.close()


class Readable(Protocol):
    """A binary stream `log_lines` can read: a file, stdin's buffer, a GzipFile, BytesIO."""

    def read1(self, size: int = -1, /) -> bytes: ...


class BrokenLog(OSError):
    """The input broke off (a truncated or corrupt gzip file); says where."""


def log_lines(stream: Readable) -> Iterator[bytes]:
    """The lines of a stream, without their newline, each cut at MAX_LINE_BYTES + 1 bytes (the
    rest of a longer line is read and dropped, so memory stays bounded and the line still counts
    once). A last line without a newline is a line too.

    The stream is read in blocks of at most READ_BYTES with `read1`, which hands out what one
    read of the underlying stream decoded: when the stream breaks off, every complete line
    before the break has been yielded, and `BrokenLog` says after how many lines and bytes of
    (decompressed) log it broke and why."""
    lines = position = unended = 0  # unended: bytes read since the last newline
    pending = b""  # the start of the line not ended yet, at most MAX_LINE_BYTES + 1 bytes of it
    try:
        while block := stream.read1(READ_BYTES):
            position += len(block)
            *complete, rest = block.split(b"\n")
            if complete:
                if pending:
                    complete[0] = pending + complete[0]
                lines += len(complete)
                for line in complete:
                    yield line if len(line) <= MAX_LINE_BYTES else line[: MAX_LINE_BYTES + 1]
                pending, unended = b"", 0
            unended += len(rest)
            if len(pending) <= MAX_LINE_BYTES:
                pending = (pending + rest)[: MAX_LINE_BYTES + 1]
        if pending:
            lines += 1
            yield pending
    except (EOFError, zlib.error, OSError) as error:
        if isinstance(error, BrokenLog):
            raise
        raise BrokenLog(
            f"{error or type(error).__name__} (after line {lines:,}, byte {position - unended:,} of the log)"
        ) from None
