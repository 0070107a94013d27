"""`/mcp` over stateless Streamable HTTP, as a Django async view.

The URLconf routes `MCP_PATH` here (docs/adr/0025-an-edge-without-patches.md), so Django's
middleware applies; the first of them answers a `Host` outside `ALLOWED_HOSTS` with 421 (the
DNS-rebinding answer, `misdirected`; tomtom_mcp/middleware.py). Before any JSON-RPC is read, one
guard answers every other transport-safety question with a plain HTTP status, each in this one
place:

    403 Origin not allowed                             405 not POST (Allow: POST)
    415 not application/json                           406 Accept without application/json
    413 body over MCP_MAX_BODY_BYTES                   400 unknown `tomtom-maps-backend` header

The SDK's transport, which serves what the single-request exchange leaves to it, has copies of
some of these rules: its Host and Origin check is switched off (`TransportSecuritySettings`),
and its media-type and body-size checks can never refuse what the guard let through (the
forwarded request says `application/json` in the SDK's spelling; the body is within the limit
it is given).

The body is then decoded once (`body.parse_body`, the SDK's own parser); one that is not a
single JSON-RPC message (unreadable, nested too deep, a batch, an `id` that is not a string or
an integer) answers 400 with the JSON-RPC error the specification names (-32700 parse error,
-32600 invalid request) and `id` null, before any tool runs. Who is calling, the tenant's quota
count and the single-request exchange all read that one message. Only what the exchange leaves
to the SDK's transport (2026-07-28 requests, notifications, responses) is read from the bytes
again, by the SDK, which takes nothing else.

With sign-in on (`MCP_AUTH` includes `oauth`; protocol/oauth.py), the guard then validates the
access token and admits its tenant (one database round trip, which also counts the request's
tool calls against the tenant's quotas):

    401 no token or an invalid one (`WWW-Authenticate: Bearer resource_metadata=...`)
    403 a scope missing (`insufficient_scope`), no such tenant, or the tenant is disabled
    503 the tenants' table cannot be read, or no signing key of the issuer can be had

Media types are compared case-insensitively. CORS preflights are answered here for allowed
origins, and responses expose `Mcp-Session-Id` and `TomTom-Upstream-Metadata`. The server keeps
nothing between requests: any worker or replica can answer any request.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import weakref
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode
from starlette.datastructures import Headers
from starlette.requests import Request

from core.events import CLIENT_NAME_LENGTH, SHORT_TEXT_LENGTH, USER_AGENT_LENGTH, clip
from protocol import exchange
from protocol.body import parse_body
from protocol.identity import UNKNOWN, Identity, SessionIds, identify, session_label, upstream_metadata
from protocol.oauth import METADATA_PATH, AuthFailure, ResourceServer, SignIn
from protocol.server import TRACE_SPAN, build_server, remote_parent, request_span
from tenants.store import Admission
from tools import tracing
from tools.context import CallContext, ServerConfig, TenantTerms, key_auth_method
from tools.dispatch import Dispatcher
from tools.tomtom.backends import BACKEND_HEADER, Backend
from tools.tomtom.credentials import KeySources, bearer_token

Message = dict[str, Any]

LOOPBACK_ORIGINS = ("http://127.0.0.1", "http://localhost", "http://[::1]", "https://127.0.0.1", "https://localhost")
CORS_ALLOW_HEADERS = (
    "Content-Type, Accept, Authorization, tomtom-api-key, tomtom-maps-backend, Mcp-Protocol-Version, "
    "Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID"
)
CORS_EXPOSE_HEADERS = "Mcp-Session-Id, TomTom-Upstream-Metadata, WWW-Authenticate"
JSON_ACCEPTED = ("application/json", "application/*", "*/*")
"""`Accept` media ranges that let us answer JSON."""


@dataclass(frozen=True, slots=True)
class HttpSettings:
    allowed_origins: Sequence[str]
    max_body_bytes: int
    session_ids: SessionIds
    path: str = "/mcp"
    sign_in: SignIn | None = None
    """None: API keys only (`MCP_AUTH=api-key`), no token is looked at."""


def origin_allowed(origin: str, allowed: Sequence[str]) -> bool:
    if "*" in allowed or origin in allowed:
        return True
    for base in LOOPBACK_ORIGINS:
        if origin == base or (origin.startswith(base + ":") and origin[len(base) + 1 :].isdigit()):
            return True
    return False


def media_types(header: str) -> list[str]:
    """The media types of a `Content-Type` or `Accept` value, lower-cased, parameters dropped."""
    return [part.split(";", 1)[0].strip().lower() for part in header.split(",")]


_REPLACED = (b"accept", b"content-type", b"content-length")
IDENTITY = "tomtom_mcp.identity"
"""Where the guard leaves the caller's `Identity` in the ASGI scope's `state`."""
ADMISSION = "tomtom_mcp.admission"
"""Where the guard leaves a signed-in caller's `tenants.store.Admission`."""


def key_sources(headers: Mapping[str, str]) -> KeySources:
    return KeySources(header=headers.get("tomtom-api-key"), bearer=bearer_token(headers.get("authorization")))


def auth_method(headers: Mapping[str, str], config: ServerConfig, admission: Admission | None = None) -> str | None:
    """How the caller's TomTom key comes (`CallContext.auth_method` of an HTTP call), None without one."""
    if admission is not None:
        return "oauth"
    return key_auth_method(key_sources(headers), config, over_http=True)


def tenant_context(admission: Admission) -> dict[str, Any]:
    """The `CallContext` fields of a signed-in caller: its tenant's key (and nothing else), name and terms."""
    backend = Backend.parse(admission.default_backend, source="tenant") if admission.default_backend else None
    return {
        "keys": KeySources(tenant=admission.api_key, signed_in=True),
        "tenant": admission.tenant,
        "backend": backend,
        "terms": TenantTerms(
            allowed_tools=frozenset(admission.allowed_tools) if admission.allowed_tools is not None else None,
            over_quota=admission.over_quota,
            retry_after=admission.retry_after,
        ),
    }


def http_context_factory(config: ServerConfig) -> Callable[[ServerRequestContext[Any]], CallContext]:
    """Who is calling over HTTP, from the request's headers (never from process memory)."""

    def make_context(ctx: ServerRequestContext[Any]) -> CallContext:
        request = ctx.request
        headers = request.headers if request is not None else Headers()
        state = request.scope.get("state", {}) if request is not None else {}
        identity = state.get(IDENTITY)
        if identity is None:  # not through McpEndpoint (cannot happen in production)
            identity = Identity(UNKNOWN, headers.get("user-agent"))
        fields: dict[str, Any] = {"keys": key_sources(headers)}
        admission = state.get(ADMISSION)
        if admission is not None:  # signed in: the token is never a key, and never leaves this server
            fields = tenant_context(admission)
        backend_header = headers.get(BACKEND_HEADER)
        if backend_header:
            fields["backend"] = Backend.parse(backend_header, source=BACKEND_HEADER)
        return CallContext(
            config=config,
            transport="http",
            client_name=identity.client_name,
            user_agent=identity.user_agent,
            apps_declared=identity.apps_declared,
            **fields,
        )

    return make_context


def _jsonrpc_error(status: int, code: int, message: str, headers: Sequence[tuple[str, str]] = ()) -> HttpResponse:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    for name, value in headers:
        response[name] = value
    return response


def misdirected() -> HttpResponse:
    """421: the `Host` is not one of ours (the MCP answer to a DNS-rebinding attempt)."""
    return _jsonrpc_error(421, -32600, "Host not allowed")


class TransportRunner:
    """The SDK's session manager, running on the current event loop.

    The stateless transport spawns each request's server task into the manager's task group,
    which must be running. One manager runs per event loop: under uvicorn that is one per worker
    process, started by the ASGI lifespan (`start`) or by the first request; under `runserver`
    or Django's test client each request or test has a loop of its own, and its manager ends with
    it. A stateless manager holds no request state, so this is no state carried between requests.
    """

    def __init__(self, factory: Callable[[], StreamableHTTPSessionManager]) -> None:
        self._factory = factory
        self._running: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Running] = weakref.WeakKeyDictionary()

    async def manager(self) -> StreamableHTTPSessionManager:
        """This loop's running manager, started now if it is not yet."""
        return (await self.running()).manager

    async def running(self) -> _Running:
        loop = asyncio.get_running_loop()
        running = self._running.get(loop)
        if running is None or running.task.done():
            running = self._running[loop] = _Running.start(self._factory())
        if not running.started.is_set():
            await running.started.wait()
        return running

    async def start(self) -> None:
        await self.manager()

    async def stop(self) -> None:
        """Stop this loop's manager (ASGI lifespan shutdown); in-flight calls are cancelled."""
        running = self._running.pop(asyncio.get_running_loop(), None)
        if running is not None:
            running.stop.set()
            await running.task


@dataclass(slots=True)
class _Running:
    manager: StreamableHTTPSessionManager
    task: asyncio.Task[None]
    started: asyncio.Event
    stop: asyncio.Event
    lifespan_state: Any = None
    """The server's lifespan state for requests answered without the manager (protocol.exchange)."""

    @classmethod
    def start(cls, manager: StreamableHTTPSessionManager) -> _Running:
        started, stop = asyncio.Event(), asyncio.Event()
        holder: list[_Running] = []

        async def run() -> None:
            # The manager enters the server's lifespan for its own requests; the exchange's
            # requests get theirs here, for as long as the manager runs.
            async with manager.run(), manager.app.lifespan(manager.app) as state:
                holder[0].lifespan_state = state
                started.set()
                await stop.wait()

        running = cls(manager, asyncio.get_running_loop().create_task(run(), name="mcp-session-manager"), started, stop)
        holder.append(running)
        return running


class McpEndpoint:
    """`/mcp`: the transport-safety guard, then the SDK's stateless Streamable HTTP transport.

    `handle` is the Django async view's body (`mcp_view`). JSON responses only (`json_response=True`): the transport
    answers each POST with one complete body, which becomes one `HttpResponse`.
    """

    def __init__(
        self, server: Server[Any], settings: HttpSettings, config: ServerConfig, dispatcher: Dispatcher | None = None
    ) -> None:
        self.server = server
        self.dispatcher = dispatcher
        """The dispatcher behind `server`, whose readiness probes `/readyz` asks."""
        self.settings = settings
        self.config = config
        self.transports = TransportRunner(
            lambda: StreamableHTTPSessionManager(
                app=server,
                stateless=True,
                json_response=True,
                # Host is Django's rule (McpHostMiddleware answers it), Origin the guard's: the
                # SDK's copy of both is off.
                security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
                max_request_body_size=settings.max_body_bytes,
            )
        )

    async def handle(self, request: HttpRequest) -> HttpResponse:
        headers = request.headers
        origin = headers.get("origin")
        cors: list[tuple[str, str]] = []
        if origin is not None:
            if not origin_allowed(origin, self.settings.allowed_origins):
                return _jsonrpc_error(403, -32600, "Origin not allowed")
            cors = [
                ("Access-Control-Allow-Origin", origin),
                ("Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS),
                ("Vary", "Origin"),
            ]
        method = request.method
        if method == "OPTIONS":
            response = HttpResponse(status=204)
            for name, value in [
                *cors,
                ("Access-Control-Allow-Methods", "POST, OPTIONS"),
                ("Access-Control-Allow-Headers", CORS_ALLOW_HEADERS),
                ("Access-Control-Max-Age", "86400"),
                ("Allow", "POST, OPTIONS"),
            ]:
                response[name] = value
            return response
        if method != "POST":
            refusal = f"{method} is not supported: this server is stateless, POST only"
            return _jsonrpc_error(405, -32600, refusal, [*cors, ("Allow", "POST")])
        if media_types(headers.get("content-type", ""))[0] != "application/json":
            return _jsonrpc_error(415, -32600, "Content-Type must be application/json", cors)
        accept = headers.get("accept", "")
        if accept and not any(t in JSON_ACCEPTED for t in media_types(accept)):
            return _jsonrpc_error(406, -32600, "Accept must include application/json", cors)
        backend = headers.get(BACKEND_HEADER)
        if backend is not None:
            try:
                Backend.parse(backend, source=f"{BACKEND_HEADER} header")
            except ValueError as exc:
                return _jsonrpc_error(400, -32602, str(exc), cors)
        body = self._read_body(request)
        if body is None:
            limit = self.settings.max_body_bytes
            return _jsonrpc_error(413, -32600, f"Request body over {limit} bytes", cors)
        parsed = parse_body(body)
        if parsed.message is None:
            assert parsed.error is not None  # one or the other
            return _jsonrpc_error(400, parsed.error.code, parsed.error.message, cors)
        tracer = tracing.tracer()
        if tracer is None or not isinstance(parsed.message.get("method"), str):
            return await self._answer(request, parsed.message, body, cors)
        span = self._span(tracer, request, parsed.message)
        with trace.use_span(span, end_on_exit=True, record_exception=False, set_status_on_exception=False):
            response = await self._answer(request, parsed.message, body, cors, span)
            if response.status_code >= 400:  # refused before the SDK answered (sign-in, its transport)
                span.set_attribute("error.type", str(response.status_code))
                span.set_status(StatusCode.ERROR)
            return response

    async def _answer(
        self,
        request: HttpRequest,
        message: Message,
        body: bytes,
        cors: list[tuple[str, str]],
        span: trace.Span | None = None,
    ) -> HttpResponse:
        """One JSON-RPC message that passed the guard: who sends it, sign-in, then the SDK."""
        headers = request.headers
        identity = identify(headers, message, self.settings.session_ids)
        admission = None
        if self.settings.sign_in is not None:
            try:
                admission = await self.settings.sign_in.authenticate(headers, identity.tool_calls)
            except AuthFailure as failure:
                return self._refused(failure, cors)
        metadata = upstream_metadata(identity, auth_method(headers, self.config, admission))
        extra = [*cors, ("TomTom-Upstream-Metadata", metadata)]
        session = identity.session
        if identity.mint_session:
            session_id = self.settings.session_ids.mint(identity.client_name, identity.apps_declared is True)
            extra.append(("Mcp-Session-Id", session_id))
            session = session_label(session_id)
        if span is not None:
            agent = identity.user_agent
            span.set_attributes(
                tracing.attributes(
                    mcp__session__id=session,
                    user_agent__original=None if agent is None else clip(agent, USER_AGENT_LENGTH),
                    tomtom_mcp__client__name=clip(identity.client_name, CLIENT_NAME_LENGTH),
                    tomtom_mcp__tenant=None if admission is None else admission.tenant,
                )
            )
        return await self._forward(request, identity, message, body, extra, admission, span)

    def _span(self, tracer: trace.Tracer, request: HttpRequest, message: Message) -> trace.Span:
        """The request's MCP server span (OpenTelemetry's MCP conventions), the child of the
        caller's span when its `params._meta` or HTTP headers carry one."""
        params = message.get("params")
        name, attributes = request_span(message["method"], params, message.get("id"), self._known)
        version = request.headers.get("mcp-protocol-version")
        if version is None and message["method"] == "initialize" and isinstance(params, Mapping):
            version = params.get("protocolVersion") if isinstance(params.get("protocolVersion"), str) else None
        scope = getattr(request, "scope", None) or {}
        client = scope.get("client") or (None, None)
        attributes.update(
            tracing.attributes(
                mcp__protocol__version=None if version is None else clip(version, SHORT_TEXT_LENGTH),
                network__transport="tcp",
                network__protocol__name="http",
                network__protocol__version=scope.get("http_version"),
                client__address=client[0],
                client__port=client[1],
            )
        )
        meta = params.get("_meta") if isinstance(params, Mapping) else None
        parent = remote_parent(meta, request.headers)
        return tracer.start_span(name, context=parent, kind=SpanKind.SERVER, attributes=attributes)

    def _known(self, name: str) -> bool:
        return self.dispatcher is not None and self.dispatcher.get(name) is not None

    def _refused(self, failure: AuthFailure, cors: list[tuple[str, str]]) -> HttpResponse:
        """A sign-in refusal: the OAuth error body and, for 401/403, the RFC 6750 challenge."""
        assert self.settings.sign_in is not None
        body: dict[str, str] = {"error_description": failure.description}
        if failure.error:
            body = {"error": failure.error, **body}
        response = HttpResponse(json.dumps(body), status=failure.status, content_type="application/json")
        if failure.status in (401, 403):
            response["WWW-Authenticate"] = self.settings.sign_in.resource_server.challenge(failure)
        if failure.status == 503:
            response["Retry-After"] = str(failure.retry_after or 5)
        response["Cache-Control"] = "no-store"
        for name, value in cors:
            response[name] = value
        return response

    def _read_body(self, request: HttpRequest) -> bytes | None:
        """The body, or None when it is over the limit (declared or actual)."""
        limit = self.settings.max_body_bytes
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return None
        body = request.read(limit + 1)
        return None if len(body) > limit else body

    async def _forward(
        self,
        request: HttpRequest,
        identity: Identity,
        decoded: Message,
        body: bytes,
        extra: list[tuple[str, str]],
        admission: Admission | None = None,
        span: trace.Span | None = None,
    ) -> HttpResponse:
        scope = _asgi_scope(request)
        # The SDK's transport checks the media types again, more strictly (case-sensitive, both
        # types in Accept): the guard decided, so the request says so in the SDK's spelling and
        # those copies never refuse (docs/adr/0025-an-edge-without-patches.md).
        raw = [(k, v) for k, v in scope["headers"] if k not in _REPLACED]
        raw += [
            (b"accept", b"application/json, text/event-stream"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        state = {**scope.get("state", {}), IDENTITY: identity, ADMISSION: admission, TRACE_SPAN: span}
        forwarded = {**scope, "headers": raw, "state": state}
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return {"type": "http.disconnect"}
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        status = 500
        sdk_headers: list[tuple[bytes, bytes]] = []
        chunks: list[bytes] = []

        async def collect(event: MutableMapping[str, Any]) -> None:  # the SDK's ASGI send
            nonlocal status, sdk_headers
            if event["type"] == "http.response.start":
                status, sdk_headers = event["status"], event.get("headers", [])
            elif event["type"] == "http.response.body":
                chunks.append(event.get("body", b""))

        version = request.headers.get("mcp-protocol-version")
        single = exchange.single_request(decoded, version)
        if single is not None:  # one stateless JSON-RPC request: the SDK's kernel, without a session
            running = await self.transports.running()
            content = await exchange.answer(
                self.server, Request(forwarded, replay), single, version, running.lifespan_state
            )
            response = HttpResponse(content, content_type="application/json")
            for name, value in extra:
                response[name] = value
            return response
        manager = await self.transports.manager()
        await manager.handle_request(forwarded, replay, collect)
        response = HttpResponse(b"".join(chunks), status=status, content_type=None)
        for raw_name, raw_value in sdk_headers:
            response[raw_name.decode("latin-1")] = raw_value.decode("latin-1")
        for header, text in extra:
            response[header] = text
        return response


def _asgi_scope(request: HttpRequest) -> Message:
    """The request's ASGI scope; under WSGI (`runserver`), one built from its environ."""
    scope = getattr(request, "scope", None)
    if scope is not None:
        return scope
    meta = request.META
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers.items()]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": meta.get("QUERY_STRING", "").encode("latin-1"),
        "headers": headers,
        "client": (meta.get("REMOTE_ADDR", ""), int(meta.get("REMOTE_PORT") or 0)),
        "server": (meta.get("SERVER_NAME", ""), int(meta.get("SERVER_PORT") or 0)),
    }


def build_http_app(dispatcher: Dispatcher, config: ServerConfig, settings: HttpSettings) -> McpEndpoint:
    return McpEndpoint(build_server(dispatcher, http_context_factory(config)), settings, config, dispatcher)


@functools.cache
def mcp_endpoint() -> McpEndpoint:
    """The process's `/mcp` endpoint, configured from Django settings (the URLconf routes to it)."""
    from django.conf import settings

    from protocol.config import server_config
    from protocol.service import build_dispatcher

    return build_http_app(
        build_dispatcher(),
        server_config(),
        HttpSettings(
            allowed_origins=settings.MCP_ALLOWED_ORIGINS,
            max_body_bytes=settings.MCP_MAX_BODY_BYTES,
            session_ids=SessionIds(settings.MCP_SESSION_SECRETS),
            path=settings.MCP_PATH,
            sign_in=configured_sign_in(),
        ),
    )


def configured_sign_in() -> SignIn | None:
    """The sign-in `MCP_AUTH` asks for (None for API keys only), from Django settings."""
    from django.conf import settings

    from protocol.oauth import OAuthSettings

    if "oauth" not in settings.MCP_AUTH:
        return None
    server = ResourceServer(
        OAuthSettings(
            issuer=settings.OAUTH_ISSUER or "",
            jwks_url=settings.OAUTH_JWKS_URL or "",
            resource=settings.OAUTH_RESOURCE or "",
            authorization_servers=settings.OAUTH_AUTHORIZATION_SERVERS,
            required_scopes=settings.OAUTH_REQUIRED_SCOPES,
            tenant_claim=settings.OAUTH_TENANT_CLAIM,
            algorithms=settings.OAUTH_ALGORITHMS,
            leeway_seconds=settings.OAUTH_LEEWAY_SECONDS,
            jwks_cache_seconds=settings.OAUTH_JWKS_CACHE_SECONDS,
            jwks_max_stale_seconds=settings.OAUTH_JWKS_MAX_STALE_SECONDS,
        )
    )
    return SignIn(server, api_keys="api-key" in settings.MCP_AUTH)


def protected_resource_view(request: HttpRequest) -> HttpResponse:
    """RFC 9728 metadata: this resource and its authorization servers; 404 when sign-in is off."""
    sign_in = mcp_endpoint().settings.sign_in
    if sign_in is None:
        return HttpResponse(status=404)
    if request.method == "OPTIONS":
        response = HttpResponse(status=204)
        response["Access-Control-Allow-Methods"] = "GET, OPTIONS"
        response["Access-Control-Allow-Headers"] = "Mcp-Protocol-Version"
    elif request.method in ("GET", "HEAD"):
        response = HttpResponse(sign_in.resource_server.metadata_json(), content_type="application/json")
        response["Cache-Control"] = "public, max-age=3600"
    else:
        response = HttpResponse(status=405)
        response["Allow"] = "GET, HEAD, OPTIONS"
    response["Access-Control-Allow-Origin"] = "*"  # public metadata: browser-based hosts read it too
    return response


def protected_resource_routes(path: str) -> list[str]:
    """URLconf regexes for the metadata: the bare well-known path and the `MCP_PATH`-suffixed one."""
    well_known = METADATA_PATH.strip("/")
    return [rf"^{re.escape(well_known)}/?$", rf"^{re.escape(well_known + '/' + path.strip('/'))}/?$"]


@csrf_exempt  # no cookies are read: Origin is checked instead
async def mcp_view(request: HttpRequest) -> HttpResponse:
    """The URLconf's view for `MCP_PATH`; the endpoint is built on first use (or at ASGI startup)."""
    return await mcp_endpoint().handle(request)


def mcp_route(path: str) -> str:
    """The URLconf regex for `MCP_PATH`: exactly that path, with or without a trailing slash."""
    return rf"^{re.escape(path.strip('/'))}/?$"
