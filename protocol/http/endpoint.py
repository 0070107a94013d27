"""`/mcp` over stateless Streamable HTTP: the endpoint behind the Django async view.

The URLconf routes `MCP_PATH` here (`mcp_view`, protocol/http/views.py;
docs/adr/0025-an-edge-without-patches.md), so Django's middleware applies; the first of them
answers a `Host` outside `ALLOWED_HOSTS` with 421 (the DNS-rebinding answer, `misdirected`;
tomtom_mcp/middleware.py). Before any JSON-RPC is read, one guard answers every other
transport-safety question with a plain HTTP status, each in this one place (its rules:
protocol/http/guards.py):

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

import dataclasses
import functools
import json
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ErrorData
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode
from starlette.requests import Request

from core.events import CLIENT_NAME_LENGTH, SHORT_TEXT_LENGTH, USER_AGENT_LENGTH, clip
from protocol import exchange
from protocol.body import parse_body
from protocol.evidence import refused_outside
from protocol.http.context import ADMISSION, IDENTITY, auth_method, key_sources
from protocol.http.guards import CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, JSON_ACCEPTED, media_types, origin_allowed
from protocol.http.responses import jsonrpc_error
from protocol.http.transport import TransportRunner
from protocol.identity import Identity, SessionIds, identify, session_label, upstream_metadata
from protocol.oauth import AuthFailure, SignIn
from protocol.spans import TRACE_SPAN, remote_parent, request_span
from tenants.store import Admission
from tools import tracing
from tools.context import ServerConfig
from tools.dispatch import Dispatcher
from tools.tomtom.backends import BACKEND_HEADER, Backend

Message = dict[str, Any]

_REPLACED = (b"accept", b"content-type", b"content-length")


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """What the endpoint is configured with (from Django settings: protocol/http/app.py)."""

    allowed_origins: Sequence[str]
    max_body_bytes: int
    session_ids: SessionIds
    path: str = "/mcp"
    sign_in: SignIn | None = None
    """None: API keys only (`MCP_AUTH=api-key`), no token is looked at."""


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
                return jsonrpc_error(403, -32600, "Origin not allowed")
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
            return jsonrpc_error(405, -32600, refusal, [*cors, ("Allow", "POST")])
        if media_types(headers.get("content-type", ""))[0] != "application/json":
            return jsonrpc_error(415, -32600, "Content-Type must be application/json", cors)
        accept = headers.get("accept", "")
        if accept and not any(t in JSON_ACCEPTED for t in media_types(accept)):
            return jsonrpc_error(406, -32600, "Accept must include application/json", cors)
        backend = headers.get(BACKEND_HEADER)
        if backend is not None:
            try:
                Backend.parse(backend, source=f"{BACKEND_HEADER} header")
            except ValueError as exc:
                return jsonrpc_error(400, -32602, str(exc), cors)
        body = self._read_body(request)
        if body is None:
            limit = self.settings.max_body_bytes
            return jsonrpc_error(413, -32600, f"Request body over {limit} bytes", cors)
        parsed = parse_body(body)
        if parsed.message is None:
            assert parsed.error is not None  # one or the other
            return jsonrpc_error(400, parsed.error.code, parsed.error.message, cors)
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
            # The session's key from its first request on (its `Session started` line included),
            # the one every later request carrying the id gets from `identify`.
            session = session_label(session_id)
            identity = dataclasses.replace(identity, session=session)
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
            refused = functools.partial(_refused_outside, identity, admission, request.headers, version)
            content = await exchange.answer(
                self.server, Request(forwarded, replay), single, version, running.lifespan_state, refused
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


def _refused_outside(
    identity: Identity,
    admission: Admission | None,
    headers: Mapping[str, str],
    version: str | None,
    method: str,
    error: ErrorData,
) -> None:
    """`MCP request refused` for a single-request exchange that failed outside the SDK's
    middleware (protocol/evidence.py), named by what the guard found."""
    keys = key_sources(headers)
    refused_outside(
        method,
        error,
        client=identity.client_name,
        transport="http",
        protocol_version=version,
        tenant=None if admission is None else admission.tenant,
        session=identity.session,
        secrets=[key.strip() for key in (keys.header, keys.bearer) if key and key.strip()],
    )


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
