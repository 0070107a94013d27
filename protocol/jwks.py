"""The issuer's signing keys (its JWKS), fetched within bounds and cached per process
(docs/oauth.md, "Signing keys"; docs/adr/0022-signing-keys-that-cannot-sign-everyone-out.md).

- **A fetch is bounded whatever the key server does**: one total deadline
  (`JWKS_TIMEOUT_SECONDS`) for connecting, the headers and the whole body however slowly it
  drips, at most `JWKS_MAX_BYTES` as sent and once decoded (tools/bodies.py), no redirects.
  It goes through a proxy, or directly, as tools/connect.py decides for every outbound request
  (`HTTPS_PROXY`, `NO_PROXY`, ...), not as httpx would read those variables itself.
- **A key set is read or refused as a whole** (`parse_key_set`): not JSON, not an object,
  `keys` not a list, more than `JWKS_MAX_KEYS` keys, or no usable signing key refuses it. One
  bad key among good ones is skipped (`Signing keys skipped`, with why) and the rest are used;
  so are keys for encryption (`use: enc`), silently. Only RSA, EC and OKP keys are read, their
  members strings of bounded length, before PyJWT sees them.
- **A refused or failed fetch changes nothing cached**: it is logged once (`Signing keys
  refused`, with why) and tried again after a backoff of `JWKS_MIN_REFETCH_SECONDS`, doubling
  with each failure in a row up to `JWKS_MAX_BACKOFF_SECONDS`; requests in between do not fetch.
- **Keys cached stay in use until they expire**: fresh for `max_age` seconds after the fetch
  that brought them (`OAUTH_JWKS_CACHE_SECONDS`), then still used for `max_stale` more
  (`OAUTH_JWKS_MAX_STALE_SECONDS`) while a new set cannot be had. A request whose key is cached
  never waits for a fetch: past `max_age` it starts one in the background and goes on.
- **Only a request that needs a key we do not hold waits**, for the fetch under way or a new
  one (an unknown `kid` fetches at most once per `JWKS_MIN_REFETCH_SECONDS`), and at most
  `JWKS_TIMEOUT_SECONDS`. With no usable key at all, `key()` raises `KeysUnavailable` (sign-in
  answers 503 with `Retry-After`: the issuer's fault, not the caller's).

One fetch at a time per event loop; the cache is a cache of public keys, not request state.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import jwt
import orjson

from core.events import ERROR_TEXT_LENGTH, clip, log
from core.operations import KEY_ID_LENGTH, SigningKeysFetched, SigningKeysRefused, SigningKeysSkipped, SkippedKey
from tools.bodies import BodyRefused, read_bounded
from tools.connect import ProxyError, proxy_for

JWKS_TIMEOUT_SECONDS = 5.0
"""One total deadline for a key-set fetch: connecting, the headers and the whole body."""
JWKS_MAX_BYTES = 256 * 1024
"""Largest key set, as sent and once decoded."""
JWKS_MAX_KEYS = 100
"""Most keys a set may list (issuers publish a handful); more refuses the set."""
JWKS_MIN_REFETCH_SECONDS = 10.0
"""An unknown `kid` fetches the keys again at most this often (a flood of made-up kids costs one
fetch); also the first backoff after a failed fetch."""
JWKS_MAX_BACKOFF_SECONDS = 300.0
"""The longest wait between two fetches while they keep failing."""
MAX_KID_CHARS = KEY_ID_LENGTH
MAX_KEY_MEMBER_CHARS = 2_800
"""Longest base64url member of a key: an RSA modulus of 16,384 bits (OpenSSL's largest) is 2,731."""

_MEMBERS = {"RSA": ("n", "e"), "EC": ("crv", "x", "y"), "OKP": ("crv", "x")}
"""The members PyJWT reads of each key type we use; other types are not signing keys we can use."""


class KeySetRefused(Exception):
    """Why a fetched key set is not used (the whole of it); the message is logged as `reason`."""


class KeysUnavailable(Exception):
    """No usable signing key is held and none can be fetched now; `retry_after` in seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("the issuer's signing keys cannot be had")
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Skipped:
    """A key of a set that was not used, and why."""

    index: int
    kid: str | None
    reason: str


def parse_key_set(content: bytes) -> tuple[dict[str | None, jwt.PyJWK], list[Skipped]]:
    """The signing keys of a JWKS document by `kid`, and the keys skipped; `KeySetRefused` when
    the document as a whole cannot be used (see the module docstring)."""
    try:
        document = orjson.loads(content)  # nesting deeper than 1,024 is a JSONDecodeError
    except orjson.JSONDecodeError:
        raise KeySetRefused("not JSON") from None
    if not isinstance(document, dict):
        raise KeySetRefused("not a JSON object")
    entries = document.get("keys")
    if not isinstance(entries, list):
        raise KeySetRefused("`keys` is not a list")
    if len(entries) > JWKS_MAX_KEYS:
        raise KeySetRefused(f"more than {JWKS_MAX_KEYS} keys")
    keys: dict[str | None, jwt.PyJWK] = {}
    skipped: list[Skipped] = []
    for index, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get("use", "sig") == "enc":
            continue  # an encryption key: not ours to use, nothing wrong with it
        kid = entry.get("kid") if isinstance(entry, dict) else None
        problem = _key_problem(entry)
        if problem is None and kid in keys:
            problem = "another key has the same kid"
        if problem is None:
            try:
                keys[kid] = jwt.PyJWK(entry)
            except (jwt.PyJWTError, ValueError):  # PyJWK's errors, and cryptography's for bad numbers
                problem = f"not a usable {entry['kty']} key"
        if problem is not None:
            skipped.append(Skipped(index, kid if isinstance(kid, str) else None, problem))
    if not keys:
        raise KeySetRefused("no usable signing key")
    return keys, skipped


def _key_problem(entry: Any) -> str | None:
    """Why a key entry cannot be a signing key we use, checked before PyJWT reads it; None if it may be."""
    if not isinstance(entry, dict):
        return "not a JSON object"
    kid = entry.get("kid")
    if kid is not None and not (isinstance(kid, str) and len(kid) <= MAX_KID_CHARS):
        return f"its kid is not a string of at most {MAX_KID_CHARS} characters"
    if entry.get("use", "sig") != "sig":
        return "its use is not sig"
    kty = entry.get("kty")
    if not isinstance(kty, str) or kty not in _MEMBERS:
        return "its kty is not RSA, EC or OKP"
    for name in _MEMBERS[kty]:
        value = entry.get(name)
        if not isinstance(value, str) or not 0 < len(value) <= MAX_KEY_MEMBER_CHARS:
            return f"its {name} is not a string of 1 to {MAX_KEY_MEMBER_CHARS} characters"
    if "alg" in entry and not isinstance(entry["alg"], str):
        return "its alg is not a string"
    return None


async def fetch_key_set(url: str, timeout: float = JWKS_TIMEOUT_SECONDS) -> bytes:
    """The body at `url` within one total deadline and `JWKS_MAX_BYTES`, or `KeySetRefused`."""
    try:
        async with asyncio.timeout(timeout):
            async with (
                httpx.AsyncClient(transport=_transport(url), timeout=timeout, follow_redirects=False) as client,
                client.stream("GET", url, headers={"Accept": "application/json", "Accept-Encoding": "identity"}) as r,
            ):
                if r.status_code != 200:
                    raise KeySetRefused(f"HTTP {r.status_code}")
                encoding = r.headers.get("Content-Encoding", "")
                return await read_bounded(
                    r.aiter_raw(), encoding, max_bytes=JWKS_MAX_BYTES, max_decoded_bytes=JWKS_MAX_BYTES
                )
    except TimeoutError:
        raise KeySetRefused(f"no whole answer within {timeout:g} s") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise KeySetRefused(f"cannot be fetched ({type(exc).__name__})") from None
    except ProxyError as exc:
        raise KeySetRefused(str(exc)) from None
    except BodyRefused as refused:
        raise KeySetRefused(
            f"encoded as {refused.encoding!r}"
            if refused.reason == "encoding"
            else f"over {JWKS_MAX_BYTES} bytes"
            if refused.reason in ("too_large", "inflates_too_large")
            else f"compressed data {refused.reason}"
        ) from None


def _transport(url: str) -> httpx.AsyncHTTPTransport:
    """httpx's transport for `url`, through the proxy tools/connect.py picks (the TomTom client's
    and the downloads' rule): a client given a transport reads no proxy variable itself, while
    the transport still takes its CA roots from SSL_CERT_FILE / SSL_CERT_DIR."""
    parsed = httpx.URL(url)
    proxy = proxy_for(parsed.scheme, parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80))
    if proxy is None:
        return httpx.AsyncHTTPTransport()
    authorization = proxy.usable().authorization
    headers = {"Proxy-Authorization": authorization} if authorization is not None else None
    return httpx.AsyncHTTPTransport(proxy=httpx.Proxy(proxy.url, headers=headers))


@dataclass(slots=True)
class JwksCache:
    """The issuer's signing keys by `kid` (see the module docstring for every rule)."""

    url: str
    max_age: float
    """Seconds the keys of a fetch are fresh (OAUTH_JWKS_CACHE_SECONDS)."""
    max_stale: float = 3600.0
    """Seconds after `max_age` the keys stay in use while no new set can be had (OAUTH_JWKS_MAX_STALE_SECONDS)."""
    min_refetch: float = JWKS_MIN_REFETCH_SECONDS
    max_backoff: float = JWKS_MAX_BACKOFF_SECONDS
    timeout: float = JWKS_TIMEOUT_SECONDS
    fetch: Callable[[str, float], Awaitable[bytes]] = fetch_key_set
    """`(url, timeout) -> body`, or `KeySetRefused`; tests stand in for the network here."""
    clock: Callable[[], float] = time.monotonic
    _keys: Mapping[str | None, jwt.PyJWK] = field(default_factory=dict)
    _fetched_at: float = -math.inf
    """When the keys held were fetched."""
    _next_fetch: float = -math.inf
    """No fetch before this (the unknown-kid cooldown, or the backoff after failures)."""
    _failures: int = 0
    """Failed fetches in a row."""
    _fetching: asyncio.Task[None] | None = None

    async def key(self, kid: str | None) -> jwt.PyJWK | None:
        """The key `kid` (or the only key, for a token without `kid`), None when the issuer does
        not publish it, or `KeysUnavailable` when no usable key is held or can be fetched."""
        now = self.clock()
        if self._usable(now):
            found = self._find(kid)
            if found is not None:
                if now >= self._fetched_at + self.max_age and now >= self._next_fetch:
                    self._start_fetch()  # stale: refreshed in the background, this request goes on
                return found
        if now >= self._next_fetch or self._fetch_under_way():
            await asyncio.shield(self._start_fetch())
            now = self.clock()
        if not self._usable(now):
            raise KeysUnavailable(max(1, math.ceil(self._next_fetch - now)))
        return self._find(kid)

    def _usable(self, now: float) -> bool:
        return bool(self._keys) and now < self._fetched_at + self.max_age + self.max_stale

    def _find(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None and len(self._keys) == 1:  # an issuer with one key may leave `kid` out
            return next(iter(self._keys.values()))
        return self._keys.get(kid)

    def _fetch_under_way(self) -> bool:
        task = self._fetching
        return task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop()

    def _start_fetch(self) -> asyncio.Task[None]:
        """The fetch under way on this event loop, or a new one; callers that wait share it."""
        if not self._fetch_under_way():
            self._fetching = asyncio.get_running_loop().create_task(self._refresh())
        assert self._fetching is not None
        return self._fetching

    async def _refresh(self) -> None:
        """Fetch and read the key set, replacing the keys held, or log why not; never raises."""
        try:
            content = await self.fetch(self.url, self.timeout)
            keys, skipped = parse_key_set(content)
        except KeySetRefused as refused:
            now = self.clock()
            self._failures += 1
            backoff = min(self.max_backoff, self.min_refetch * 2 ** min(self._failures - 1, 30))
            self._next_fetch = now + backoff
            kept = len(self._keys) if self._usable(now) else 0
            log(
                SigningKeysRefused(
                    reason=clip(str(refused), ERROR_TEXT_LENGTH),
                    failures=self._failures,
                    retry_in_s=round(backoff, 1),
                    keys_kept=kept,
                )
            )
            return
        now = self.clock()
        self._keys, self._fetched_at = keys, now
        self._failures, self._next_fetch = 0, now + self.min_refetch
        if skipped:
            reasons = [
                SkippedKey(
                    index=s.index,
                    kid=None if s.kid is None else clip(s.kid, KEY_ID_LENGTH),
                    reason=clip(s.reason, ERROR_TEXT_LENGTH),
                )
                for s in skipped[:100]
            ]
            log(SigningKeysSkipped(keys=len(keys), skipped=reasons))
        log(SigningKeysFetched(keys=len(keys)))
