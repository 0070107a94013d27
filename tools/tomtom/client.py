"""Calls to the TomTom APIs: pooling, deadlines, bounded retries, status mapping, no key leaks.

- One `httpx.AsyncClient` per process and event loop (connection pooling across calls).
- Retries 429/502/503/504 with exponential backoff, honouring `Retry-After`, within one total
  deadline; gives up with `retry_later` (and `retry_after`) when waiting would pass it.
- Status mapping: 400 -> invalid_arguments (with TomTom's message), 401/403 -> unauthorized,
  404 -> invalid_arguments, 429 -> retry_later, 5xx and timeouts -> unavailable.
- The key travels as the `key` query parameter and is scrubbed from every answer body; error
  messages never include URLs.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote

import httpx
import orjson

from tools.errors import ErrorCode, ToolError
from tools.tomtom.backends import Backend

RETRYABLE = frozenset({429, 502, 503, 504})
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


@dataclass(frozen=True, slots=True)
class ClientSettings:
    base_url: str
    connect_timeout: float = 5.0
    total_timeout: float = 20.0
    max_retries: int = 2
    backoff: float = 0.25


def shared_http_client(settings: ClientSettings) -> httpx.AsyncClient:
    """The pooled client for the running event loop (created on first use)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            timeout=httpx.Timeout(settings.total_timeout, connect=settings.connect_timeout),
            limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
            headers={"Accept": "application/json", "Accept-Encoding": "gzip"},
            follow_redirects=False,
        )
        _clients[loop] = client
    return client


async def close_shared_clients() -> None:
    for client in list(_clients.values()):
        await client.aclose()
    _clients.clear()


@dataclass(slots=True)
class UpstreamStats:
    """What one tool call spent upstream, for the call log."""

    calls: int = 0
    seconds: float = 0.0
    statuses: list[int] = field(default_factory=list)


def upstream_user_agent(product: str, version: str, client_name: str) -> str:
    """`TomTom-User-Agent`: `<product>/<version> <client>`, the client name percent-encoded."""
    return f"{product}/{version} {quote(client_name, safe='')}"


class TomTomSession:
    """TomTom access for one tool call: bound to a key, a backend and the caller's identity."""

    def __init__(
        self,
        *,
        settings: ClientSettings,
        api_key: str,
        backend: Backend,
        user_agent: str,
        stats: UpstreamStats | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.settings = settings
        self.backend = backend
        self._api_key = api_key
        self._user_agent = user_agent
        self._http = http
        self.stats = stats or UpstreamStats()

    def __repr__(self) -> str:  # never show the key
        return f"<TomTomSession backend={self.backend.value}>"

    async def get(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.request("GET", path, params=params)

    async def post(self, path: str, body: Any, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.request("POST", path, params=params, body=body)

    async def request(
        self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None
    ) -> dict[str, Any]:
        http = self._http or shared_http_client(self.settings)
        query = {k: _query_value(v) for k, v in (params or {}).items() if v is not None}
        query["key"] = self._api_key
        headers = {"TomTom-User-Agent": self._user_agent}
        deadline = time.monotonic() + self.settings.total_timeout
        attempt = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ToolError(ErrorCode.UNAVAILABLE, "TomTom did not answer in time; try again later.")
            started = time.monotonic()
            try:
                response = await http.request(
                    method,
                    self.settings.base_url + path,
                    params=query,
                    json=body,
                    headers=headers,
                    timeout=httpx.Timeout(remaining, connect=min(self.settings.connect_timeout, remaining)),
                )
            except httpx.TimeoutException:
                raise ToolError(ErrorCode.UNAVAILABLE, "TomTom did not answer in time; try again later.") from None
            except httpx.HTTPError:
                raise ToolError(ErrorCode.UNAVAILABLE, "TomTom could not be reached; try again later.") from None
            finally:
                self.stats.calls += 1
                self.stats.seconds += time.monotonic() - started
            self.stats.statuses.append(response.status_code)
            if response.status_code in RETRYABLE and attempt < self.settings.max_retries:
                wait = _retry_after(response) or self.settings.backoff * (2**attempt)
                if time.monotonic() + wait < deadline:
                    attempt += 1
                    await asyncio.sleep(wait)
                    continue
            return self._answer(response)

    def _answer(self, response: httpx.Response) -> dict[str, Any]:
        content = response.content
        key = self._api_key.encode()
        if key and key in content:
            content = content.replace(key, b"***")
        status = response.status_code
        if 200 <= status < 300:
            try:
                data = orjson.loads(content)
            except orjson.JSONDecodeError:
                raise ToolError(ErrorCode.MALFORMED, "TomTom answered with something that is not JSON.") from None
            if not isinstance(data, dict):
                raise ToolError(ErrorCode.MALFORMED, "TomTom answered with JSON of an unexpected shape.")
            return data
        raise _status_error(status, _upstream_message(content), _retry_after(response))


def _query_value(value: Any) -> str | list[str]:
    """Booleans as `true`/`false`; a list becomes a repeated parameter (`avoid=a&avoid=b`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return [str(_query_value(v)) for v in value]
    return str(value)


def _retry_after(response: httpx.Response) -> float | None:
    raw = response.headers.get("Retry-After")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


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


def _status_error(status: int, upstream: str | None, retry_after: float | None) -> ToolError:
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
        seconds = round(retry_after) if retry_after is not None else 1
        return ToolError(
            ErrorCode.RETRY_LATER, "TomTom's rate limit was reached; retry later.", retry_after=max(seconds, 1)
        )
    if status in (502, 503, 504):
        if retry_after is not None:
            return ToolError(
                ErrorCode.RETRY_LATER, "TomTom is temporarily unavailable; retry later.", retry_after=round(retry_after)
            )
        return ToolError(ErrorCode.UNAVAILABLE, "TomTom is temporarily unavailable; try again later.", status=status)
    return ToolError(ErrorCode.UNAVAILABLE, f"TomTom failed with status {status}.{said}", status=status)
