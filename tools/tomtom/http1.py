"""The HTTP/1.1 client the TomTom client sends its requests with: pooled keep-alive connections
per event loop, responses parsed by `httptools` (llhttp, the parser uvicorn serves with).

It does what the TomTom client asks of HTTP and nothing else (docs/adr/0033-geocode-cpu.md):

- One `Pool` per event loop (`pool()`): idle connections kept per origin (scheme, host, port),
  newest first, for `IDLE_SECONDS` and at most `MAX_IDLE` per origin; a connection the server
  closed, or one idle too long, is never used again. `close_pool()` closes them (ASGI lifespan
  shutdown, the end of a CLI run).
- A request is one write: the request line, `Host`, the caller's headers and the body.
  Nothing is added that the caller did not ask for but `Host` and `Content-Length`; no cookie
  is kept, no redirect followed, no proxy read from the environment.
- `https` through the standard library's TLS, verifying the server's name and certificate with
  certifi's roots, or the system's as `SSL_CERT_FILE` / `SSL_CERT_DIR` name them when either is
  set (a company's TLS-inspecting proxy; the key-set fetch's httpx reads both, the data-viz
  downloads `SSL_CERT_FILE` only: docs/adr/0039-outbound-http-stacks.md);
  opening a connection ends by `connect_timeout` (`ConnectTimeout`).
- The body streams (`Response.chunks()`), as the server sends it (no decompression here); it
  ends at `Content-Length`, the last chunk, or the connection's end when neither was sent. A
  connection goes back to the pool only when its answer was read to its end and both sides
  keep it alive; anything else (an error, a body left unread, a cancelled request: a deadline)
  closes it.
- A GET on a pooled connection the server had closed meanwhile (nothing of an answer arrived)
  is sent once more on a new connection, as browsers and aiohttp do.

Everything else that goes wrong is an `UpstreamError`: refused or reset connections, an answer
that is not HTTP/1.1, or one cut off before its end.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator
from types import TracebackType

import certifi
import httptools

IDLE_SECONDS = 5.0
"""How long an idle connection is kept for reuse."""
MAX_IDLE = 100
"""Idle connections kept per origin at most."""
RETRIED_METHODS = frozenset({"GET", "HEAD"})
"""Methods sent again when a pooled connection turned out closed before any answer."""

Origin = tuple[str, str, int]
_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pool] = weakref.WeakKeyDictionary()


class UpstreamError(Exception):
    """The request could not be sent or its answer not read as HTTP."""


class ConnectTimeout(UpstreamError):
    """No connection could be opened within the connect timeout."""


class _Stale(UpstreamError):
    """A pooled connection ended before any answer arrived (the request may be sent again)."""


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection: its parser and the answer being read."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed = False
        self.reused = False
        self.idle_since = 0.0
        self._busy = False
        self._waiter: asyncio.Future[None] | None = None
        self._chunks: deque[bytes] = deque()
        self._raw_headers: list[tuple[bytes, bytes]] = []
        self.headers: dict[str, str] = {}
        self.status = 0
        self.headers_done = False
        self.complete = False
        self.keep_alive = False
        """Whether both sides keep the connection after this answer (the parser forgets it once done)."""
        self.error: UpstreamError | None = None

    # -- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a stream transport

    def data_received(self, data: bytes) -> None:
        if not self._busy:  # nothing was asked: a server that talks out of turn is not reused
            self.close()
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self._fail(UpstreamError("the answer is not HTTP/1.1"))
            self.close()

    def eof_received(self) -> bool | None:
        return None  # close the transport: a half-closed connection is never reused

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self._busy or self.complete:
            return
        if not self.headers_done and not self._raw_headers and self.reused:
            self._fail(_Stale("the pooled connection was closed"))
        elif self.headers_done and "content-length" not in self.headers and "transfer-encoding" not in self.headers:
            self.on_message_complete()  # a body delimited by the connection's end
        else:
            self._fail(UpstreamError("the connection ended before the answer did"))

    # -- httptools callbacks -----------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        self._raw_headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in self._raw_headers}
        self.headers_done = True
        self._wake()

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)
        self._wake()

    def on_message_complete(self) -> None:
        self.complete = True
        self.keep_alive = self.parser.should_keep_alive() and not self.closed
        self._wake()

    # -- used by Response --------------------------------------------------------------------

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _fail(self, error: UpstreamError) -> None:
        self.error = error
        self._wake()

    async def _wait(self) -> None:
        if self.error is not None:
            raise self.error
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None
        if self.error is not None:
            raise self.error

    def start(self, request: bytes) -> None:
        """Send one request (the connection is idle: nothing of an earlier answer is pending)."""
        self._busy = True
        self._chunks.clear()
        self._raw_headers = []
        self.headers = {}
        self.status = 0
        self.headers_done = self.complete = self.keep_alive = False
        self.error = None
        assert self.transport is not None
        self.transport.write(request)

    async def read_head(self) -> None:
        while not self.headers_done:
            await self._wait()

    async def chunks(self) -> AsyncIterator[bytes]:
        while True:
            while self._chunks:
                yield self._chunks.popleft()
            if self.complete:
                return
            await self._wait()

    def reusable(self) -> bool:
        return self.complete and self.keep_alive and not self.closed and self.error is None

    def finish(self) -> None:
        self._busy = False

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class Response:
    """An answer being read: `status`, `headers` (names lower-cased; the last of repeated
    ones), and the body as sent (`chunks()`). Used as an async context manager; leaving it
    returns the connection to the pool or closes it (module docstring)."""

    def __init__(self, pool: Pool, origin: Origin, connection: _Connection) -> None:
        self._pool = pool
        self._origin = origin
        self._connection: _Connection | None = connection
        self.status = connection.status
        self.headers = connection.headers

    def chunks(self) -> AsyncIterator[bytes]:
        assert self._connection is not None
        return self._connection.chunks()

    def close(self) -> None:
        """Close the connection now (nothing more of this answer will be read)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    async def __aenter__(self) -> Response:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if kind is None and connection.reusable():
            connection.finish()
            self._pool.release(self._origin, connection)
        else:
            connection.close()


class Pool:
    """Keep-alive connections of one event loop, by origin (module docstring)."""

    def __init__(self) -> None:
        self._idle: dict[Origin, deque[_Connection]] = {}
        self._tls: ssl.SSLContext | None = None
        self.closed = False

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            chosen = os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR")
            # Without a file: the default verify paths, which are the ones those variables name.
            self._tls = ssl.create_default_context() if chosen else ssl.create_default_context(cafile=certifi.where())
        return self._tls

    def _pooled(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if not connection.closed and now - connection.idle_since < IDLE_SECONDS:
                connection.reused = True
                return connection
            connection.close()
        return None

    async def _open(self, origin: Origin, connect_timeout: float) -> _Connection:
        scheme, host, port = origin
        tls = self._tls_context() if scheme == "https" else None
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(connect_timeout):
                _, connection = await loop.create_connection(
                    _Connection, host, port, ssl=tls, server_hostname=host if tls else None
                )
        except TimeoutError:
            raise ConnectTimeout(f"no connection within {connect_timeout:g} s") from None
        except (OSError, ssl.SSLError) as exc:
            raise UpstreamError(f"could not connect: {type(exc).__name__}") from None
        return connection

    def release(self, origin: Origin, connection: _Connection) -> None:
        idle = self._idle.setdefault(origin, deque())
        if self.closed or len(idle) >= MAX_IDLE:
            connection.close()
            return
        connection.idle_since = time.monotonic()
        idle.append(connection)

    async def request(
        self,
        method: str,
        origin: Origin,
        target: str,
        headers: dict[str, str],
        body: bytes | None,
        *,
        connect_timeout: float,
    ) -> Response:
        """Send `method target` to `origin` and read the answer's status and headers."""
        scheme, host, port = origin
        name = f"[{host}]" if ":" in host else host  # an IPv6 address is bracketed, as in the URL
        default_port = 443 if scheme == "https" else 80
        lines = [f"{method} {target} HTTP/1.1", f"Host: {name}" if port == default_port else f"Host: {name}:{port}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")
        connection = self._pooled(origin)
        while True:
            if connection is None:
                connection = await self._open(origin, connect_timeout)
            try:
                connection.start(request)
                await connection.read_head()
            except _Stale:
                connection.close()
                if method not in RETRIED_METHODS:
                    raise UpstreamError("the pooled connection was closed") from None
                connection = None
                continue
            except BaseException:
                connection.close()
                raise
            return Response(self, origin, connection)

    def close(self) -> None:
        self.closed = True
        for idle in self._idle.values():
            while idle:
                idle.pop().close()


def pool() -> Pool:
    """The running event loop's pool (made on first use)."""
    loop = asyncio.get_running_loop()
    current = _pools.get(loop)
    if current is None or current.closed:
        current = _pools[loop] = Pool()
    return current


async def close_pool() -> None:
    """Close the running event loop's idle connections; the next request opens new ones."""
    current = _pools.pop(asyncio.get_running_loop(), None)
    if current is not None:
        current.close()
        await asyncio.sleep(0)  # let the transports close


def origin_of(scheme: str, host: str, port: int | None) -> Origin:
    return scheme, host, port if port is not None else (443 if scheme == "https" else 80)
