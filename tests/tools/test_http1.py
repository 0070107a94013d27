"""The HTTP/1.1 client under the TomTom client (tools/tomtom/http1.py): what a server sees and
what the caller reads, connection by connection. A small server here counts connections and
answers each request with the next canned bytes; what it closes, and when, is the test's."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.support.https_server import LocalHttps
from tools.tomtom import http1

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


class CannedServer:
    """Answers the n-th request with `answers[n]`; closes a connection after an answer when
    `close_after` says so (the answer's index)."""

    def __init__(self, answers: list[bytes], close_after: frozenset[int] = frozenset()) -> None:
        self.answers: Iterator[tuple[int, bytes]] = iter(enumerate(answers))
        self.close_after = close_after
        self.connections = 0
        self.requests: list[bytes] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                self.requests.append(await reader.readuntil(b"\r\n\r\n"))
                index, answer = next(self.answers)
                writer.write(answer)
                await writer.drain()
                if index in self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> tuple[http1.Pool, http1.Origin]:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        return http1.Pool(), http1.origin_of("http", "127.0.0.1", self.server.sockets[0].getsockname()[1])

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()


async def read(pool: http1.Pool, origin: http1.Origin, method: str = "GET") -> tuple[int, bytes]:
    async with await pool.request(
        method, origin, "/x?key=k", {"Accept": "application/json"}, None, connect_timeout=5
    ) as response:
        return response.status, b"".join([chunk async for chunk in response.chunks()])


async def test_answers_read_to_their_end_reuse_the_connection():
    server = CannedServer([OK, OK, OK])
    async with server as (pool, origin):
        for _ in range(3):
            assert await read(pool, origin) == (200, b"{}")
    assert server.connections == 1
    assert server.requests[0].startswith(b"GET /x?key=k HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"\r\nAccept: application/json\r\n" in server.requests[0]


async def test_connection_close_opens_a_new_connection_per_request():
    close = OK.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1)
    server = CannedServer([close, close], close_after=frozenset({0, 1}))
    async with server as (pool, origin):
        assert await read(pool, origin) == (200, b"{}")
        assert await read(pool, origin) == (200, b"{}")
    assert server.connections == 2


async def test_a_get_on_a_pooled_connection_the_server_closed_is_sent_again():
    server = CannedServer([OK, OK], close_after=frozenset({0}))  # keep-alive said, then closed
    async with server as (pool, origin):
        assert await read(pool, origin) == (200, b"{}")
        await asyncio.sleep(0.05)  # the close arrives
        assert await read(pool, origin) == (200, b"{}")
    assert server.connections == 2


async def test_a_body_without_length_ends_with_the_connection():
    server = CannedServer([b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{"a": 1}'], close_after=frozenset({0}))
    async with server as (pool, origin):
        assert await read(pool, origin) == (200, b'{"a": 1}')


async def test_a_body_cut_off_before_its_length_is_an_upstream_error():
    cut = b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"a": '
    server = CannedServer([cut], close_after=frozenset({0}))
    async with server as (pool, origin):
        with pytest.raises(http1.UpstreamError):
            await read(pool, origin)


async def test_an_answer_that_is_not_http_is_an_upstream_error():
    server = CannedServer([b"SSH-2.0-OpenSSH_9.6\r\n\r\n"])
    async with server as (pool, origin):
        with pytest.raises(http1.UpstreamError):
            await read(pool, origin)


async def test_a_refused_connection_is_an_upstream_error():
    async with CannedServer([]) as (pool, origin):
        pass  # the server is gone: nothing listens on its port now
    with pytest.raises(http1.UpstreamError):
        await read(pool, origin)


async def test_an_answer_left_before_its_end_closes_its_connection():
    server = CannedServer([b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{", OK])
    async with server as (pool, origin):
        async with await pool.request("GET", origin, "/x", {}, None, connect_timeout=5) as response:
            assert response.status == 200  # the rest of the body never comes, and is not waited for
        assert await read(pool, origin) == (200, b"{}")
    assert server.connections == 2


async def test_https_verifies_the_server_with_the_roots_ssl_cert_file_names(monkeypatch):
    with LocalHttps(["localhost"]) as server:
        server.files["/x?key=k"] = (200, b"{}", {"Content-Type": "application/json"}, 0.0)
        origin = http1.origin_of("https", "localhost", server.port)
        with pytest.raises(http1.UpstreamError, match="could not connect: SSLCertVerificationError"):
            await read(http1.Pool(), origin)  # certifi's roots do not know the test CA
        monkeypatch.setenv("SSL_CERT_FILE", str(server.ca_file))
        pool = http1.Pool()
        assert await read(pool, origin) == (200, b"{}")
        assert await read(pool, origin) == (200, b"{}")  # again, on a new connection: the server speaks HTTP/1.0
        assert [seen.server_name for seen in server.seen] == ["localhost", "localhost"]
        pool.close()
