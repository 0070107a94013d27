"""The authorization server's configuration and RFC 8414 metadata, read from Django settings.

The issuer is the origin of OAUTH_RESOURCE (`https://mcp.example.com` for
`https://mcp.example.com/mcp`); every endpoint hangs off it. The metadata document is checked
with Authlib's RFC 8414 model (`AuthorizationServerMetadata.validate`) when it is built, so a
configuration Authlib finds wrong fails loudly at the first request, not at a client.

Authlib also supplies the PKCE S256 transform (RFC 7636) the token endpoint compares with. The
grant flow itself is in authserver.services: thin, explicit and on our own tables
(docs/adr/0050-built-in-authorization-server.md: Authlib's pieces, not its framework).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from django.conf import settings

from authserver.services import SCOPE

METADATA_PATH = "/.well-known/oauth-authorization-server"
AUTHORIZE_PATH = "/oauth/authorize"
TOKEN_PATH = "/oauth/token"
REGISTER_PATH = "/oauth/register"
REVOKE_PATH = "/oauth/revoke"
LOGIN_PATH = "/oauth/login"
LOGOUT_PATH = "/oauth/logout"


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def issuer() -> str:
    """This server's issuer identifier: the origin of OAUTH_RESOURCE."""
    return origin(settings.OAUTH_RESOURCE or "")


def resource() -> str:
    return settings.OAUTH_RESOURCE or ""


def audiences() -> list[str]:
    """The `aud` values a built-in token may carry: the resource with and without its slash."""
    return [resource().rstrip("/"), resource().rstrip("/") + "/"]


def is_our_resource(value: str) -> bool:
    return value.rstrip("/") == resource().rstrip("/")


def metadata() -> dict[str, Any]:
    """RFC 8414 authorization server metadata (with the MCP 2025-11-25 CIMD flag)."""
    base = issuer()
    document: dict[str, Any] = {
        "issuer": base,
        "authorization_endpoint": base + AUTHORIZE_PATH,
        "token_endpoint": base + TOKEN_PATH,
        "registration_endpoint": base + REGISTER_PATH,
        "revocation_endpoint": base + REVOKE_PATH,
        "scopes_supported": [SCOPE],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True,
    }
    if base.startswith("https://"):  # RFC 8414 §2: an https issuer (http only on loopback, for development)
        AuthorizationServerMetadata(document).validate()
    return document
