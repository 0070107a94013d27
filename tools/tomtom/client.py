"""Calls to the TomTom APIs: pooling, deadlines, bounded retries and bodies, status mapping, no key leaks.

- One connection pool per process and event loop (tools/tomtom/http1.py: HTTP/1.1 parsed by
  `httptools`, URLs built by yarl). Idle connections are kept alive (5 s) and reused across
  calls; no cookie is ever kept, so nothing one caller's request got back travels with
  another's. Why not aiohttp's or httpx's client: docs/adr/0033-geocode-cpu.md (their request
  and response models cost more CPU than the rest of a compact call's exchange); which client
  serves which outbound job: docs/adr/0039-outbound-http-stacks.md.
- One total deadline per tool call (`ClientSettings.total_timeout`, TOMTOM_TIMEOUT): every
  request of the call's session, its retries, the backoff between them and the reading of every
  body, however slowly the server sends it, end by it (an `asyncio` timeout around the whole
  exchange; the session's own timeout bounds only opening a connection). Passing it is
  `unavailable`, naming it.
- Retries 429/502/503/504 with exponential backoff, honouring `Retry-After` (RFC 9110:
  delta-seconds or an HTTP-date; anything else is ignored) capped at `max_retry_after`, within
  the deadline; gives up with `retry_later` (and `retry_after`, never above the cap) when
  waiting would pass it.
- Bodies are bounded while they stream: at most `max_body_bytes` as sent and
  `max_decoded_bytes` once decompressed (tools/bodies.py: decoded a slice at a time, so a
  decompression bomb never inflates in memory, and the event loop runs between slices, so the
  deadline holds while a bomb inflates); over either is `malformed`, naming the limit.
- Heads are bounded as they arrive (`max_header_bytes`, and per line and in number:
  tools/tomtom/http1.py); past a limit reading stops and the answer is `malformed`, naming it.
  Interim answers (`103 Early Hints`) are skipped for the final one, within the same deadline.
- At most `max_connections` requests to TomTom are in flight per event loop; more wait for a
  connection, within the deadline (passing it there is the same `unavailable`).
- Status mapping: 400 -> invalid_arguments (with TomTom's message), 401/403 -> unauthorized,
  404 -> invalid_arguments, 429 -> retry_later, 5xx and timeouts -> unavailable.
- Paths travel exactly as the tools build them (`request(path=...)` takes an encoded path: a
  free-text query in it percent-encoded whole, `query_segment`); parameters are encoded here.
- The key travels in the `TomTom-Api-Key` header on Orbis (`KEY_HEADER`: TomTom documents it for
  the Orbis APIs and recommends it, so no URL carries the key) and as the `key` query parameter on
  TomTom Maps (whose pages document no header); either way it is scrubbed from every answer body
  (the body is searched for it first and copied only when it holds it); error messages never
  include URLs. A request's own headers (`headers=`: an API version, an `Attributes` selection)
  go after the defaults; the key header is set last, so no caller can replace it.
- With traces on, each request sent (a retry too) is a CLIENT span (tools/tracing.py): `url.full`
  (no key in it on Orbis; the `key` parameter `REDACTED` on TomTom Maps), the status, and on
  failure the exception's class name, never its text.
- A 2xx body is decoded by `json_object` (TomTom's whole JSON object), or by the `decode`
  callable a caller passes to read only what its answer needs (e.g. a typed decoder); either
  sees the body after the key scrub.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import quote

import orjson
from opentelemetry.trace import Span, SpanKind, StatusCode, Tracer
from yarl import URL

from core.errors import ErrorCode, ToolError
from tools import bodies, tracing
from tools.connect import ProxyError
from tools.tomtom import http1
from tools.tomtom.backends import Backend

RETRYABLE = frozenset({429, 502, 503, 504})
KiB = 1024
MiB = 1024 * 1024
T = TypeVar("T")
KEY_HEADER = "TomTom-Api-Key"
"""The header that carries the key to the Orbis APIs, out of every URL (TomTom recommends it, and
it wins over a `key` parameter); TomTom Maps takes the `key` parameter."""
REQUEST_HEADERS = {"Accept": "application/json", "Accept-Encoding": "gzip"}
"""Sent with every request, before the call's own (`TomTom-User-Agent`, a body's `Content-Type`)."""


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """How the server talks to TomTom; each limit is a setting (README, "Configuration")."""

    base_url: str
    connect_timeout: float = 5.0
    """Seconds to open a connection (TOMTOM_CONNECT_TIMEOUT)."""
    total_timeout: float = 20.0
    """Seconds for all of one tool call's TomTom requests, retries and backoff included (TOMTOM_TIMEOUT)."""
    max_retries: int = 2
    backoff: float = 0.25
    max_retry_after: float = 60.0
    """Longest `Retry-After` honoured or passed on, in seconds (TOMTOM_MAX_RETRY_AFTER)."""
    max_body_bytes: int = 16 * MiB
    """Largest answer as sent, compressed or not (TOMTOM_MAX_BODY_BYTES)."""
    max_decoded_bytes: int = 64 * MiB
    """Largest answer once decompressed (TOMTOM_MAX_DECODED_BYTES)."""
    max_header_bytes: int = 64 * KiB
    """Largest head of an answer: its status line and headers (TOMTOM_MAX_HEADER_BYTES)."""
    max_connections: int = 64
    """Connections to TomTom in use at once, per event loop; more requests wait (TOMTOM_MAX_CONNECTIONS)."""
    max_full_chars: int = 5_000_000
    """Largest `response_detail: full` result, in characters of its JSON (MCP_MAX_FULL_CHARS)."""


def json_object(content: bytes) -> dict[str, Any]:
    """A body as TomTom's whole JSON object; anything else is `malformed`."""
    try:
        data = orjson.loads(content)
    except orjson.JSONDecodeError:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with something that is not JSON.") from None
    if not isinstance(data, dict):
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with JSON of an unexpected shape.")
    return data


async def closing_shared_clients[R](work: Awaitable[R]) -> R:
    """`work`'s result, the running loop's TomTom session closed after it (one-shot commands)."""
    try:
        return await work
    finally:
        await close_shared_clients()


async def close_shared_clients() -> None:
    """Close the running event loop's pooled connections (ASGI lifespan shutdown, the end of a CLI run)."""
    await http1.close_pool()


@dataclass(slots=True)
class UpstreamStats:
    """What one tool call spent upstream, for the call log."""

    calls: int = 0
    seconds: float = 0.0
    statuses: list[int] = field(default_factory=list)
    sent: list[SentRequest] = field(default_factory=list)
    """Each request the call made (retries not repeated), without its key or parameters."""


@dataclass(frozen=True, slots=True)
class SentRequest:
    """One request as sent, for the upstream contract canary (tools/canary.py): the method, the
    path as built and TomTom's API version when it travelled apart from the path (Orbis's
    `apiVersion` parameter or `TomTom-Api-Version` header). Never the key, never the query."""

    method: str
    path: str
    api_version: str | None = None


_SURROGATES = re.compile("[\ud800-\udfff]")


def upstream_user_agent(product: str, version: str, client_name: str) -> str:
    """`TomTom-User-Agent`: `<product>/<version> <client>`, the client name percent-encoded
    (a code point UTF-8 cannot encode, a lone surrogate, as U+FFFD)."""
    return f"{product}/{version} {quote(_SURROGATES.sub('\ufffd', client_name), safe='')}"


class TomTomSession:
    """TomTom access for one tool call: bound to a key, a backend and the caller's identity.

    The call's deadline starts when the session is made (the first time a tool asks for
    `context.tomtom`) and covers every request made through it.
    """

    def __init__(
        self,
        *,
        settings: ClientSettings,
        api_key: str,
        backend: Backend,
        user_agent: str,
        stats: UpstreamStats | None = None,
    ) -> None:
        self.settings = settings
        self.backend = backend
        self._api_key = api_key
        self._user_agent = user_agent
        self.stats = stats or UpstreamStats()
        self.deadline = time.monotonic() + settings.total_timeout
        """`time.monotonic()` by which every request of this call has ended."""

    @property
    def _key_in_header(self) -> bool:
        """Whether the key travels in `TomTom-Api-Key` (Orbis) rather than the `key` parameter."""
        return self.backend is Backend.ORBIS

    def __repr__(self) -> str:  # never show the key
        return f"<TomTomSession backend={self.backend.value}>"

    async def get(
        self,
        path: str,
        params: dict[str, Any] | None = None,
        *,
        decode: Callable[[bytes], Any] = json_object,
        headers: dict[str, str] | None = None,
    ) -> Any:
        return await self.request("GET", path, params=params, decode=decode, headers=headers)

    async def post(
        self,
        path: str,
        body: Any,
        params: dict[str, Any] | None = None,
        *,
        decode: Callable[[bytes], Any] = json_object,
        headers: dict[str, str] | None = None,
    ) -> Any:
        return await self.request("POST", path, params=params, body=body, decode=decode, headers=headers)

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: Any = None,
        decode: Callable[[bytes], T] = json_object,  # type: ignore[assignment]
        headers: dict[str, str] | None = None,
    ) -> T:
        """`decode` of TomTom's 2xx body for one request (by default its whole JSON object),
        retried within the call's deadline, or a `ToolError`. `decode` gets the body with the
        key scrubbed and raises `ToolError(malformed)` for what it cannot read. `headers` are
        the request's own (an API version, an `Attributes` selection), never the key."""
        pool = http1.pool()
        extra_headers = dict(headers or {})
        query = {k: _query_value(v) for k, v in (params or {}).items() if v is not None}
        if not self._key_in_header:
            query["key"] = self._api_key
        # `path` is sent as built: a free-text query in it is already percent-encoded whole, and
        # yarl would otherwise decode the reserved characters it may leave in a path (`;`, `=`,
        # `&`, `,`, ...), which a server may read as delimiters.
        url = URL(self.settings.base_url + path, encoded=True).extend_query(query)
        headers = {**REQUEST_HEADERS, "TomTom-User-Agent": self._user_agent}
        data = None
        if body is not None:
            data = orjson.dumps(body)
            headers["Content-Type"] = "application/json"
        headers.update(extra_headers)
        if self._key_in_header:
            for name in [name for name in headers if name.lower() == KEY_HEADER.lower()]:
                del headers[name]  # one key header, ours, whatever case a caller wrote
            headers[KEY_HEADER] = self._api_key
        version = query.get("apiVersion") or next(
            (value for name, value in headers.items() if name.lower() == "tomtom-api-version"), None
        )
        self.stats.sent.append(SentRequest(method, path, str(version) if version is not None else None))
        attempt = 0
        while True:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise self._deadline_passed()
            started = time.monotonic()
            connect_timeout = min(self.settings.connect_timeout, remaining)
            span = None if (tracer := tracing.tracer()) is None else self._span(tracer, method, path, query, attempt)
            try:
                async with asyncio.timeout(remaining):
                    status, retry_after, content = await self._exchange(
                        pool, method, url, headers, data, connect_timeout
                    )
            except http1.ConnectTimeout as exc:
                error = ToolError(
                    ErrorCode.UNAVAILABLE,
                    f"TomTom could not be connected to within {self.settings.connect_timeout:g} s"
                    " (TOMTOM_CONNECT_TIMEOUT); try again later.",
                )
                raise _failed(span, exc, error) from None
            except TimeoutError as exc:
                raise _failed(span, exc, self._deadline_passed()) from None
            except http1.HeadRefused as exc:
                raise _failed(span, exc, _head_refused(exc)) from None
            except http1.UpstreamError as exc:
                proxy = exc.__cause__ if isinstance(exc.__cause__, ProxyError) else None  # names no credentials
                why = f": {proxy}; check HTTPS_PROXY and NO_PROXY" if proxy else "; try again later"
                error = ToolError(ErrorCode.UNAVAILABLE, f"TomTom could not be reached{why}.")
                raise _failed(span, exc, error) from None
            except BaseException as exc:  # a body refused (ToolError), or the call cancelled
                _failed(span, exc, exc)
                raise
            finally:
                self.stats.calls += 1
                self.stats.seconds += time.monotonic() - started
            self.stats.statuses.append(status)
            if span is not None:
                _answered(span, status)
            if status in RETRYABLE and attempt < self.settings.max_retries:
                wait = retry_after if retry_after is not None else self.settings.backoff * (2**attempt)
                if time.monotonic() + wait < self.deadline:
                    attempt += 1
                    await asyncio.sleep(wait)
                    continue
            return self._answer(status, content, retry_after, decode)

    def _span(self, tracer: Tracer, method: str, path: str, query: dict[str, Any], attempt: int) -> Span:
        """The CLIENT span of one request sent (OpenTelemetry's HTTP conventions): `url.full`
        (no key in it when the key travels in its header; `REDACTED` where it is the `key`
        parameter), `http.request.resend_count` on a retry."""
        if "key" in query:
            query = {**query, "key": tracing.REDACTED}
        redacted = URL(self.settings.base_url + path, encoded=True).extend_query(query)
        return tracer.start_span(
            method,
            kind=SpanKind.CLIENT,
            attributes=tracing.attributes(
                http__request__method=method,
                server__address=redacted.host,
                server__port=redacted.port,
                url__full=tracing.clip(str(redacted)),
                http__request__resend_count=attempt or None,
            ),
        )

    def _deadline_passed(self) -> ToolError:
        return ToolError(
            ErrorCode.UNAVAILABLE,
            f"TomTom did not answer within {self.settings.total_timeout:g} s (TOMTOM_TIMEOUT); try again later.",
        )

    async def _exchange(
        self,
        pool: http1.Pool,
        method: str,
        url: URL,
        headers: dict[str, str],
        data: bytes | None,
        connect_timeout: float,
    ) -> tuple[int, float | None, bytes]:
        """Send one request and read its whole body within the size limits: `(status, retry_after, body)`.

        Leaving the `async with` before the body's end closes the connection rather than pooling it."""
        origin = http1.origin_of(url.scheme, url.raw_host or "", url.port)
        limits = http1.Limits(
            max_header_bytes=self.settings.max_header_bytes, max_connections=self.settings.max_connections
        )
        async with await pool.request(
            method, origin, url.raw_path_qs, headers, data, connect_timeout=connect_timeout, limits=limits
        ) as response:
            limit = self.settings.max_body_bytes
            length = response.headers.get("content-length", "")
            if length.isdigit() and int(length) > limit:
                response.close()  # the connection goes now: nothing waits for a body never read
                raise _too_large(f"is larger than {_size(limit)} (TOMTOM_MAX_BODY_BYTES)")
            content = await read_bounded(
                response.chunks(),
                response.headers.get("content-encoding", ""),
                max_bytes=limit,
                max_decoded_bytes=self.settings.max_decoded_bytes,
            )
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            if retry_after is not None:
                retry_after = min(retry_after, self.settings.max_retry_after)
            return response.status, retry_after, content

    def _answer(self, status: int, content: bytes, retry_after: float | None, decode: Callable[[bytes], T]) -> T:
        key = self._api_key.encode()
        if key and key in content:  # a search, no copy: most bodies do not hold the key
            content = content.replace(key, b"***")
        if 200 <= status < 300:
            return decode(content)
        raise _status_error(status, _upstream_message(content), retry_after, self.settings.max_retry_after)


def _answered(span: Span, status: int) -> None:
    """End a request's span with TomTom's status: an error from 400 on (HTTP client conventions)."""
    span.set_attribute("http.response.status_code", status)
    if status >= 400:
        span.set_attribute("error.type", str(status))
        span.set_status(StatusCode.ERROR)
    span.end()


def _failed[E: BaseException](span: Span | None, cause: BaseException, error: E) -> E:
    """`error`, after ending a request's span as failed by `cause`: its class name is the
    `error.type` (never its text, which may hold the URL and so the key)."""
    if span is not None:
        span.set_attribute("error.type", type(cause).__qualname__)
        span.set_status(StatusCode.ERROR, error.message if isinstance(error, ToolError) else None)
        span.end()
    return error


def _query_value(value: Any) -> str | list[str]:
    """Booleans as `true`/`false`; a whole float as an integer (`22.0` -> `22`: typed inputs
    read a JSON `22` as a float); a list becomes a repeated parameter (`avoid=a&avoid=b`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return [str(_query_value(v)) for v in value]
    return str(value)


def _size(n: int) -> str:
    if n % MiB == 0:
        return f"{n // MiB} MiB"
    return f"{n // KiB} KiB" if n % KiB == 0 else f"{n:,} bytes"


def _too_large(what: str) -> ToolError:
    return ToolError(ErrorCode.MALFORMED, f"TomTom's answer {what}; it was not read.")


def _head_refused(refused: http1.HeadRefused) -> ToolError:
    """`malformed`, naming the head limit the answer passed (tools/tomtom/http1.py stopped reading at it)."""
    match refused.which:
        case "head":
            return _too_large(f"has headers larger than {_size(refused.limit)} in all (TOMTOM_MAX_HEADER_BYTES)")
        case "line":
            return _too_large(f"has a header line longer than {_size(refused.limit)}, the most one may have")
        case "count":
            return _too_large(f"has more than {refused.limit} headers, the most one may have")


async def read_bounded(
    chunks: AsyncIterator[bytes], content_encoding: str, *, max_bytes: int, max_decoded_bytes: int
) -> bytes:
    """The decoded body from `chunks` as sent (`tools.bodies.read_bounded`: decoded a slice at a
    time, the event loop let run between slices), or `malformed` naming the limit or the fault."""
    try:
        return await bodies.read_bounded(
            chunks, content_encoding, max_bytes=max_bytes, max_decoded_bytes=max_decoded_bytes
        )
    except bodies.BodyRefused as refused:
        raise _refused(refused, max_bytes, max_decoded_bytes) from None


def _refused(refused: bodies.BodyRefused, max_bytes: int, max_decoded_bytes: int) -> ToolError:
    match refused.reason:
        case "too_large":
            return _too_large(f"is larger than {_size(max_bytes)} (TOMTOM_MAX_BODY_BYTES)")
        case "inflates_too_large":
            return _too_large(f"inflates to more than {_size(max_decoded_bytes)} (TOMTOM_MAX_DECODED_BYTES)")
        case "encoding":
            return ToolError(
                ErrorCode.MALFORMED, f"TomTom's answer has an encoding we cannot read ({refused.encoding})."
            )
        case "corrupt":
            return ToolError(ErrorCode.MALFORMED, "TomTom's answer is not valid compressed data.")
        case "truncated":
            return ToolError(ErrorCode.MALFORMED, "TomTom's compressed answer was cut off.")


_DELTA_SECONDS = re.compile(r"[0-9]+")


def parse_retry_after(raw: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` value (RFC 9110, section 10.2.3), or None.

    Either delta-seconds (ASCII digits only: no sign, fraction or exponent) or an HTTP-date
    (IMF-fixdate, RFC 850 or asctime form; a date in the past is 0). Anything else (`inf`,
    `1e400`, `-5`, `soon`) is None, as if the header were absent. The result is finite and may
    be large; callers cap it.
    """
    if raw is None:
        return None
    text = raw.strip()
    if not text:
        return None
    if _DELTA_SECONDS.fullmatch(text):
        return float(int(text[-15:])) if len(text) <= 15 else 1e15  # beyond any cap either way
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # asctime has no zone; HTTP dates are always GMT
        when = when.replace(tzinfo=UTC)
    try:
        delta = when.timestamp() - (time.time() if now is None else now)
    except (OverflowError, OSError, ValueError):
        return None
    return max(0.0, delta) if math.isfinite(delta) else None


def _upstream_message(content: bytes) -> str | None:
    """TomTom's own explanation of a failed request, when it gave one."""
    try:
        data = orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    for candidate in (
        data.get("errorText"),
        (data.get("error") or {}).get("description") if isinstance(data.get("error"), dict) else data.get("error"),
        (data.get("detailedError") or {}).get("message") if isinstance(data.get("detailedError"), dict) else None,
        data.get("message"),
        (data.get("httpStatusCode") and data.get("errorText")),
    ):
        if isinstance(candidate, str) and candidate.strip():
            return candidate.strip()[:500]
    return None


def _status_error(status: int, upstream: str | None, retry_after: float | None, cap: float) -> ToolError:
    said = f" TomTom said: {upstream}" if upstream else ""
    if status in (400, 404, 422):
        return ToolError(ErrorCode.INVALID_ARGUMENTS, f"TomTom rejected the request.{said}", status=status)
    if status in (401, 403):
        return ToolError(
            ErrorCode.UNAUTHORIZED,
            "TomTom refused the API key: it may be invalid, expired, or lack access to this API"
            " (TomTom Orbis Maps needs its own access; try the tomtom-maps backend).",
            status=status,
        )
    if status == 429:
        return ToolError(
            ErrorCode.RETRY_LATER,
            "TomTom's rate limit was reached; retry later.",
            retry_after=_whole_seconds(1.0 if retry_after is None else retry_after, cap),
        )
    if status in (502, 503, 504):
        if retry_after is not None:
            return ToolError(
                ErrorCode.RETRY_LATER,
                "TomTom is temporarily unavailable; retry later.",
                retry_after=_whole_seconds(retry_after, cap),
            )
        return ToolError(ErrorCode.UNAVAILABLE, "TomTom is temporarily unavailable; try again later.", status=status)
    return ToolError(ErrorCode.UNAVAILABLE, f"TomTom failed with status {status}.{said}", status=status)


def _whole_seconds(seconds: float, cap: float) -> int:
    """`retry_after` for the caller: whole seconds, at least 1, never above the cap."""
    return max(1, min(math.ceil(seconds), math.floor(cap)))
