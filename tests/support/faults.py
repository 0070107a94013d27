"""Faults a TomTom stand-in can inject: `stub.route(method, pattern, respond=fault)`.

Each factory returns a responder for `tests.support.tomtom_stub.TomTomStub` that answers one
request the way a broken, slow or hostile server might. Plain status answers (429 with a
`Retry-After`, 5xx, invalid JSON) need no responder: `stub.route(..., status=, headers=, body=)`.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator

from tests.support.tomtom_stub import Responder


def _head(status: int = 200, headers: dict[str, str] | None = None) -> bytes:
    lines = [
        f"HTTP/1.1 {status} X",
        "Content-Type: application/json",
        *(f"{k}: {v}" for k, v in (headers or {}).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _forever() -> None:
    await asyncio.Event().wait()


def hang_before_headers() -> Responder:
    """Read the request, then never answer."""

    async def respond(writer: asyncio.StreamWriter) -> None:
        await _forever()

    return respond


def stall_mid_body(body: bytes = b'{"results": []}' * 20) -> Responder:
    """Send the headers and half the body (with the full `Content-Length`), then nothing more."""

    async def respond(writer: asyncio.StreamWriter) -> None:
        writer.write(_head(headers={"Content-Length": str(len(body))}) + body[: len(body) // 2])
        await writer.drain()
        await _forever()

    return respond


def drip_feed(body: bytes = b'{"summary": {}, "results": []}' + b" " * 200, interval: float = 0.1) -> Responder:
    """Send the headers at once, then the body one byte per `interval` seconds: every read is
    quick, the whole answer is not."""

    async def respond(writer: asyncio.StreamWriter) -> None:
        writer.write(_head(headers={"Content-Length": str(len(body))}))
        await writer.drain()
        for i in range(len(body)):
            writer.write(body[i : i + 1])
            await writer.drain()
            await asyncio.sleep(interval)

    return respond


def reset() -> Responder:
    """Abort the connection with a TCP reset instead of answering."""

    async def respond(writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    return respond


def chunked(chunks: Iterable[bytes], headers: dict[str, str] | None = None) -> Responder:
    """A 200 in chunked transfer encoding (no `Content-Length`), streamed chunk by chunk.

    `chunks` is iterated once per request: give a collection (or `Replay`), not a generator,
    when the route answers more than one request."""

    async def respond(writer: asyncio.StreamWriter) -> None:
        writer.write(_head(headers={"Transfer-Encoding": "chunked", **(headers or {})}))
        for chunk in chunks:
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    return respond


class Replay:
    """An iterable that calls `factory` for a fresh iterator each time it is iterated."""

    def __init__(self, factory: Callable[[], Iterable[bytes]]) -> None:
        self._factory = factory

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._factory())


def oversized(total: int, *, declare_length: bool = False) -> Responder:
    """`total` bytes of a JSON object; by default without `Content-Length`, so only counting
    while reading can stop it."""
    filler = b" " * 65536

    def chunks() -> Iterable[bytes]:
        yield b'{"results": ['
        sent = 13
        while sent < total - 2:
            piece = filler[: total - 2 - sent]
            sent += len(piece)
            yield piece
        yield b"]}"

    if not declare_length:
        return chunked(Replay(chunks))

    async def respond(writer: asyncio.StreamWriter) -> None:
        writer.write(_head(headers={"Content-Length": str(total)}))
        for chunk in chunks():
            writer.write(chunk)
            await writer.drain()

    return respond


@functools.cache
def gzip_bomb(decoded: int) -> bytes:
    """A gzip member that inflates to a JSON object of `decoded` bytes (mostly spaces)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [compressor.compress(b'{"results": [')]
    block = b" " * (1024 * 1024)
    left = decoded - 15
    while left > 0:
        parts.append(compressor.compress(block[:left]))
        left -= len(block)
    parts += [compressor.compress(b"]}"), compressor.flush()]
    return b"".join(parts)


def decompression_bomb(decoded: int) -> Responder:
    """A small gzip-encoded 200 (with `Content-Length`) that inflates to `decoded` bytes."""
    body = gzip_bomb(decoded)

    async def respond(writer: asyncio.StreamWriter) -> None:
        writer.write(_head(headers={"Content-Encoding": "gzip", "Content-Length": str(len(body))}) + body)
        await writer.drain()

    return respond
