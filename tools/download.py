"""Downloading a caller's file from a URL without letting the URL reach inside our network.

`download(url, policy)` returns the body, or raises a `ToolError` naming `data_url` whose
message says which rule refused it:

- `https` only, with a host, and no user name or password in the URL (`invalid_arguments`);
- a host name DNS can carry: an IP address, or a name whose labels are 1 to 63 characters
  (253 in all) once an internationalised name is in its ASCII form (IDNA 2008 with UTS #46
  mapping, as browsers do) (`invalid_arguments`); the lookup, TLS and the `Host` header get
  that ASCII form, and the path and query are sent percent-encoded;
- every address the host resolves to is public unicast: global by `ipaddress`, and in none of
  the `SPECIAL_PURPOSE` ranges (every entry of IANA's IPv4 and IPv6 special-purpose address
  registries, multicast, and the prefixes that embed or translate an IPv4 address: NAT64,
  6to4, Teredo, IPv4-mapped and -compatible), or inside `policy.allowed_networks`
  (`invalid_arguments`), and the connection goes to the first of them: the name is resolved
  once, so a second lookup cannot point elsewhere (DNS rebinding), while TLS (SNI and the
  certificate check) and the `Host` header still use the name;
- through the operator's proxy when the environment names one for the host (`HTTPS_PROXY`,
  `NO_PROXY`: the rule of tools/connect.py, the same for every outbound request): the tunnel is
  a `CONNECT` to the pinned address, never to the name, so the proxy dials the address checked
  here and does not look the name up again; TLS and `Host` still use the name. A proxy that
  refuses (e.g. one that tunnels only to names) is `unavailable`, naming its status;
- no redirects, and only a 200 answer (`invalid_arguments` for 3xx/4xx, `unavailable` for 5xx);
- at most `policy.max_bytes`, by `Content-Length` and while reading, with no content
  encoding requested (no decompression bombs) (`invalid_arguments`);
- the whole download, lookup included, within `policy.timeout` seconds (`unavailable`).

`policy.resolve` and `policy.connect` are where tests stand in for DNS and for the network;
production uses the system resolver and connects to the pinned address itself.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit

import certifi
import httpcore
import idna

from core.errors import ErrorCode, ToolError, invalid
from tools.connect import ConnectAnswer, Proxy, ProxyError, connect_request, proxy_for

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[str]]]
"""`(host, port) -> addresses`, in the order to try them."""
Connector = Callable[[str, int], tuple[str, int]]
"""`(pinned address, port) -> (host, port)` actually dialled; tests map public addresses to loopback."""

ARGUMENT = "data_url"
MB = 1024 * 1024


async def system_resolve(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@cache
def _default_ssl_context() -> ssl.SSLContext:
    """Certificates from SSL_CERT_FILE when set (a private CA), else certifi's bundle."""
    return ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or certifi.where())


@dataclass(frozen=True, slots=True)
class DownloadPolicy:
    """The limits of one download; `allowed_networks` opens private ranges (an intranet host)."""

    max_bytes: int = 50 * MB
    timeout: float = 30.0
    allowed_networks: tuple[Network, ...] = ()
    resolve: Resolver = field(default=system_resolve, repr=False)
    connect: Connector | None = field(default=None, repr=False)
    ssl_context: ssl.SSLContext | None = field(default=None, repr=False)


def parse_networks(values: Sequence[str], *, source: str) -> tuple[Network, ...]:
    """CIDR ranges from configuration; a wrong one stops start-up with a message naming it."""
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{source}: {value!r} is not an address range such as 10.0.0.0/8") from None
    return tuple(networks)


SPECIAL_PURPOSE: tuple[Network, ...] = tuple(
    ipaddress.ip_network(cidr)
    for cidr in (
        # IANA IPv4 Special-Purpose Address Registry
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.31.196.0/24",
        "192.52.193.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "192.175.48.0/24",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "240.0.0.0/4",
        "255.255.255.255/32",
        "224.0.0.0/4",  # multicast
        # IANA IPv6 Special-Purpose Address Registry
        "::/128",
        "::1/128",
        "::ffff:0:0/96",
        "64:ff9b::/96",
        "64:ff9b:1::/48",
        "100::/64",
        "100:0:0:1::/64",
        "2001::/23",
        "2001::/32",
        "2001:1::1/128",
        "2001:1::2/128",
        "2001:1::3/128",
        "2001:2::/48",
        "2001:3::/32",
        "2001:4:112::/48",
        "2001:10::/28",
        "2001:20::/28",
        "2001:30::/28",
        "2001:db8::/32",
        "2002::/16",
        "2620:4f:8000::/48",
        "3fff::/20",
        "5f00::/16",
        "fc00::/7",
        "fe80::/10",
        "::/96",  # IPv4-compatible (deprecated)
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)
"""Ranges never downloaded from, whatever `ipaddress` thinks of them (unless allowed by policy)."""


def public(address: Address) -> bool:
    """Whether `address` is a public unicast address: global, and in no `SPECIAL_PURPOSE` range."""
    if not address.is_global or address.is_multicast:
        return False
    return not any(address.version == network.version and address in network for network in SPECIAL_PURPOSE)


@dataclass(frozen=True, slots=True)
class Downloaded:
    """A downloaded body and the answer's headers (names in lower case), for a caller that
    reads one, e.g. `Cache-Control` (authserver/cimd.py)."""

    body: bytes
    headers: dict[str, str]


async def download(url: str, policy: DownloadPolicy) -> bytes:
    """The body at `url`, under the rules of the module docstring."""
    return (await download_with_headers(url, policy)).body


async def download_with_headers(url: str, policy: DownloadPolicy) -> Downloaded:
    """The body at `url` and the answer's headers, under the rules of the module docstring."""
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed `[`, characters NFKC turns into URL delimiters
        raise invalid(ARGUMENT, "is not a URL; give an https URL such as https://example.com/data.geojson") from None
    if parts.scheme.lower() != "https":
        raise invalid(ARGUMENT, f"only https URLs are downloaded, not {parts.scheme or 'a URL without a scheme'}")
    if parts.username is not None or parts.password is not None:
        raise invalid(ARGUMENT, "must not carry a user name or password; give a URL that needs no credentials")
    try:
        host, port = parts.hostname, parts.port or 443
    except ValueError:
        raise invalid(ARGUMENT, "has a port that is not a number") from None
    if not host:
        raise invalid(ARGUMENT, "has no host name")
    name = dns_name(host)
    try:
        async with asyncio.timeout(policy.timeout):
            address = await _pinned_address(name, port, policy)
            return await _fetch(_request_url(parts, name, port), name, port, address, policy)
    except TimeoutError:
        raise ToolError(
            ErrorCode.UNAVAILABLE, f"{ARGUMENT}: the download took longer than {policy.timeout:g} s", argument=ARGUMENT
        ) from None


_LABEL = re.compile(r"[a-z0-9_-]{1,63}")


def dns_name(host: str) -> str:
    """`host` as the lookup and TLS take it: an IP address as it is, a name in its ASCII form
    (IDNA 2008 with UTS #46 mapping), lower-case, without a final dot; `invalid_arguments` for a
    name DNS cannot carry (an empty label, a label over 63 characters or a name over 253, a
    character no host name has)."""
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        pass
    else:
        return host
    name = host.lower().removesuffix(".")
    if not name.isascii():
        try:
            name = idna.encode(name, uts46=True).decode("ascii").removesuffix(".")  # 。 maps to .
        except idna.IDNAError:  # UnicodeError: an empty or too long label, a disallowed character
            raise invalid(
                ARGUMENT, f"the host name {host} has no ASCII form (IDNA): check for empty or over-long parts"
            ) from None
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise invalid(
            ARGUMENT,
            f"the host name {host} is not one DNS can look up: each dot-separated part must have 1 to 63 "
            "letters, digits or hyphens, and the whole name at most 253 characters",
        )
    return name


def _request_url(parts: SplitResult, name: str, port: int) -> str:
    """The URL to request: the host in its ASCII form, the path and query percent-encoded as
    UTF-8 where they are not already, no fragment."""
    host = f"[{name}]" if ":" in name else name
    authority = host if port == 443 else f"{host}:{port}"
    path = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    query = quote(parts.query, safe="/?%:@!$&'()*+,;=-._~")
    return f"https://{authority}{path}?{query}" if parts.query else f"https://{authority}{path}"


async def _pinned_address(host: str, port: int, policy: DownloadPolicy) -> str:
    try:
        found = await policy.resolve(host, port)
    except OSError:
        found = []
    if not found:
        raise invalid(ARGUMENT, f"the host {host} could not be found")
    for text in found:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        if not public(address) and not any(address in network for network in policy.allowed_networks):
            raise invalid(
                ARGUMENT, f"the host {host} is at {address}, which is not a public address; only public hosts are used"
            )
    return found[0]


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Dials the pinned address whatever host httpcore asks for, directly or through a proxy's
    tunnel to it (TLS still uses the name)."""

    def __init__(self, address: str, connect: Connector | None, proxy: Proxy | None = None) -> None:
        self._address = address
        self._connect = connect
        self._proxy = proxy
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        if self._proxy is not None:
            return await self._tunnel(self._proxy.usable(), port, timeout, local_address, socket_options)
        target, target_port = self._connect(self._address, port) if self._connect else (self._address, port)
        return await self._inner.connect_tcp(target, target_port, timeout, local_address, socket_options)

    async def _tunnel(
        self, proxy: Proxy, port: int, timeout: float | None, local_address: str | None, socket_options: Any
    ) -> httpcore.AsyncNetworkStream:
        """A connection to the proxy that it has tunnelled to the pinned address (the proxy's own
        addresses raced by anyio), or `ProxyError`."""
        stream = await self._inner.connect_tcp(proxy.host, proxy.port, timeout, local_address, socket_options)
        try:
            await stream.write(connect_request(self._address, port, proxy), timeout)
            answer = ConnectAnswer(proxy)
            while not answer.feed(await stream.read(4096, timeout)):
                pass
        except BaseException:
            await stream.aclose()
            raise
        return stream

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


async def _fetch(url: str, host: str, port: int, address: str, policy: DownloadPolicy) -> Downloaded:
    headers = [
        (b"Accept", b"application/geo+json, application/json;q=0.9, */*;q=0.1"),
        (b"Accept-Encoding", b"identity"),
        (b"User-Agent", b"tomtom-maps-mcp data-viz"),
    ]
    pool = httpcore.AsyncConnectionPool(
        ssl_context=policy.ssl_context or _default_ssl_context(),
        network_backend=_PinnedBackend(address, policy.connect, proxy_for("https", host, port)),
        max_connections=1,
    )
    try:
        async with pool, pool.stream("GET", url, headers=headers) as response:
            _check_status(response.status, host)
            length = dict(response.headers).get(b"Content-Length")
            if length is not None and length.isdigit() and int(length) > policy.max_bytes:
                raise _too_large(policy)
            chunks, size = [], 0
            async for chunk in response.aiter_stream():
                size += len(chunk)
                if size > policy.max_bytes:
                    raise _too_large(policy)
                chunks.append(chunk)
            answer_headers = {
                name.decode("latin-1").lower(): value.decode("latin-1") for name, value in response.headers
            }
            return Downloaded(b"".join(chunks), answer_headers)
    except ProxyError as exc:  # names the proxy by host and port, never its credentials
        raise _unreachable(host, str(exc)) from None
    except ssl.SSLError as exc:
        raise _unreachable(host, f"its TLS certificate could not be verified ({exc.reason or exc})") from None
    except httpcore.ConnectError as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, ssl.SSLError) or "CERTIFICATE" in str(exc).upper():
            raise _unreachable(host, "its TLS certificate could not be verified") from None
        raise _unreachable(host, "the connection failed") from None
    except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError):
        raise _unreachable(host, "the connection broke off") from None


def _check_status(status: int, host: str) -> None:
    if status == 200:
        return
    if 300 <= status < 400:
        raise invalid(ARGUMENT, f"{host} answered with a redirect ({status}); redirects are not followed")
    if 400 <= status < 500:
        raise invalid(ARGUMENT, f"{host} answered {status}; check that the URL is right and public")
    raise _unreachable(host, f"it answered {status}")


def _too_large(policy: DownloadPolicy) -> ToolError:
    return invalid(ARGUMENT, f"the file is larger than {policy.max_bytes / MB:g} MB")


def _unreachable(host: str, why: str) -> ToolError:
    return ToolError(ErrorCode.UNAVAILABLE, f"{ARGUMENT}: could not download from {host}: {why}", argument=ARGUMENT)
