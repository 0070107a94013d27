"""Sources: where the lines come from.

- A log file, plain or gzip, or stdin (`log_open`), read as lines of bounded length (`log_lines`).
- A log still being written (`follow`): its lines, then each line as it is appended, across
  rotations, with `IDLE` whenever it has caught up, so a batch does not wait for lines to come.
- The live path hands its lines over itself (analytics/live.py).

A line longer than `MAX_LINE_BYTES` is cut there (the batch stage calls it malformed); a stream
that breaks off (a truncated or corrupt gzip file) yields every complete line before the break,
then raises `BrokenLog`, which says where.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import sys
import threading
import zlib
from collections.abc import Iterator
from typing import Final, Protocol

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


class Lines:
    """Cuts blocks of bytes into lines without their newline, each cut at MAX_LINE_BYTES + 1 bytes
    (the rest of a longer line is dropped, so memory stays bounded and the line still counts once)."""

    def __init__(self) -> None:
        self.pending = b""
        """The start of the line not ended yet, at most MAX_LINE_BYTES + 1 bytes of it."""
        self.unended = 0
        """Bytes read since the last newline."""

    def cut(self, block: bytes) -> list[bytes]:
        """The lines `block` ends."""
        *complete, rest = block.split(b"\n")
        if complete:
            if self.pending:
                complete[0] = self.pending + complete[0]
            complete = [line if len(line) <= MAX_LINE_BYTES else line[: MAX_LINE_BYTES + 1] for line in complete]
            self.pending, self.unended = b"", 0
        self.unended += len(rest)
        if len(self.pending) <= MAX_LINE_BYTES:
            self.pending = (self.pending + rest)[: MAX_LINE_BYTES + 1]
        return complete

    def rest(self) -> list[bytes]:
        """The last line, when it has no newline."""
        pending, self.pending, self.unended = self.pending, b"", 0
        return [pending] if pending else []


def log_lines(stream: Readable) -> Iterator[bytes]:
    """The lines of a stream (see `Lines`). A last line without a newline is a line too.

    The stream is read in blocks of at most READ_BYTES with `read1`, which hands out what one
    read of the underlying stream decoded: when the stream breaks off, every complete line
    before the break has been yielded, and `BrokenLog` says after how many lines and bytes of
    (decompressed) log it broke and why."""
    lines, position, cutter = 0, 0, Lines()
    try:
        while block := stream.read1(READ_BYTES):
            position += len(block)
            complete = cutter.cut(block)
            lines += len(complete)
            yield from complete
        yield from cutter.rest()
    except (EOFError, zlib.error, OSError) as error:
        if isinstance(error, BrokenLog):
            raise
        raise BrokenLog(
            f"{error or type(error).__name__} (after line {lines:,}, byte {position - cutter.unended:,} of the log)"
        ) from None


class Idle:
    """What `follow` yields when the log has no new line for now."""


IDLE: Final = Idle()


def follow(path: str, *, poll: float = 1.0, stop: threading.Event | None = None) -> Iterator[bytes | Idle]:
    """The lines of a plain log that is still being written: from its start, then each line as it
    is appended, until `stop` is set. Whenever it has caught up it yields `IDLE` (a batch ends
    there instead of waiting for lines that may not come) and looks again `poll` seconds later.
    A line is yielded once its newline is written. When the log is rotated (another file at
    `path`) the rest of the old file is read, its unfinished last line too, then the new file from
    its start; when it is truncated in place (seen as a size below what was read), it is read
    again from its start, so a log truncated and rewritten past that size between two looks
    loses its first lines, as with `tail -F`. A missing file is waited for. Lines read twice (a
    copy made by rotating) are stored once, as in any rerun."""
    stop = stop or threading.Event()
    stream, cutter = None, Lines()
    while not stop.is_set():
        if stream is None:
            try:
                stream = open(path, "rb")  # noqa: SIM115 - closed below, when rotated or stopped
            except FileNotFoundError:
                yield IDLE
                stop.wait(poll)
                continue
        block = stream.read(READ_BYTES)
        if block:
            yield from cutter.cut(block)
            continue
        yield IDLE
        try:
            current = os.stat(path)
        except FileNotFoundError:
            current = None
        opened = os.fstat(stream.fileno())
        if current is None or current.st_ino != opened.st_ino:  # rotated: the old file is complete
            yield from cutter.rest()
            stream.close()
            stream = None
        elif current.st_size < stream.tell():  # truncated in place
            cutter = Lines()
            stream.seek(0)
        else:
            stop.wait(poll)
    if stream is not None:
        stream.close()
