"""httpx's API over aiohttp's connection pool and compiled HTTP/1.1 parser, for TomTom requests.

`httpx-aiohttp`'s transport sends an `httpx.Request` through an `aiohttp.ClientSession` and
hands back an `httpx.Response` whose stream is aiohttp's, undecoded (`auto_decompress=False`):
the client's own bounded decoding (`tools.tomtom.client.read_bounded`) still sees every byte
as sent. Connections are kept alive and reused (HTTP/1.1; aiohttp does not speak HTTP/2). On
loopback one such request costs a fraction of httpcore's pure-Python one
(docs/adr/0002-official-sdk-low-level-server.md, "Upstream requests").

One correction to the package's error mapping: it reports any `aiohttp.ClientConnectionError`
(a refused connection, a server that hangs up) as `httpx.ConnectTimeout`; here only a timeout
stays one, and the rest are `httpx.ConnectError`, as httpx's own transport says.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import httpx
from httpx_aiohttp import AiohttpTransport


@contextlib.contextmanager
def _timeouts_only() -> Iterator[None]:
    try:
        yield
    except httpx.ConnectTimeout as exc:
        if isinstance(exc.__cause__, TimeoutError):  # aiohttp's timeouts are TimeoutErrors
            raise
        raise httpx.ConnectError(str(exc)) from exc.__cause__


class _Body(httpx.AsyncByteStream):
    def __init__(self, stream: httpx.AsyncByteStream) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _timeouts_only():
            async for chunk in self._stream:
                yield chunk

    async def aclose(self) -> None:
        with _timeouts_only():
            await self._stream.aclose()


class TomTomTransport(AiohttpTransport):
    """`AiohttpTransport` with a connection failure that is not a timeout said as one."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        with _timeouts_only():
            response = await super().handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _Body(response.stream)
        return response
