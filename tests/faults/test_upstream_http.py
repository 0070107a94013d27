"""The TomTom client against upstreams that misuse HTTP/1.1 itself (issue #47): heads that never
end, interim answers, connections closed under a pooled request, and more callers than
connections. Each fault is a raw server on loopback; the tests assert what a caller gets (the
error code and the limit it names, or the answer), what the server saw (connections, requests),
and the memory a call took, never how long it took.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest

from core.errors import ToolError
from tests.conftest import CANARY_KEY
from tools.tomtom import http1
from tools.tomtom.backends import Backend
from tools.tomtom.client import ClientSettings, TomTomSession, close_shared_clients

PATH = "/search/2/geocode/x.json"
KiB = 1024
MiB = 1024 * KiB


def answer(body: bytes = b'{"n": 0}', *, head: bytes = b"") -> bytes:
    """A keep-alive 200 with `body`, `head` (interim answers) sent before it."""
    return head + b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body),
        body,
    )


def session(port: int, **settings: Any) -> TomTomSession:
    values = {"total_timeout": 5.0, "max_retries": 0, **settings}
    return TomTomSession(
        settings=ClientSettings(base_url=f"http://127.0.0.1:{port}", **values),
        api_key=CANARY_KEY,
        backend=Backend.GENESIS,
        user_agent="TomTomMCPSDK/9.9.9 pytest",
    )


@pytest.fixture(autouse=True)
async def _pool_closed() -> AsyncIterator[None]:
    yield
    await close_shared_clients()


Handler = Callable[[int, asyncio.StreamWriter], Awaitable[None]]


class Upstream:
    """A loopback server on the test's event loop: reads each request (and its body), then lets
    `handle(n, writer)` answer the n-th; counts connections, and the most open at once."""

    def __init__(self, handle: Handler) -> None:
        self.handle = handle
        self.requests: list[bytes] = []
        self.connections = self.open = self.most_open = 0
        self.cut_off = False
        """Whether the client closed a connection while an answer was being written."""

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests.append(head + await reader.readexactly(content_length(head)))
                await self.handle(len(self.requests) - 1, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            self.cut_off = True
        finally:
            self.open -= 1
            writer.close()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[int]:
        server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        try:
            yield server.sockets[0].getsockname()[1]
        finally:
            server.close()

    async def settled(self) -> None:
        """Once every connection has ended at the server (what it saw is then complete)."""
        async with asyncio.timeout(10):
            while self.open:
                await asyncio.sleep(0.01)


def content_length(head: bytes) -> int:
    """A request head's `Content-Length` (the client always sends it with a body), else 0."""
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            return int(value)
    return 0


def answering(*answers: bytes) -> Handler:
    """Answer the n-th request with `answers[n]`, and every later one with the last."""

    async def handle(n: int, writer: asyncio.StreamWriter) -> None:
        writer.write(answers[min(n, len(answers) - 1)])
        await writer.drain()

    return handle


async def failure(call: Awaitable[Any]) -> ToolError:
    with pytest.raises(ToolError) as raised:
        await call
    return raised.value


async def traced_peak(call: Awaitable[Any]) -> tuple[Any, int]:
    """What `call` ended with (its result or its `ToolError`), and the most memory traced meanwhile."""
    tracemalloc.start()
    try:
        try:
            outcome: Any = await call
        except ToolError as error:
            outcome = error
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return outcome, peak


# --- heads that never end ----------------------------------------------------------------------


async def test_a_flood_of_headers_stops_at_the_head_limit():
    """20,000 headers of 1 KiB (20 MiB): reading stops at 64 KiB, the connection is dropped
    while the server still writes, and the call's memory stays small."""
    line = b"X-Flood: " + b"f" * (KiB - 11) + b"\r\n"

    async def flood(n: int, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\n")
        for _ in range(20_000):
            writer.write(line)
            await writer.drain()

    upstream = Upstream(flood)
    async with upstream.running() as port:
        error, peak = await traced_peak(session(port).get(PATH))
        await upstream.settled()
    assert isinstance(error, ToolError)
    assert error.code == "malformed"
    assert "headers larger than 64 KiB in all (TOMTOM_MAX_HEADER_BYTES)" in error.message
    assert upstream.cut_off
    assert peak < 4 * MiB


async def test_the_head_limit_is_the_setting():
    headers = b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 100) for i in range(40))  # about 4.5 KiB
    upstream = Upstream(answering(answer().replace(b"\r\n\r\n", b"\r\n" + headers + b"\r\n", 1)))
    async with upstream.running() as port:
        error = await failure(session(port, max_header_bytes=4 * KiB).get(PATH))
        assert (await session(port).get(PATH)) == {"n": 0}  # within the default 64 KiB: read
    assert error.code == "malformed"
    assert "larger than 4 KiB in all (TOMTOM_MAX_HEADER_BYTES)" in error.message


async def test_one_huge_header_value_stops_at_the_line_limit():
    """A 64 MiB header value, sent 64 KiB at a time: refused once its line passes 16 KiB."""
    piece = b"v" * (64 * KiB)

    async def huge(n: int, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nX-Huge: ")
        for _ in range(1024):
            writer.write(piece)
            await writer.drain()
        writer.write(b"\r\n\r\n")

    upstream = Upstream(huge)
    async with upstream.running() as port:
        error, peak = await traced_peak(session(port).get(PATH))
        await upstream.settled()
    assert isinstance(error, ToolError)
    assert error.code == "malformed"
    assert "a header line longer than 16 KiB" in error.message
    assert upstream.cut_off
    assert peak < 4 * MiB


async def test_a_header_line_split_over_many_reads_is_measured_whole():
    """A 20 KiB value that arrives 1 KiB at a time is one line of 20 KiB, not twenty of 1 KiB."""

    async def dribble(n: int, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        for _ in range(20):
            writer.write(b"s" * KiB)
            await writer.drain()
            await asyncio.sleep(0.001)  # each piece its own read
        writer.write(b"\r\nContent-Length: 2\r\n\r\n{}")

    async with Upstream(dribble).running() as port:
        error = await failure(session(port).get(PATH))
    assert error.code == "malformed"
    assert "longer than 16 KiB" in error.message


async def test_more_headers_than_the_count_limit_is_malformed():
    headers = b"".join(b"X-H%d: 1\r\n" % i for i in range(300))  # 3 KiB: within the byte limits
    async with Upstream(answering(answer().replace(b"\r\n\r\n", b"\r\n" + headers + b"\r\n", 1))).running() as port:
        error = await failure(session(port).get(PATH))
    assert error.code == "malformed"
    assert "more than 256 headers" in error.message


async def test_a_body_arriving_with_its_head_is_not_counted_as_head():
    """A 200 KiB body in the same reads as its head (and lines of it far over 16 KiB) is read."""
    body = b'{"pad": "' + b"p" * (200 * KiB) + b'"}'
    async with Upstream(answering(answer(body))).running() as port:
        result = await session(port).get(PATH)
    assert len(result["pad"]) == 200 * KiB


# --- interim answers ---------------------------------------------------------------------------


async def test_interim_answers_are_skipped_and_nothing_of_them_reaches_the_next_call():
    early = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n"
    upstream = Upstream(answering(answer(b'{"n": 1}', head=early), answer(b'{"n": 2}')))
    async with upstream.running() as port:
        tomtom = session(port)
        assert await tomtom.get(PATH) == {"n": 1}
        assert await tomtom.get(PATH) == {"n": 2}  # its own answer, on the same connection
    assert upstream.connections == 1


async def test_endless_interim_answers_stop_at_the_head_limit():
    async def hints(n: int, writer: asyncio.StreamWriter) -> None:
        while True:
            writer.write(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" * 100)
            await writer.drain()

    upstream = Upstream(hints)
    async with upstream.running() as port:
        error = await failure(session(port).get(PATH))
        await upstream.settled()
    assert error.code == "malformed"
    assert "TOMTOM_MAX_HEADER_BYTES" in error.message
    assert upstream.cut_off


# --- a pooled connection the server closed -----------------------------------------------------


class BlockingUpstream:
    """A server on its own thread, with blocking sockets: after each answer it ends the
    connection (`ending`: "fin" a close, "rst" a reset, "none" keeps it) and only then lets
    the test go on, so the close is in the client's socket before its event loop runs again."""

    def __init__(self, ending: str) -> None:
        self.ending = ending
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)  # so that `accept` sees the test's end
        self.port = self.listener.getsockname()[1]
        self.stopping = threading.Event()
        self.requests: list[bytes] = []
        self.connections = 0
        self.closed = threading.Event()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(5)
            self.connections += 1
            request = self._read(conn)
            if request is None:
                conn.close()
                continue
            self.requests.append(request)
            conn.sendall(answer(b'{"n": %d}' % len(self.requests)))
            if self.ending == "rst":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
            self.closed.set()

    @staticmethod
    def _read(conn: socket.socket) -> bytes | None:
        """One request, its body included, or None when the client sent none."""
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        while len(body) < content_length(head):
            chunk = conn.recv(65536)
            if not chunk:
                return None
            body += chunk
        return data

    @contextmanager
    def running(self) -> Iterator[int]:
        thread = threading.Thread(target=self._serve, daemon=True)
        thread.start()
        try:
            yield self.port
        finally:
            self.stopping.set()
            thread.join(timeout=5)
            self.listener.close()


async def post_after_close(upstream: BlockingUpstream, method: str = "POST") -> Any:
    """Two requests of one kind; between them the server ends the first one's connection, with
    no turn of the event loop in between (the test blocks on the server's word)."""
    tomtom = session(upstream.port)
    call = (lambda: tomtom.post(PATH, {"q": 1})) if method == "POST" else (lambda: tomtom.get(PATH))
    assert await call() == {"n": 1}
    assert upstream.closed.wait(timeout=5)  # blocks the loop: the close is not delivered to it
    return await call()


@pytest.mark.parametrize("ending", ["fin", "rst"])
async def test_a_post_after_the_server_closed_its_pooled_connection_is_sent_once_on_a_new_one(ending):
    """The close waits on the socket when the connection is taken from the pool: it is not
    used, and the POST goes once, on a new connection."""
    upstream = BlockingUpstream(ending)
    with upstream.running():
        assert await post_after_close(upstream) == {"n": 2}
    assert upstream.connections == 2
    assert [request.split(b" ", 1)[0] for request in upstream.requests] == [b"POST", b"POST"]


def _close_not_yet_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The close arrives just after the pooled connection was checked (a race, made certain)."""
    monkeypatch.setattr(http1, "_readable", lambda fd: False)


async def test_a_post_the_socket_refused_is_sent_again_on_a_new_connection(monkeypatch):
    """Reset before the write: the socket refuses it, so nothing left, and the POST is sent once
    more on a new connection."""
    _close_not_yet_seen(monkeypatch)
    upstream = BlockingUpstream("rst")
    with upstream.running():
        assert await post_after_close(upstream) == {"n": 2}
    assert upstream.connections == 2
    assert len(upstream.requests) == 2


async def test_a_post_written_to_a_closing_connection_is_not_sent_again(monkeypatch):
    """Written, then the connection ends with no answer: the server may have taken the POST, so
    it is `unavailable`, never sent twice; a GET in the same place is sent again."""
    _close_not_yet_seen(monkeypatch)
    upstream = BlockingUpstream("fin")
    with upstream.running():
        error = await failure(post_after_close(upstream))
    assert error.code == "unavailable"
    assert len(upstream.requests) == 1

    again = BlockingUpstream("fin")
    with again.running():
        assert await post_after_close(again, "GET") == {"n": 2}
    assert again.connections == 2


# --- more callers than connections -------------------------------------------------------------


async def test_concurrent_calls_share_at_most_the_capped_connections():
    async def slowly(n: int, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.001)  # every answer waits a turn: the callers pile up
        writer.write(answer(b'{"n": %d}' % n))
        await writer.drain()

    upstream = Upstream(slowly)
    async with upstream.running() as port:
        results = await asyncio.gather(*(session(port, max_connections=8).get(PATH) for _ in range(300)))
    assert sorted(result["n"] for result in results) == list(range(300))
    assert upstream.most_open == 8
    assert upstream.connections == 8


async def test_a_caller_waiting_for_a_connection_ends_at_its_deadline():
    async def never(n: int, writer: asyncio.StreamWriter) -> None:
        await asyncio.Event().wait()

    upstream = Upstream(never)
    async with upstream.running() as port:
        holder = asyncio.create_task(session(port, max_connections=1).get(PATH))
        while not upstream.requests:  # the one connection is in use
            await asyncio.sleep(0.01)
        second = await failure(session(port, max_connections=1, total_timeout=0.5).get(PATH))
        holder.cancel()
        with pytest.raises(asyncio.CancelledError):
            await holder
    assert second.code == "unavailable"
    assert "did not answer within 0.5 s (TOMTOM_TIMEOUT)" in second.message
    assert upstream.connections == 1
    assert len(upstream.requests) == 1


async def test_every_way_a_request_ends_gives_its_connection_back():
    """With one connection allowed: a refused head, a body over its limit and a deadline each
    end their request, and the next call still gets the connection."""
    flood = b"HTTP/1.1 200 OK\r\n" + b"X-F: " + b"f" * (20 * KiB) + b"\r\n\r\n"
    too_long = b"HTTP/1.1 200 OK\r\nContent-Length: 2048\r\n\r\n" + b" " * 2048

    async def handle(n: int, writer: asyncio.StreamWriter) -> None:
        if n == 2:
            await asyncio.Event().wait()  # the deadline's turn
        writer.write([flood, too_long, b"", answer(b'{"n": 3}')][n])
        await writer.drain()

    async with Upstream(handle).running() as port:
        one = {"max_connections": 1, "total_timeout": 0.5}
        codes = [
            (await failure(session(port, **one).get(PATH))).code,
            (await failure(session(port, **one, max_body_bytes=KiB).get(PATH))).code,
            (await failure(session(port, **one).get(PATH))).code,
        ]
        assert await session(port, **one).get(PATH) == {"n": 3}
    assert codes == ["malformed", "malformed", "unavailable"]
