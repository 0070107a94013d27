"""The process's `/mcp` endpoint: built once, from Django settings.

Building it builds the dispatcher, the MCP server and (with sign-in on) the resource server,
so it waits for the first request, or for the ASGI lifespan's start-up (tomtom_mcp/asgi.py).
"""

from __future__ import annotations

import functools

from authserver.tokens import SigningKey
from protocol.http.context import http_context_factory
from protocol.http.endpoint import HttpSettings, McpEndpoint
from protocol.identity import SessionIds
from protocol.oauth import ResourceServer, SignIn
from protocol.server import build_server
from tools.context import ServerConfig
from tools.dispatch import Dispatcher


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
    authorization_servers = list(settings.OAUTH_AUTHORIZATION_SERVERS)
    builtin_keys: tuple[SigningKey, ...] = ()
    builtin_issuer = ""
    if settings.OAUTH_BUILTIN:  # this server is the authorization server (authserver/, ADR on issue #46)
        from authserver import selectors
        from authserver import server as authorization_server

        builtin_keys = tuple(selectors.keys())
        builtin_issuer = authorization_server.issuer()
        authorization_servers = [builtin_issuer]
    server = ResourceServer(
        OAuthSettings(
            issuer=settings.OAUTH_ISSUER or "",
            jwks_url=settings.OAUTH_JWKS_URL or "",
            resource=settings.OAUTH_RESOURCE or "",
            authorization_servers=authorization_servers,
            required_scopes=settings.OAUTH_REQUIRED_SCOPES,
            tenant_claim=settings.OAUTH_TENANT_CLAIM,
            algorithms=settings.OAUTH_ALGORITHMS,
            leeway_seconds=settings.OAUTH_LEEWAY_SECONDS,
            jwks_cache_seconds=settings.OAUTH_JWKS_CACHE_SECONDS,
            jwks_max_stale_seconds=settings.OAUTH_JWKS_MAX_STALE_SECONDS,
            builtin_keys=builtin_keys,
            builtin_issuer=builtin_issuer,
            builtin_access_token_seconds=settings.OAUTH_BUILTIN_ACCESS_TOKEN_SECONDS,
            builtin_revocation_seconds=settings.OAUTH_BUILTIN_REVOCATION_SECONDS,
        )
    )
    return SignIn(server, api_keys="api-key" in settings.MCP_AUTH)
