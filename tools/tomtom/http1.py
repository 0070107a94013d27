"""The HTTP/1.1 client the TomTom client sends its requests with: pooled keep-alive connections
per event loop, responses parsed by `httptools` (llhttp, the parser uvicorn serves with).

It does what the TomTom client asks of HTTP and nothing else (docs/adr/0033-geocode-cpu.md):

- One `Pool` per event loop (`pool()`): idle connections kept per origin (scheme, host, port),
  newest first, for `IDLE_SECONDS` and at most `MAX_IDLE` per origin; a connection the server
  closed, or one idle too long, is never used again. `close_pool()` closes them (ASGI lifespan
  shutdown, the end of a CLI run).
- A request is one write: the request line, `Host`, the caller's headers and the body.
  Nothing is added that the caller did not ask for but `Host` and `Content-Length`; no cookie
  is kept, no redirect followed.
- Connections go directly or through the proxy `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` name,
  by the one rule of tools/connect.py (shared with the downloads and the key-set fetch): an
  `https` origin through a `CONNECT` tunnel, TLS still verifying TomTom's name; a plain `http`
  one with its absolute URL as the request target (and `Proxy-Authorization` when the proxy's
  URL has credentials). A name's addresses are raced (RFC 8305), so one that drops packets is
  passed over.
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
- The head of an answer (status line and headers) is bounded as it arrives, before the parser
  sees it (`Limits.max_header_bytes`, TOMTOM_MAX_HEADER_BYTES; `MAX_HEADER_LINE_BYTES` per line,
  `MAX_HEADERS` headers): past any of them reading stops at once, the connection is closed and
  the request fails with `HeadRefused`. The line limit is checked on the raw bytes because
  httptools joins the pieces of one header value by copying, which is quadratic in its length.
- Interim answers (`100 Continue`, `103 Early Hints`, any 1xx but `101`) are read and dropped:
  the caller sees the final answer, read on the same connection, and nothing of an interim one
  (their heads count towards the head limit, so endless ones stop too).
- At most `Limits.max_connections` connections per origin are in use at once
  (TOMTOM_MAX_CONNECTIONS); a request over it waits for one to be handed back, for as long as
  its caller's deadline lets it. A connection is only opened while no idle one is left, so the
  connections open to an origin, idle ones included, never pass the cap either (but for one
  just closed whose close has not reached the server yet).
- A request on a pooled connection that turns out dead before any byte of its answer arrived is
  sent once more, on a new connection, when sending it twice cannot do harm:
  - always when the request provably never left: the connection was found closed, or with the
    server's close already waiting on its socket, when taken from the pool (it is then not used
    at all), or the socket refused the write;
  - otherwise (the request was handed to the network, then the connection ended with no answer)
    only for GET and HEAD, which are idempotent. A POST may have reached the server and been
    acted on, so it is not sent again (RFC 9110, section 9.2.2): the caller sees an
    `UpstreamError`.

Everything else that goes wrong is an `UpstreamError`: refused or reset connections, an answer
that is not HTTP/1.1, or one cut off before its end.
"""

from __future__ import annotations

import asyncio
import os
import select
import ssl
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import Literal

import certifi
import httptools

from tools import connect

IDLE_SECONDS = 5.0
"""How long an idle connection is kept for reuse."""
MAX_IDLE = 100
"""Idle connections kept per origin at most."""
RETRIED_METHODS = frozenset({"GET", "HEAD"})
"""Methods sent again when a pooled connection ended after the request was sent and before any
answer: idempotent ones (module docstring)."""
MAX_HEADER_LINE_BYTES = 16 * 1024
"""Longest line of an answer's head (the status line, or one header's name and value)."""
MAX_HEADERS = 256
"""Most headers one answer's head may have (a TomTom answer has about 15)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one request may cost: the head of its answer, and the connections of its origin."""

    max_header_bytes: int = 64 * 1024
    """Largest head: the status line and every header, interim answers' included (TOMTOM_MAX_HEADER_BYTES)."""
    max_connections: int = 64
    """Connections to one origin in use at once, per event loop (TOMTOM_MAX_CONNECTIONS)."""


DEFAULT_LIMITS = Limits()

Origin = tuple[str, str, int]
_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pool] = weakref.WeakKeyDictionary()


class UpstreamError(Exception):
    """The request could not be sent or its answer not read as HTTP."""


class ConnectTimeout(UpstreamError):
    """No connection could be opened within the connect timeout."""


HeadLimit = Literal["head", "line", "count"]


class HeadRefused(UpstreamError):
    """The answer's head passed a limit (`which`: the whole head, one line, or the number of
    headers, `limit` bytes or headers); reading stopped and the connection was closed."""

    def __init__(self, which: HeadLimit, limit: int) -> None:
        super().__init__(f"the answer's head passed its {which} limit ({limit})")
        self.which: HeadLimit = which
        self.limit = limit


class _Stale(UpstreamError):
    """A pooled connection was dead before any of the answer arrived; `unsent` when the request
    provably never left (then any method may be sent again, else only `RETRIED_METHODS`)."""

    def __init__(self, *, unsent: bool) -> None:
        super().__init__("the pooled connection was closed")
        self.unsent = unsent


def _readable(fd: int) -> bool:
    """Whether the socket `fd` has something to read now (its peer's close counts), without waiting."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])  # Windows: no poll


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
        self._limits = DEFAULT_LIMITS
        self._head_bytes = 0
        """Bytes of the answer's head fed to the parser so far, interim answers' included."""
        self._line_bytes = 0
        """Bytes of the head line under way that earlier reads brought."""
        self._interim = False
        self.received = False
        """Whether any byte of the answer to the request under way has arrived."""
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
        self.received = True
        try:
            if self.headers_done:
                self.parser.feed_data(data)
            else:
                self._feed_head(data)
        except HeadRefused as refused:
            self._fail(refused)
            self.close()
        except httptools.HttpParserUpgrade:  # a `101`: its answer is read, the connection is not kept
            self.keep_alive = False
        except httptools.HttpParserError as exc:
            cause = exc.__context__  # a callback's (`on_header`) own error
            self._fail(cause if isinstance(cause, HeadRefused) else UpstreamError("the answer is not HTTP/1.1"))
            self.close()

    def eof_received(self) -> bool | None:
        return None  # close the transport: a half-closed connection is never reused

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self._busy or self.complete:
            return
        if not self.received and self.reused:
            self._fail(_Stale(unsent=False))  # the request was handed to the network
        elif self.headers_done and "content-length" not in self.headers and "transfer-encoding" not in self.headers:
            self.on_message_complete()  # a body delimited by the connection's end
        else:
            self._fail(UpstreamError("the connection ended before the answer did"))

    # -- the head, bounded before the parser sees it ------------------------------------------

    def _feed_head(self, data: bytes) -> None:
        """Feed `data` to the parser a head at a time, within the head limits; what follows the
        final answer's head (its body) goes to the parser unchecked."""
        view = memoryview(data)
        start = 0
        while start < len(data) and not self.headers_done:
            if self._head_bytes >= self._limits.max_header_bytes:
                raise HeadRefused("head", self._limits.max_header_bytes)
            end = self._head_end(data, start)
            self._head_bytes += end - start
            self.parser.feed_data(view[start:end])
            start = end
        if start < len(data):
            self.parser.feed_data(view[start:])

    def _head_end(self, data: bytes, start: int) -> int:
        """Where in `data` to stop feeding the head under way: just past its blank line, or
        where the head limit or `data` ends. Each line is measured on the way (linear in the
        bytes), and one longer than `MAX_HEADER_LINE_BYTES` is refused before any of it is fed."""
        stop = min(len(data), start + self._limits.max_header_bytes - self._head_bytes)
        if self._line_bytes + stop - start <= MAX_HEADER_LINE_BYTES:
            # No line can pass the limit in so few bytes (a usual answer's first read): fed
            # whole, a body after the head's end with it; only the line under way is measured.
            newline = data.rfind(b"\n", start, stop)
            self._line_bytes = stop - newline - 1 if newline >= 0 else self._line_bytes + stop - start
            return stop
        line, at = self._line_bytes, start
        while at < stop:
            newline = data.find(b"\n", at, stop)
            if newline < 0:
                line += stop - at
                at = stop
                break
            line += newline - at  # the line, without its "\n"
            if line > MAX_HEADER_LINE_BYTES:
                break
            at = newline + 1
            if line <= 1:  # "" or "\r": the blank line that ends a head
                self._line_bytes = 0
                return at
            line = 0
        if line > MAX_HEADER_LINE_BYTES:
            raise HeadRefused("line", MAX_HEADER_LINE_BYTES)
        self._line_bytes = line
        return at

    # -- httptools callbacks -----------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        self._raw_headers.append((name, value))
        if len(self._raw_headers) > MAX_HEADERS:
            raise HeadRefused("count", MAX_HEADERS)  # stops the parser; `data_received` reports it

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200 and status != 101:  # an interim answer: dropped, the final one follows
            self._interim = True
            self._raw_headers = []
            return
        self.status = status
        self.headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in self._raw_headers}
        self.headers_done = True
        self._wake()

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)
        self._wake()

    def on_message_complete(self) -> None:
        if self._interim:  # the end of an interim answer (it has no body)
            self._interim = False
            return
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

    def start(self, request: bytes, limits: Limits = DEFAULT_LIMITS) -> None:
        """Send one request (the connection is idle: nothing of an earlier answer is pending).

        A write the socket refuses closes the transport at once: then nothing of the request
        left (the connection was idle, its buffer empty), which `_Stale(unsent=True)` says."""
        self._busy = True
        self._chunks.clear()
        self._raw_headers = []
        self._limits = limits
        self._head_bytes = self._line_bytes = 0
        self._interim = self.received = False
        self.headers = {}
        self.status = 0
        self.headers_done = self.complete = self.keep_alive = False
        self.error = None
        assert self.transport is not None
        self.transport.write(request)
        if self.transport.is_closing():
            self.closed, self._busy = True, False  # nothing will be read: the loss is not reported again
            raise _Stale(unsent=True) if self.reused else UpstreamError("the request could not be sent")

    def idle_and_open(self) -> bool:
        """Whether a pooled connection may take a request: open, and nothing from the server
        waiting on its socket. Anything readable on an idle connection is its close (or talk
        out of turn) that the event loop has not delivered yet, so the connection is not used
        and nothing is sent on it (one `poll`, as urllib3 does before reusing a connection)."""
        transport = self.transport
        if self.closed or transport is None or transport.is_closing():
            return False
        sock = transport.get_extra_info("socket")
        return sock is None or not _readable(sock.fileno())

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

    def __init__(self, pool: Pool, origin: Origin, connection: _Connection, slot: asyncio.Semaphore) -> None:
        self._pool = pool
        self._origin = origin
        self._connection: _Connection | None = connection
        self._slot = slot
        """The origin's connection slot this answer holds (`Pool.request`), given back once."""
        self.status = connection.status
        self.headers = connection.headers

    def chunks(self) -> AsyncIterator[bytes]:
        assert self._connection is not None
        return self._connection.chunks()

    def close(self) -> None:
        """Close the connection now (nothing more of this answer will be read)."""
        self._end(reuse=False)

    def _end(self, *, reuse: bool) -> None:
        """Pool the connection (when its answer was read to its end and both sides keep it) or
        close it; then give the slot back, so a request waiting for one finds it pooled."""
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if reuse and connection.reusable():
            connection.finish()
            self._pool.release(self._origin, connection)
        else:
            connection.close()
        self._slot.release()

    async def __aenter__(self) -> Response:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._end(reuse=kind is None)


class Pool:
    """Keep-alive connections of one event loop, by origin (module docstring)."""

    def __init__(self) -> None:
        self._idle: dict[Origin, deque[_Connection]] = {}
        self._slots: dict[Origin, tuple[int, asyncio.Semaphore]] = {}
        """Per origin: the cap on connections in use, and their count (`_slot`)."""
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
            if now - connection.idle_since < IDLE_SECONDS and connection.idle_and_open():
                connection.reused = True
                return connection
            connection.close()
        return None

    async def _open(self, origin: Origin, connect_timeout: float) -> _Connection:
        """A new connection to `origin`, directly or through the environment's proxy, the
        name's addresses raced (tools/connect.py); TLS verifies the origin's host, also through
        a proxy's tunnel. A proxy that refuses is an `UpstreamError` caused by the
        `connect.ProxyError` that names it."""
        scheme, host, port = origin
        tls = self._tls_context() if scheme == "https" else None
        try:
            async with asyncio.timeout(connect_timeout):
                return await connect.open_connection(
                    _Connection, host, port, tls=tls, proxy=connect.proxy_for(scheme, host, port)
                )
        except TimeoutError:
            raise ConnectTimeout(f"no connection within {connect_timeout:g} s") from None
        except connect.ProxyError as exc:
            raise UpstreamError(str(exc)) from exc
        except (OSError, ssl.SSLError) as exc:
            raise UpstreamError(f"could not connect: {type(exc).__name__}") from None

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
        limits: Limits = DEFAULT_LIMITS,
    ) -> Response:
        """Send `method target` to `origin` and read the answer's status and headers, holding
        one of the origin's `limits.max_connections` slots until the `Response` is left."""
        scheme, host, port = origin
        name = f"[{host}]" if ":" in host else host  # an IPv6 address is bracketed, as in the URL
        default_port = 443 if scheme == "https" else 80
        proxy = connect.proxy_for(scheme, host, port) if scheme == "http" else None  # https: a tunnel (_open)
        lines = [
            f"{method} {connect.request_target(proxy, scheme, host, port, target)} HTTP/1.1",
            f"Host: {name}" if port == default_port else f"Host: {name}:{port}",
        ]
        if proxy is not None and proxy.authorization is not None:
            lines.append(f"Proxy-Authorization: {proxy.authorization}")
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")
        slot = self._slot(origin, limits.max_connections)
        await slot.acquire()  # within the caller's deadline: passing it cancels the wait
        try:
            connection = await self._send(method, origin, request, limits, connect_timeout)
        except BaseException:
            slot.release()
            raise
        return Response(self, origin, connection, slot)

    async def _send(
        self, method: str, origin: Origin, request: bytes, limits: Limits, connect_timeout: float
    ) -> _Connection:
        """The connection `request` was sent on, its answer's head read: a pooled one, or a new
        one; sent once more on a new one when a pooled one was dead and the rule allows it
        (module docstring)."""
        connection = self._pooled(origin)
        retried = False
        while True:
            if connection is None:
                connection = await self._open(origin, connect_timeout)
            try:
                connection.start(request, limits)
                await connection.read_head()
            except _Stale as stale:
                connection.close()
                if retried or not (stale.unsent or method in RETRIED_METHODS):
                    raise UpstreamError("the pooled connection was closed") from None
                retried, connection = True, None
                continue
            except BaseException:
                connection.close()
                raise
            return connection

    def _slot(self, origin: Origin, limit: int) -> asyncio.Semaphore:
        """The origin's count of connections in use, made on first use. A different limit (only
        tests change it within one event loop) starts a new count; answers holding the old one
        give it back there."""
        held = self._slots.get(origin)
        if held is None or held[0] != limit:
            held = self._slots[origin] = (limit, asyncio.Semaphore(limit))
        return held[1]

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
