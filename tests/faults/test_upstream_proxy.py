"""Outbound requests through an operator's HTTP proxy, and around it, by one rule
(tools/connect.py): the TomTom client, the data-viz downloads and the key-set fetch alike.

A recording proxy on loopback tunnels `CONNECT` and forwards absolute-form requests, keeping
every byte a client sent it as it saw them; its `dial` table sends the names the tests use
(`api.tomtom.test`, ...) to loopback servers, so a request that reaches one of them went through
the proxy (nothing else can resolve those names). TLS servers use a test certificate authority
trusted through `SSL_CERT_FILE` (the TomTom client's and httpx's roots) or the download policy's
TLS context. Nothing here reaches a network beyond loopback.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import select
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from core.errors import ErrorCode, ToolError
from protocol.jwks import KeySetRefused, fetch_key_set
from tests.conftest import CANARY_KEY
from tests.support.https_server import LocalHttps
from tools import connect
from tools.download import DownloadPolicy, download
from tools.tomtom.backends import Backend
from tools.tomtom.client import ClientSettings, TomTomSession

PATH = "/search/2/geocode/x.json"
GOOD = b'{"summary": {"totalResults": 0}, "results": []}'
KEYS = b'{"keys": []}'
PUBLIC = "93.184.215.14"
"""The address the download tests' stand-in DNS gives `data.example` (public, so allowed)."""
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def _no_proxy_from_the_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sets the proxy variables it means; none comes from the machine running it."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


class RecordingProxy:
    """An HTTP proxy: `CONNECT host:port` tunnels, absolute-form requests forwarded as they
    are. `heads` holds each connection's first request head; `seen`, every byte clients sent
    (tunnelled TLS included). With `require`, a request without that `Proxy-Authorization`
    gets 407."""

    def __init__(self, dial: dict[tuple[str, int], tuple[str, int]] | None = None, require: str | None = None):
        self.dial = dial or {}
        self.require = require
        self.heads: list[str] = []
        self.seen = bytearray()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> RecordingProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _where(self, host: str, port: int) -> tuple[str, int]:
        return self.dial.get((host, port), (host, port))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        upstream: asyncio.StreamWriter | None = None
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            self.seen += head
            text = head.decode("latin-1")
            self.heads.append(text)
            lines = text.split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {
                name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])
            }
            if self.require is not None and headers.get("proxy-authorization") != self.require:
                writer.write(
                    b'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="tests"\r\n'
                    b"Content-Length: 0\r\nConnection: close\r\n\r\n"
                )
                await writer.drain()
                return
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                up_reader, upstream = await asyncio.open_connection(*self._where(host.strip("[]"), int(port)))
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                url = urlsplit(target)
                up_reader, upstream = await asyncio.open_connection(*self._where(url.hostname or "", url.port or 80))
                upstream.write(head)
            await asyncio.gather(self._pipe(reader, upstream, record=True), self._pipe(up_reader, writer))
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            if upstream is not None:
                upstream.close()
            self._tasks.discard(task)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, record: bool = False) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                if record:
                    self.seen += data
                writer.write(data)
                await writer.drain()
        writer.close()


class AnyPath(dict[str, tuple[int, bytes, dict[str, str], float]]):
    """LocalHttps's files: the same JSON answer at every path."""

    def get(self, key: str, default: Any = None) -> tuple[int, bytes, dict[str, str], float]:
        return 200, GOOD, {"Content-Type": "application/json"}, 0.0


@pytest.fixture
def tls_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHttps]:
    """An HTTPS server for `api.tomtom.test`, `issuer.test` and `data.example`, its CA trusted
    through SSL_CERT_FILE."""
    with LocalHttps(["api.tomtom.test", "issuer.test", "data.example"]) as server:
        server.files = AnyPath()
        monkeypatch.setenv("SSL_CERT_FILE", str(server.ca_file))
        yield server


def session(base_url: str, connect_timeout: float = 3.0) -> TomTomSession:
    return TomTomSession(
        settings=ClientSettings(base_url=base_url, connect_timeout=connect_timeout, total_timeout=5.0, max_retries=0),
        api_key=CANARY_KEY,
        backend=Backend.GENESIS,
        user_agent="TomTomMCPSDK/9.9.9 pytest",
    )


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


# --- the TomTom client ----------------------------------------------------------------------


async def test_plain_http_goes_to_the_proxy_with_the_absolute_url(stub, monkeypatch):
    stub.route("GET", PATH, body=GOOD)
    async with RecordingProxy(dial={("tomtom.test", stub.port): ("127.0.0.1", stub.port)}) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://user:secret@127.0.0.1:{proxy.port}")
        answer = await session(f"http://tomtom.test:{stub.port}").get(PATH)
    assert answer == {"summary": {"totalResults": 0}, "results": []}
    request_line, host, authorization = proxy.heads[0].split("\r\n")[:3]
    assert request_line.startswith(f"GET http://tomtom.test:{stub.port}{PATH}")
    assert host == f"Host: tomtom.test:{stub.port}"
    assert authorization == f"Proxy-Authorization: {basic('user', 'secret')}"
    assert stub.requests[0].path == PATH


async def test_https_is_tunnelled_and_the_proxy_sees_only_host_and_port(tls_server, monkeypatch):
    where = {("api.tomtom.test", tls_server.port): ("127.0.0.1", tls_server.port)}
    async with RecordingProxy(dial=where, require=basic("ops", "p@ss")) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", f"http://ops:p%40ss@127.0.0.1:{proxy.port}")
        answer = await session(f"https://api.tomtom.test:{tls_server.port}").get(PATH)
    assert answer == {"summary": {"totalResults": 0}, "results": []}
    authority = f"api.tomtom.test:{tls_server.port}"
    assert proxy.heads == [
        f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\nProxy-Authorization: {basic('ops', 'p@ss')}\r\n\r\n"
    ]
    assert len(proxy.seen) > len(proxy.heads[0]) + 200  # the request went through, encrypted
    assert CANARY_KEY.encode() not in proxy.seen
    assert PATH.encode() not in proxy.seen
    # TLS was spoken with TomTom's name through the tunnel, and the request reached the server
    assert [(seen.server_name, seen.path.split("?")[0]) for seen in tls_server.seen] == [("api.tomtom.test", PATH)]


@pytest.mark.parametrize(
    "no_proxy", ["*", "127.0.0.1", "127.0.0.0/8", "example.com, 127.0.0.1", "{port}"], ids=lambda v: v or "-"
)
async def test_no_proxy_goes_around_the_proxy(stub, monkeypatch, no_proxy):
    stub.route("GET", PATH, body=GOOD)
    async with RecordingProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("no_proxy", no_proxy.replace("{port}", f"127.0.0.1:{stub.port}"))
        await session(stub.base_url).get(PATH)
    assert proxy.heads == []
    assert len(stub.requests) == 1


async def test_no_proxy_for_another_port_still_goes_through_the_proxy(stub, monkeypatch):
    stub.route("GET", PATH, body=GOOD)
    async with RecordingProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", f"127.0.0.1:{stub.port + 1}")
        await session(stub.base_url).get(PATH)
    assert [head.split(" ")[1].split("?")[0] for head in proxy.heads] == [f"{stub.base_url}{PATH}"]


async def test_a_proxy_answering_407_is_unavailable_naming_its_status_not_the_credentials(tls_server, monkeypatch):
    async with RecordingProxy(require=basic("ops", "right")) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", f"http://ops:wrong-secret@127.0.0.1:{proxy.port}")
        with pytest.raises(ToolError) as raised:
            await session(f"https://api.tomtom.test:{tls_server.port}").get(PATH)
    error = raised.value
    assert error.code is ErrorCode.UNAVAILABLE
    assert f"the proxy 127.0.0.1:{proxy.port} (from HTTPS_PROXY)" in error.message
    assert "407 Proxy Authentication Required" in error.message
    assert "wrong-secret" not in error.message and "ops" not in error.message
    assert tls_server.seen == []


async def test_a_proxy_of_another_kind_is_refused_not_skipped(monkeypatch):
    monkeypatch.setenv("https_proxy", "socks5://ops:secret@127.0.0.1:1080")
    with pytest.raises(ToolError) as raised:
        await session("https://api.tomtom.test").get(PATH)
    assert raised.value.code is ErrorCode.UNAVAILABLE
    assert "the proxy in https_proxy is a socks5:// proxy; only http:// proxies are supported" in raised.value.message
    assert "secret" not in raised.value.message


@contextlib.contextmanager
def blackhole() -> Iterator[int]:
    """A loopback port where connection attempts hang, as at a host that drops packets: a
    listener that never accepts, its queue filled, so the kernel drops further SYNs."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    fillers: list[socket.socket] = []
    try:
        while len(fillers) < 64:
            filler = socket.socket()
            filler.setblocking(False)
            fillers.append(filler)
            filler.connect_ex(listener.getsockname())
            if not select.select([], [filler], [], 0.5)[1]:  # this one hangs: the queue is full
                break
        else:
            raise AssertionError("the listener's queue never filled")
        yield listener.getsockname()[1]
    finally:
        for each in [*fillers, listener]:
            each.close()


async def test_a_name_whose_first_address_drops_packets_is_reached_through_the_next(stub, monkeypatch):
    stub.route("GET", PATH, body=GOOD)
    real = socket.getaddrinfo
    with blackhole() as dead:

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
            if host != "tomtom.test":
                return real(host, port, *args, **kwargs)
            return [
                (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", dead)),
                (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", stub.port)),
            ]

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        # Without racing, the first address would hold the connection until the connect timeout.
        answer = await session(f"http://tomtom.test:{stub.port}", connect_timeout=3.0).get(PATH)
    assert answer == {"summary": {"totalResults": 0}, "results": []}
    assert len(stub.requests) == 1


# --- the same rule in every outbound client --------------------------------------------------


@pytest.mark.parametrize(
    ("environment", "through_proxy"),
    [
        ({"HTTPS_PROXY": "{proxy}"}, True),
        ({"ALL_PROXY": "{proxy}"}, True),
        ({"HTTPS_PROXY": "{proxy}", "NO_PROXY": ".test,example"}, False),
        ({"HTTPS_PROXY": "{proxy}", "no_proxy": "tomtom.test,issuer.test,data.example"}, False),
        ({"HTTPS_PROXY": "{proxy}", "https_proxy": ""}, False),  # lower case, even empty, wins
        ({"HTTP_PROXY": "{proxy}"}, False),  # https URLs only read HTTPS_PROXY (or ALL_PROXY)
    ],
)
async def test_tomtom_the_key_set_and_downloads_take_the_same_way(tls_server, monkeypatch, environment, through_proxy):
    port = tls_server.port
    where = {(name, port): ("127.0.0.1", port) for name in ("api.tomtom.test", "issuer.test", PUBLIC)}
    names = {name: "127.0.0.1" for name in ("api.tomtom.test", "issuer.test")}
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> list[Any]:  # going directly needs the names
        name = host.decode() if isinstance(host, bytes) else host
        return real(names.get(name, host), *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    async def resolve(host: str, port: int) -> list[str]:
        return [PUBLIC]

    policy = DownloadPolicy(
        resolve=resolve, connect=lambda address, port: where[(address, port)], ssl_context=tls_server.ssl_context()
    )
    async with RecordingProxy(dial=where) as proxy:
        for name, value in environment.items():
            monkeypatch.setenv(name, value.replace("{proxy}", proxy.url))
        await session(f"https://api.tomtom.test:{port}").get(PATH)
        assert await fetch_key_set(f"https://issuer.test:{port}/jwks") == GOOD
        assert await download(f"https://data.example:{port}/d.geojson", policy) == GOOD
    connects = [head.split("\r\n")[0] for head in proxy.heads]
    # The download's tunnel goes to the address the SSRF check accepted, never to the name.
    expected = [f"CONNECT {name}:{port} HTTP/1.1" for name in ("api.tomtom.test", "issuer.test", PUBLIC)]
    assert connects == (expected if through_proxy else [])
    assert [seen.server_name for seen in tls_server.seen] == ["api.tomtom.test", "issuer.test", "data.example"]


async def test_a_download_through_a_refusing_proxy_is_unavailable_naming_its_status(tls_server, monkeypatch):
    async def resolve(host: str, port: int) -> list[str]:
        return [PUBLIC]

    async with RecordingProxy(require=basic("ops", "right")) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", f"http://ops:wrong@127.0.0.1:{proxy.port}")
        with pytest.raises(ToolError) as raised:
            await download("https://data.example/d.geojson", DownloadPolicy(resolve=resolve))
    assert raised.value.code is ErrorCode.UNAVAILABLE
    assert raised.value.message == (
        f"data_url: could not download from data.example: the proxy 127.0.0.1:{proxy.port} (from HTTPS_PROXY) "
        "answered CONNECT with 407 Proxy Authentication Required"
    )


async def test_a_key_set_fetch_through_an_unusable_proxy_is_refused_naming_the_variable(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "https://ops:secret@proxy.example:3128")
    with pytest.raises(KeySetRefused, match="the proxy in HTTPS_PROXY is a https:// proxy") as raised:
        await fetch_key_set("https://issuer.test/jwks")
    assert "secret" not in str(raised.value)


# --- the rule -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environment", "url", "expected"),
    [
        ({"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:2"}, "https://a.example", "lower:2"),
        ({"HTTPS_PROXY": "http://upper:1", "https_proxy": ""}, "https://a.example", None),
        ({"HTTPS_PROXY": "proxy.example"}, "https://a.example", "proxy.example:80"),
        ({"HTTP_PROXY": "http://p:1"}, "https://a.example", None),
        ({"HTTP_PROXY": "http://p:1"}, "http://a.example", "p:1"),
        ({"ALL_PROXY": "http://all:1", "HTTPS_PROXY": "http://p:1"}, "https://a.example", "p:1"),
        ({"all_proxy": "http://all:1"}, "https://a.example", "all:1"),
        ({"HTTPS_PROXY": "http://[::1]:3128"}, "https://a.example", "[::1]:3128"),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "example.com"}, "https://api.example.com", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": ".example.com"}, "https://example.com", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*.example.com"}, "https://a.b.example.com", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "example.com"}, "https://badexample.com", "p:1"),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "EXAMPLE.com"}, "https://Api.Example.COM.", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "example.com:8443"}, "https://example.com:8443", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "example.com:8443"}, "https://example.com", "p:1"),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8"}, "https://10.1.2.3", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8"}, "https://10.example", "p:1"),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "::1"}, "https://[::1]:8443", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "[::1]:8443"}, "https://[::1]:8443", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "fd00::/8"}, "https://[fd12::1]", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "1.1"}, "https://10.1.1.1", "p:1"),
        ({"HTTPS_PROXY": "http://p:1", "no_proxy": "", "NO_PROXY": "*"}, "https://a.example", "p:1"),
    ],
)
def test_which_proxy_a_url_goes_through(monkeypatch, environment, url, expected):
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    parts = urlsplit(url)
    assert parts.hostname is not None
    proxy = connect.proxy_for(parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    assert (proxy.name if proxy else None) == expected


def test_a_proxys_credentials_become_basic_authorization_and_are_never_shown(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://us%3Aer:p%40ss%20word@proxy.example:3128")
    proxy = connect.proxy_for("https", "api.tomtom.com", 443)
    assert proxy is not None
    assert proxy.authorization == basic("us:er", "p@ss word")
    assert "p@ss" not in repr(proxy) and "ss%20word" not in repr(proxy)
    assert proxy.url == "http://proxy.example:3128"
    authority = "api.tomtom.com:443"
    assert (
        connect.connect_request("api.tomtom.com", 443, proxy)
        == (
            f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\nProxy-Authorization: {proxy.authorization}\r\n\r\n"
        ).encode()
    )


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (b"HTTP/1.1 200 OK\r\n\r\n", None),
        (b"HTTP/1.0 200 Connection established\r\nVia: x\r\n\r\n", None),
        (b"HTTP/1.1 403 Forbidden\r\nContent-Length: 5\r\n\r\nnope!", "answered CONNECT with 403 Forbidden"),
        (b"HTTP/1.1 599 Odd\r\n\r\n", "answered CONNECT with 599"),
        (b"SSH-2.0-OpenSSH\r\n\r\n", "did not answer CONNECT in HTTP/1.1"),
        (b"HTTP/1.1 200 OK\r\n\r\nextra", "sent data after its answer to CONNECT, before TLS began"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"y" * 20_000, "answered CONNECT with over 16 KiB of headers"),
        (b"HTTP/1.1 200 OK\r\n", "closed the connection before answering CONNECT"),
    ],
)
def test_the_answer_to_connect_is_read_within_bounds(answer, error):
    reader = connect.ConnectAnswer(connect.Proxy("proxy.example", 3128, "HTTPS_PROXY"))
    if error is None:
        assert reader.feed(answer[:7]) is False
        assert reader.feed(answer[7:]) is True
        return
    with pytest.raises(connect.ProxyError) as raised:
        for chunk in (answer[i : i + 1000] for i in range(0, len(answer), 1000)):
            reader.feed(chunk)
        reader.feed(b"")  # the proxy closed the connection
    assert str(raised.value) == f"the proxy proxy.example:3128 (from HTTPS_PROXY) {error}"


@pytest.mark.parametrize(
    "value", ["http://ops:secret@proxy.example:port", "http://[ops:secret@proxy", "socks5://ops:secret@proxy:1080"]
)
def test_a_proxy_that_cannot_be_used_is_refused_naming_only_its_variable(monkeypatch, value):
    monkeypatch.setenv("HTTPS_PROXY", value)
    proxy = connect.proxy_for("https", "api.tomtom.com", 443)
    assert proxy is not None  # refused, never skipped: going around it is the operator's call (NO_PROXY)
    with pytest.raises(connect.ProxyError, match=r"^the proxy in HTTPS_PROXY ") as raised:
        proxy.usable()
    assert "secret" not in str(raised.value) and "secret" not in repr(proxy)


# --- the same on uvloop, which the servers run on ----------------------------------------------


@pytest.mark.parametrize("through", ["direct", "http proxy", "https tunnel"])
def test_every_way_out_works_on_uvloop_as_on_asyncio(stub, tls_server, monkeypatch, through):
    """uvicorn and gunicorn's workers run uvloop, whose `create_connection` takes no
    `happy_eyeballs_delay`: the race is ours, so a call goes out the same on both loops."""
    import uvloop

    stub.route("GET", PATH, body=GOOD)

    async def call() -> tuple[Any, list[str]]:
        if through == "direct":
            return await session(f"http://127.0.0.1:{stub.port}").get(PATH), []
        if through == "http proxy":
            async with RecordingProxy(dial={("tomtom.test", stub.port): ("127.0.0.1", stub.port)}) as proxy:
                monkeypatch.setenv("HTTP_PROXY", proxy.url)
                return await session(f"http://tomtom.test:{stub.port}").get(PATH), proxy.heads
        where = {("api.tomtom.test", tls_server.port): ("127.0.0.1", tls_server.port)}
        async with RecordingProxy(dial=where) as proxy:
            monkeypatch.setenv("HTTPS_PROXY", proxy.url)
            return await session(f"https://api.tomtom.test:{tls_server.port}").get(PATH), proxy.heads

    answer, heads = uvloop.run(call())
    assert answer == {"summary": {"totalResults": 0}, "results": []}
    assert len(heads) == (0 if through == "direct" else 1)


async def test_an_address_that_refuses_gives_way_to_the_next_at_once(stub, monkeypatch):
    """A refused connection is a failed attempt: the next address is tried without waiting for
    the attempt delay."""
    stub.route("GET", PATH, body=GOOD)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        refusing = closed.getsockname()[1]  # bound, not listening: connecting is refused
        real = socket.getaddrinfo

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
            if host != "tomtom.test":
                return real(host, port, *args, **kwargs)
            return [
                (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", refusing)),
                (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", stub.port)),
            ]

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        monkeypatch.setattr(connect, "HAPPY_EYEBALLS_DELAY", 60.0)  # only a failure moves on in time
        answer = await session(f"http://tomtom.test:{stub.port}", connect_timeout=3.0).get(PATH)
    assert answer == {"summary": {"totalResults": 0}, "results": []}


def test_addresses_are_tried_in_the_resolvers_order_alternating_families():
    v6 = [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (f"2001:db8::{n}", 443, 0, 0)) for n in (1, 2, 3)]
    v4 = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (f"192.0.2.{n}", 443)) for n in (1, 2)]
    ordered = connect.interleaved([v6[0], v6[1], v4[0], v6[2], v4[1]])
    assert [info[4][0] for info in ordered] == ["2001:db8::1", "192.0.2.1", "2001:db8::2", "192.0.2.2", "2001:db8::3"]


async def test_when_every_address_fails_the_last_failure_is_raised(monkeypatch):
    real = socket.getaddrinfo
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        refusing = closed.getsockname()[1]

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
            if host != "tomtom.test":
                return real(host, port, *args, **kwargs)
            return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", refusing))] * 2

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        with pytest.raises(ConnectionRefusedError):
            await connect.raced_socket("tomtom.test", refusing)
