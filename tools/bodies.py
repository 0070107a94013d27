"""Reading an HTTP body as it streams in: within size limits, decoded a slice at a time, and
never holding the event loop for long.

`read_bounded(chunks, content_encoding, max_bytes=, max_decoded_bytes=)` returns the decoded
body, or raises `BodyRefused` saying why (`reason`), as soon as it knows:

- `too_large`: more than `max_bytes` arrived (as sent, compressed or not);
- `inflates_too_large`: decompression produced more than `max_decoded_bytes`;
- `encoding`: a `Content-Encoding` other than empty/`identity`, `gzip` (several members
  allowed) or `deflate` (zlib-wrapped or raw);
- `corrupt`: the compressed data cannot be decoded; `truncated`: it ends before its end.

Decompression produces at most `DECODE_SLICE` bytes per step, so memory never holds more than
the limit plus one slice, and the reader hands the event loop back (`asyncio.sleep(0)`) after
every `YIELD_EVERY` bytes of body: however well a bomb compresses, other requests run between
slices, and a deadline (`asyncio.timeout`) around the read can end it. The body grows in one
buffer, not a list of slices: past malloc's mmap threshold it is one mapping, handed back to the
system when it is dropped.

Callers turn a `BodyRefused` into their own error (the TomTom client: `malformed`, naming the
setting; the OAuth key cache: a refused key set).
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator
from typing import Literal

DECODE_SLICE = 64 * 1024
"""Most bytes one decompression step may produce: the bound on what a bomb inflates at once."""
YIELD_EVERY = 1024 * 1024
"""Bytes of body (about a millisecond of inflation) after which the reader lets the event loop run."""

Reason = Literal["too_large", "inflates_too_large", "encoding", "corrupt", "truncated"]


class BodyRefused(Exception):
    """Why a body was not read to its end (see the module docstring)."""

    def __init__(self, reason: Reason, encoding: str = "") -> None:
        super().__init__(reason)
        self.reason: Reason = reason
        self.encoding = encoding
        """The `Content-Encoding` refused, for `encoding` (at most 40 characters)."""


def _decoder(encoding: str) -> zlib._Decompress | None:
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise BodyRefused("encoding", encoding[:40])


async def read_bounded(
    chunks: AsyncIterator[bytes], content_encoding: str, *, max_bytes: int, max_decoded_bytes: int
) -> bytes:
    """The decoded body from `chunks` as sent, or `BodyRefused` (see the module docstring)."""
    encoding = content_encoding.strip().lower()
    decoder = _decoder(encoding)
    body = bytearray()
    received = 0
    next_yield = YIELD_EVERY
    first = True
    async for chunk in chunks:
        received += len(chunk)
        if received > max_bytes:
            raise BodyRefused("too_large")
        if decoder is None:
            body += chunk
        else:
            data = chunk
            while data:
                try:
                    out = decoder.decompress(data, DECODE_SLICE)
                except zlib.error:
                    if first and encoding == "deflate":  # raw deflate, without the zlib wrapper
                        decoder, first = zlib.decompressobj(-zlib.MAX_WBITS), False
                        continue
                    raise BodyRefused("corrupt") from None
                first = False
                if len(body) + len(out) > max_decoded_bytes:
                    raise BodyRefused("inflates_too_large")
                body += out
                if decoder.eof:
                    data = decoder.unused_data
                    if data and encoding != "deflate":  # the next gzip member
                        decoder = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
                    else:
                        data = b""
                else:
                    data = decoder.unconsumed_tail
                if len(body) >= next_yield:
                    next_yield = len(body) + YIELD_EVERY
                    await asyncio.sleep(0)
        if len(body) >= next_yield:
            next_yield = len(body) + YIELD_EVERY
            await asyncio.sleep(0)
    if decoder is not None and not decoder.eof and received:
        raise BodyRefused("truncated")
    return bytes(body)
