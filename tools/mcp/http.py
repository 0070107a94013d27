"""`/mcp` over stateless Streamable HTTP, as an ASGI application.

In front of the SDK's transport sits one guard that answers every transport-safety question
with a plain HTTP status before any JSON-RPC is read:

    421 Host not allowed (DNS-rebinding protection)   403 Origin not allowed
    405 not POST (Allow: POST)                         415 not application/json
    406 Accept without application/json               413 body over MCP_MAX_BODY_BYTES
    400 unknown `tomtom-maps-backend` header

CORS preflights are answered here for allowed origins, and responses expose `Mcp-Session-Id`.
The server keeps nothing between requests: any worker or replica can answer any request.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.http.request import split_domain_port, validate_host
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers

from tools.context import CallContext, ServerConfig
from tools.dispatch import Dispatcher
from tools.mcp.identity import UNKNOWN, Identity, SessionIds, identify, upstream_metadata
from tools.mcp.server import build_server
from tools.tomtom.backends import Backend
from tools.tomtom.client import close_shared_clients
from tools.tomtom.credentials import KeySources, bearer_token

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

LOOPBACK_ORIGINS = ("http://127.0.0.1", "http://localhost", "http://[::1]", "https://127.0.0.1", "https://localhost")
CORS_ALLOW_HEADERS = (
    "Content-Type, Accept, Authorization, tomtom-api-key, tomtom-maps-backend, Mcp-Protocol-Version, "
    "Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID"
)
CORS_EXPOSE_HEADERS = "Mcp-Session-Id, TomTom-Upstream-Metadata"


@dataclass(frozen=True, slots=True)
class HttpSettings:
    allowed_hosts: Sequence[str]
    allowed_origins: Sequence[str]
    max_body_bytes: int
    session_ids: SessionIds
    path: str = "/mcp"


def origin_allowed(origin: str, allowed: Sequence[str]) -> bool:
    if "*" in allowed or origin in allowed:
        return True
    for base in LOOPBACK_ORIGINS:
        if origin == base or (origin.startswith(base + ":") and origin[len(base) + 1 :].isdigit()):
            return True
    return False


def host_allowed(host: str, allowed: Sequence[str]) -> bool:
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, list(allowed))


IDENTITY = "tomtom_mcp.identity"
"""Where the guard leaves the caller's `Identity` in the ASGI scope's `state`."""


def key_sources(headers: Headers) -> KeySources:
    return KeySources(header=headers.get("tomtom-api-key"), bearer=bearer_token(headers.get("authorization")))


def auth_method(headers: Headers, config: ServerConfig) -> str | None:
    context = CallContext(config=config, transport="http", keys=key_sources(headers))
    return context.auth_method


def http_context_factory(config: ServerConfig) -> Callable[[ServerRequestContext[Any]], CallContext]:
    """Who is calling over HTTP, from the request's headers (never from process memory)."""

    def make_context(ctx: ServerRequestContext[Any]) -> CallContext:
        request = ctx.request
        headers = request.headers if request is not None else Headers()
        identity = request.scope.get("state", {}).get(IDENTITY) if request is not None else None
        if identity is None:  # not through McpHttpApp (cannot happen in production)
            identity = Identity(UNKNOWN, headers.get("user-agent"))
        backend_header = headers.get("tomtom-maps-backend")
        return CallContext(
            config=config,
            transport="http",
            keys=key_sources(headers),
            backend=Backend.parse(backend_header, source="tomtom-maps-backend") if backend_header else None,
            client_name=identity.client_name,
            user_agent=identity.user_agent,
        )

    return make_context


async def _respond(
    send: Send, status: int, body: dict[str, Any] | str, headers: Sequence[tuple[str, str]] = ()
) -> None:
    if isinstance(body, dict):
        payload, content_type = json.dumps(body).encode(), "application/json"
    else:
        payload, content_type = body.encode(), "text/plain; charset=utf-8"
    raw_headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(payload)).encode())]
    raw_headers += [(k.lower().encode(), v.encode()) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})


def _jsonrpc_error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


class McpHttpApp:
    """The ASGI app for `/mcp`; also runs the SDK's task group through the ASGI lifespan."""

    def __init__(self, server: Server[Any], settings: HttpSettings, config: ServerConfig) -> None:
        self.settings = settings
        self.config = config
        self.manager = StreamableHTTPSessionManager(
            app=server,
            stateless=True,
            json_response=True,
            # The guard below validates Host and Origin; the SDK's copy of that check is off.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=settings.max_body_bytes,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
        elif scope["type"] == "http":
            await self.handle(scope, receive, send)

    async def lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        async with self.manager.run():
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            await close_shared_clients()
        await send({"type": "lifespan.shutdown.complete"})

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        if not host_allowed(headers.get("host", ""), self.settings.allowed_hosts):
            return await _respond(send, 421, _jsonrpc_error(-32600, "Host not allowed"))
        origin = headers.get("origin")
        cors: list[tuple[str, str]] = []
        if origin is not None:
            if not origin_allowed(origin, self.settings.allowed_origins):
                return await _respond(send, 403, _jsonrpc_error(-32600, "Origin not allowed"))
            cors = [
                ("Access-Control-Allow-Origin", origin),
                ("Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS),
                ("Vary", "Origin"),
            ]
        method = scope["method"]
        if method == "OPTIONS":
            preflight = [
                ("Access-Control-Allow-Methods", "POST, OPTIONS"),
                ("Access-Control-Allow-Headers", CORS_ALLOW_HEADERS),
                ("Access-Control-Max-Age", "86400"),
            ]
            return await _respond(send, 204, "", [*cors, *preflight, ("Allow", "POST, OPTIONS")])
        if method != "POST":
            message = _jsonrpc_error(-32600, f"{method} is not supported: this server is stateless, POST only")
            return await _respond(send, 405, message, [*cors, ("Allow", "POST")])
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            return await _respond(send, 415, _jsonrpc_error(-32600, "Content-Type must be application/json"), cors)
        accept = headers.get("accept", "")
        if accept and not any(t in accept for t in ("application/json", "*/*", "application/*")):
            return await _respond(send, 406, _jsonrpc_error(-32600, "Accept must include application/json"), cors)
        backend = headers.get("tomtom-maps-backend")
        if backend is not None:
            try:
                Backend.parse(backend, source="tomtom-maps-backend header")
            except ValueError as exc:
                return await _respond(send, 400, _jsonrpc_error(-32602, str(exc)), cors)
        body = await self._read_body(scope, receive, headers)
        if body is None:
            limit = self.settings.max_body_bytes
            return await _respond(send, 413, _jsonrpc_error(-32600, f"Request body over {limit} bytes"), cors)
        identity = identify(headers, body, self.settings.session_ids)
        metadata = upstream_metadata(identity, auth_method(headers, self.config))
        response_headers = [*cors, ("TomTom-Upstream-Metadata", metadata)]
        if identity.mint_session:
            response_headers.append(("Mcp-Session-Id", self.settings.session_ids.mint(identity.client_name)))
        state = {**scope.get("state", {}), IDENTITY: identity}
        await self._forward({**scope, "state": state}, body, send, response_headers)

    async def _read_body(self, scope: Scope, receive: Receive, headers: Headers) -> bytes | None:
        limit = self.settings.max_body_bytes
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _forward(self, scope: Scope, body: bytes, send: Send, extra_headers: list[tuple[str, str]]) -> None:
        # The SDK insists on both media types; the guard above already decided this client is fine.
        raw = [(k, v) for k, v in scope["headers"] if k not in (b"accept", b"content-length")]
        raw += [(b"accept", b"application/json, text/event-stream"), (b"content-length", str(len(body)).encode())]
        forwarded = {**scope, "headers": raw}
        delivered = False

        async def replay() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                return {"type": "http.disconnect"}
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        encoded = [(k.lower().encode(), v.encode()) for k, v in extra_headers]

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and encoded:
                message = {**message, "headers": [*message.get("headers", []), *encoded]}
            await send(message)

        await self.manager.handle_request(forwarded, replay, send_with_headers)


def build_http_app(dispatcher: Dispatcher, config: ServerConfig, settings: HttpSettings) -> McpHttpApp:
    return McpHttpApp(build_server(dispatcher, http_context_factory(config)), settings, config)
