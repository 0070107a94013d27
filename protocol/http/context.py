"""Who is calling over HTTP: the `CallContext` of a request, from its headers and what the guard found.

The guard (protocol/http/endpoint.py) leaves the caller's `Identity` and, signed in, its
tenant's `Admission` in the ASGI scope's `state`; the SDK hands the handlers that scope, and
`http_context_factory` reads it there, never from process memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.datastructures import Headers

from protocol.identity import UNKNOWN, Identity
from tenants.store import Admission
from tools.context import CallContext, ServerConfig, TenantTerms, key_auth_method
from tools.tomtom.backends import BACKEND_HEADER, Backend
from tools.tomtom.credentials import KeySources, bearer_token

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


def protocol_version(headers: Mapping[str, str], negotiated: str) -> str | None:
    """The protocol revision of an HTTP request: its `MCP-Protocol-Version` header, else the
    2026-07-28 revision its own envelope named (`negotiated`, the SDK's); None when neither says
    (the SDK's default for a handshake-era request without the header is a guess)."""
    sent = headers.get("mcp-protocol-version")
    if sent is not None:
        return sent
    return negotiated if negotiated in MODERN_PROTOCOL_VERSIONS else None


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
            session=identity.session,
            protocol_version=protocol_version(headers, ctx.protocol_version),
            **fields,
        )

    return make_context
