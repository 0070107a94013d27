"""How every outbound request of ours reaches its server: directly or through the operator's
HTTP proxy, decided by one rule from the environment, and opened with addresses raced.

Three clients send requests (docs/adr/0039-outbound-http-stacks.md): the TomTom client
(tools/tomtom/http1.py), the data-viz downloads (tools/download.py) and the OAuth key-set fetch
(protocol/jwks.py). All three ask `proxy_for(scheme, host, port)`, so a host goes through the
proxy, or around it, the same way whichever of them sends to it.

The rule, as curl and httpx read the same variables:

- The proxy of an `https` URL is `https_proxy`, of an `http` URL `http_proxy`, else `all_proxy`.
  Each name is read in lower case first, then upper case (`HTTPS_PROXY`, ...); the lower-case
  one wins when set, and set to an empty value it turns the upper-case one off (as Python's
  `urllib.request.getproxies`, which httpx reads, does).
- `no_proxy` (`NO_PROXY`) lists, comma-separated, where to go directly: `*` (everywhere); a
  host name, with or without a leading `.` or `*.`, meaning that name and every name under it
  (`example.com` covers `api.example.com`, not `badexample.com`); an IP address or a CIDR range,
  matched against a URL whose host is an address (a name is never resolved to be compared);
  any of these followed by `:port` (IPv6 bracketed) to go directly to that port only. Case and a
  final dot do not matter.
- A proxy URL is `http://[user:password@]host[:port]`; without a scheme it is taken as `http://`,
  without a port as port 80 (the URL's default, as httpx and Python read it; curl assumes 1080).
  Only HTTP proxies are spoken: an `https://` or `socks5://` proxy is not skipped (that would send
  the request where the operator said it must not go) but refused, `ProxyError`, naming the
  variable, never its value.
- The user and password of a proxy URL (percent-decoded) are sent as `Proxy-Authorization:
  Basic` on `CONNECT`, or on each request of a plain `http` URL, and nowhere else: no message,
  log line or `repr` holds them (`Proxy.name` is `host:port`).

Through a proxy, an `https` URL is a `CONNECT host:port` tunnel, and TLS (the server name, the
certificate) is then spoken with the server itself through it: the proxy sees the host and port,
never the path, the query or a header. The proxy's answer to `CONNECT` is read up to
`MAX_CONNECT_ANSWER_BYTES`; anything but a 2xx is `ProxyError` naming its status. A plain `http`
URL is sent to the proxy with the absolute URL as the request target (`request_target`).

Opening a connection (`open_connection`) races a name's addresses as RFC 8305 ("Happy
Eyeballs") asks: the next address is tried when the one before has failed or has not connected
within `HAPPY_EYEBALLS_DELAY`, alternating address families; the first to connect wins and the
others are closed. A name whose first address drops packets is then reached through the next one
well within the connect timeout. The race is ours (`raced_socket`), not the event loop's
`happy_eyeballs_delay`: uvloop, which uvicorn and gunicorn's workers run on, does not take that
argument, and the race must be the same on every loop. httpx and httpcore (the key-set fetch, the
downloads' dial to a proxy) race addresses through anyio the same way.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import os
import socket
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote, urlsplit

AddressInfo = tuple[int, int, int, str, tuple[Any, ...]]
"""One `getaddrinfo` result: family, type, protocol, canonical name, address."""
HAPPY_EYEBALLS_DELAY = 0.25
"""Seconds an address may take to connect before the next one is tried too (RFC 8305's
recommended Connection Attempt Delay)."""
MAX_CONNECT_ANSWER_BYTES = 16 * 1024
"""The most of a proxy's answer to `CONNECT` read, status line and headers together."""

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class ProxyError(Exception):
    """The proxy cannot be used or refused the connection; the message names the proxy by
    `host:port` or by its variable, never with credentials."""


@dataclass(frozen=True, slots=True)
class Proxy:
    """An HTTP proxy from the environment: where it is, which variable named it, and the
    `Proxy-Authorization` value its URL's user information makes (never shown)."""

    host: str
    port: int
    variable: str
    """The environment variable it came from (`https_proxy`, `HTTPS_PROXY`, ...)."""
    authorization: str | None = field(default=None, repr=False)
    unsupported: str | None = None
    """Why it cannot be used (a scheme other than `http`, a URL that cannot be read), or None."""

    @property
    def name(self) -> str:
        """`host:port`, for messages: never the user or password."""
        return f"{_bracketed(self.host)}:{self.port}"

    @property
    def url(self) -> str:
        """`http://host:port`, without credentials (httpx gets `authorization` as a header)."""
        return f"http://{self.name}"

    def usable(self) -> Proxy:
        """This proxy, or `ProxyError` saying why it cannot be used."""
        if self.unsupported is not None:
            raise ProxyError(f"the proxy in {self.variable} {self.unsupported}")
        return self


# -- the rule --------------------------------------------------------------------------------

_VARIABLES = ("https_proxy", "http_proxy", "all_proxy", "no_proxy")


def _environment() -> tuple[tuple[str, str | None], ...]:
    """For each variable of the rule: the name that is set (lower case first) and its value."""
    found = []
    for name in _VARIABLES:
        value = os.environ.get(name)
        if value is None:
            upper = name.upper()
            value, name = os.environ.get(upper), upper
        found.append((name, value))
    return tuple(found)


def proxy_for(scheme: str, host: str, port: int) -> Proxy | None:
    """The proxy a request to `scheme://host:port` goes through, or None to go directly."""
    return _decide(_environment(), scheme.lower(), host.lower().removesuffix("."), port)


@lru_cache(maxsize=256)
def _decide(environment: tuple[tuple[str, str | None], ...], scheme: str, host: str, port: int) -> Proxy | None:
    (https_name, https), (http_name, http), (all_name, every), (_, no_proxy) = environment
    variable, value = (https_name, https) if scheme == "https" else (http_name, http) if scheme == "http" else ("", "")
    if not value:
        variable, value = all_name, every
    if not value or _bypassed(no_proxy or "", host, port):
        return None
    return _parse_proxy(value.strip(), variable)


def _bypassed(no_proxy: str, host: str, port: int) -> bool:
    """Whether `no_proxy` sends `host:port` directly (module docstring)."""
    address = _address(host)
    for entry in (part.strip().lower() for part in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        pattern, entry_port = _split_port(entry)
        if entry_port is not None and entry_port != port:
            continue
        network = _network(pattern)
        if network is not None:
            if address is not None and address.version == network.version and address in network:
                return True
            continue
        suffix = pattern.removeprefix("*").removeprefix(".").removesuffix(".")
        if suffix and address is None and (host == suffix or host.endswith("." + suffix)):
            return True
    return False


def _split_port(entry: str) -> tuple[str, int | None]:
    """`host:port`, `[v6]:port` or `v4:port` into the pattern and the port (None when absent);
    a bare IPv6 address or range keeps its colons."""
    if entry.startswith("["):
        inside, _, rest = entry[1:].partition("]")
        port = rest.removeprefix(":")
        return inside, int(port) if port.isdigit() else None
    if entry.count(":") == 1:
        pattern, _, port = entry.partition(":")
        return pattern, int(port) if port.isdigit() else None
    return entry, None


def _address(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def _network(pattern: str) -> Network | None:
    try:
        return ipaddress.ip_network(pattern, strict=False)
    except ValueError:
        return None


def _parse_proxy(value: str, variable: str) -> Proxy:
    """The proxy a variable's value names; one that cannot be used keeps why (`unsupported`)."""
    unreadable = Proxy("?", 0, variable, unsupported="is not a proxy URL such as http://proxy.example:3128")
    if "://" not in value:
        value = "http://" + value
    try:
        parts = urlsplit(value)
        host, port = parts.hostname, parts.port or 80
    except ValueError:  # an unclosed `[`, a port that is not a number
        return unreadable
    scheme = parts.scheme.lower()
    if scheme != "http":
        why = f"is a {scheme[:16]}:// proxy; only http:// proxies are supported (or exempt the host in NO_PROXY)"
        return Proxy(host or "?", port, variable, unsupported=why)
    if not host:
        return unreadable
    authorization = None
    if parts.username is not None:
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        authorization = "Basic " + base64.b64encode(credentials.encode()).decode("ascii")
    return Proxy(host, port, variable, authorization)


# -- what is sent ----------------------------------------------------------------------------


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def authority(host: str, port: int) -> str:
    """`host:port` as a request line or `Host` names it (an IPv6 address bracketed)."""
    return f"{_bracketed(host)}:{port}"


def request_target(proxy: Proxy | None, scheme: str, host: str, port: int, target: str) -> str:
    """The request target of a request line: the absolute URL for a plain `http` request sent to
    a proxy, else the path and query as given (origin form)."""
    if proxy is None or scheme != "http":
        return target
    default = port == 80
    return f"http://{_bracketed(host) if default else authority(host, port)}{target}"


def connect_request(host: str, port: int, proxy: Proxy) -> bytes:
    """The `CONNECT` that opens a tunnel to `host:port`: the authority and, when the proxy's URL
    has credentials, `Proxy-Authorization`; nothing of the request to be tunnelled."""
    target = authority(host, port)
    lines = [f"CONNECT {target} HTTP/1.1", f"Host: {target}"]
    if proxy.authorization is not None:
        lines.append(f"Proxy-Authorization: {proxy.authorization}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class ConnectAnswer:
    """The proxy's answer to `CONNECT`, read as it arrives and at most `MAX_CONNECT_ANSWER_BYTES`."""

    def __init__(self, proxy: Proxy) -> None:
        self._proxy = proxy
        self._received = bytearray()

    def feed(self, data: bytes) -> bool:
        """Take the next bytes; True once the tunnel is open, `ProxyError` when it will not be."""
        if not data:
            raise self._error("closed the connection before answering CONNECT")
        searched_from = max(0, len(self._received) - 3)
        self._received += data
        end = self._received.find(b"\r\n\r\n", searched_from)
        if end < 0:
            if len(self._received) > MAX_CONNECT_ANSWER_BYTES:
                raise self._error(f"answered CONNECT with over {MAX_CONNECT_ANSWER_BYTES // 1024} KiB of headers")
            return False
        status = self._status(bytes(self._received[: min(end, MAX_CONNECT_ANSWER_BYTES)]))
        if not 200 <= status < 300:
            phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
            raise self._error(f"answered CONNECT with {status} {phrase}".rstrip())
        if end + 4 < len(self._received):
            raise self._error("sent data after its answer to CONNECT, before TLS began")
        return True

    def _status(self, head: bytes) -> int:
        line = head.split(b"\r\n", 1)[0].split(b" ", 2)
        if len(line) < 2 or line[0] not in (b"HTTP/1.1", b"HTTP/1.0") or not (line[1].isdigit() and len(line[1]) == 3):
            raise self._error("did not answer CONNECT in HTTP/1.1")
        return int(line[1])

    def _error(self, what: str) -> ProxyError:
        return ProxyError(f"the proxy {self._proxy.name} (from {self._proxy.variable}) {what}")


# -- opening a connection --------------------------------------------------------------------


class _Tunnel(asyncio.Protocol):
    """A connection to the proxy until it has answered `CONNECT`."""

    def __init__(self, proxy: Proxy) -> None:
        self._answer = ConnectAnswer(proxy)
        self.open: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        if self.open.done():
            return
        try:
            if self._answer.feed(data):
                self.open.set_result(None)
        except ProxyError as error:
            self.open.set_exception(error)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.open.done():
            self.data_received(b"")


def interleaved(addresses: Sequence[AddressInfo]) -> list[AddressInfo]:
    """`addresses` in the order RFC 8305 tries them: the resolver's first, then alternating
    address families (each family in the resolver's order)."""
    families: dict[int, list[AddressInfo]] = {}
    for address in addresses:
        families.setdefault(address[0], []).append(address)
    queues = list(families.values())
    ordered: list[AddressInfo] = []
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered


async def _connected_socket(family: int, address: tuple[Any, ...]) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, address)
    except BaseException:
        sock.close()
        raise
    return sock


async def raced_socket(host: str, port: int) -> socket.socket:
    """A TCP socket connected to one of `host`'s addresses: each next address is tried when the
    ones before have failed or not connected within `HAPPY_EYEBALLS_DELAY`; the first connected
    wins, the attempts still running are cancelled and any other that connected is closed.
    Raises the `OSError` of the last attempt when none connects; the caller bounds it in time."""
    loop = asyncio.get_running_loop()
    addresses = interleaved(await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM))
    if not addresses:
        raise OSError(f"{host} has no address")
    running: set[asyncio.Task[socket.socket]] = set()
    failure: BaseException | None = None
    try:
        for index, (family, _, _, _, address) in enumerate(addresses):
            running.add(asyncio.ensure_future(_connected_socket(family, address)))
            last = index == len(addresses) - 1
            while running:
                done, _ = await asyncio.wait(
                    running, timeout=None if last else HAPPY_EYEBALLS_DELAY, return_when=asyncio.FIRST_COMPLETED
                )
                if not done:
                    break  # this address is slow: start the next one beside it
                running -= done
                for task in done:
                    if task.exception() is None:
                        winner = task.result()
                        for other in done - {task}:
                            if other.exception() is None:
                                other.result().close()
                        return winner
                    failure = task.exception()
                if not last:
                    break  # one failed: start the next at once
        raise failure if isinstance(failure, OSError) else OSError(f"could not connect to {host}:{port}")
    finally:
        for task in running:
            task.cancel()
        if running:
            for result in await asyncio.gather(*running, return_exceptions=True):
                if isinstance(result, socket.socket):
                    result.close()  # connected just as it was cancelled


async def _dial[P: asyncio.BaseProtocol](
    factory: Callable[[], P], host: str, port: int, tls: ssl.SSLContext | None = None
) -> tuple[asyncio.Transport, P]:
    sock = await raced_socket(host, port)
    try:
        transport, protocol = await asyncio.get_running_loop().create_connection(
            factory, sock=sock, ssl=tls, server_hostname=host if tls is not None else None
        )
    except BaseException:
        sock.close()
        raise
    return transport, protocol


async def open_connection[P: asyncio.Protocol](
    factory: Callable[[], P], host: str, port: int, *, tls: ssl.SSLContext | None, proxy: Proxy | None
) -> P:
    """A connection to `host:port` (TLS with `tls`, verifying `host`) with `factory()` as its
    protocol: directly, or through `proxy` (a tunnel for TLS, else the proxy itself, to which
    requests then name their absolute URL). Raises `OSError`, `ssl.SSLError` or `ProxyError`;
    the caller bounds it in time."""
    if proxy is None:
        return (await _dial(factory, host, port, tls))[1]
    proxy.usable()
    if tls is None:
        return (await _dial(factory, proxy.host, proxy.port))[1]
    transport, tunnel = await _dial(lambda: _Tunnel(proxy), proxy.host, proxy.port)
    try:
        transport.write(connect_request(host, port, proxy))
        await tunnel.open
        protocol = factory()
        secured = await asyncio.get_running_loop().start_tls(transport, protocol, tls, server_hostname=host)
    except BaseException:
        tunnel.open.cancel()  # a late answer has nowhere to go
        transport.close()
        raise
    if secured is None:  # the connection closed during the handshake
        raise OSError("the tunnel closed during the TLS handshake")
    protocol.connection_made(secured)  # start_tls does not: the protocol is not new to asyncio
    return protocol
