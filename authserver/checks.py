"""System checks of the built-in authorization server's settings (ids `authserver.E0xx`,
documented in docs/oauth.md next to the tenants' ones; never reused)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks

from authserver.redirects import LOOPBACK_HOSTS
from authserver.server import origin
from authserver.services import SCOPE

LIFETIMES = {
    # setting: (least, most) seconds
    "OAUTH_BUILTIN_ACCESS_TOKEN_SECONDS": (60, 86_400),
    "OAUTH_BUILTIN_REFRESH_TOKEN_SECONDS": (3_600, 365 * 86_400),
    "OAUTH_BUILTIN_CODE_SECONDS": (10, 600),
    "OAUTH_BUILTIN_REVOCATION_SECONDS": (1, 3_600),
}


@checks.register(checks.Tags.security)
def check_builtin(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    if not settings.OAUTH_BUILTIN:
        return []
    errors: list[checks.CheckMessage] = []
    resource = settings.OAUTH_RESOURCE or ""
    if not resource:
        errors.append(
            checks.Error(
                "OAUTH_BUILTIN is on but OAUTH_RESOURCE is not set: the issuer is its origin.",
                hint="OAUTH_RESOURCE is this endpoint's public URL, e.g. https://mcp.example.com/mcp",
                id="authserver.E001",
            )
        )
    elif settings.OAUTH_ISSUER and settings.OAUTH_ISSUER.rstrip("/") != origin(resource):
        errors.append(
            checks.Error(
                f"OAUTH_BUILTIN is on, so this server is the issuer ({origin(resource)}); "
                f"OAUTH_ISSUER names another ({settings.OAUTH_ISSUER}).",
                hint="unset OAUTH_ISSUER and OAUTH_JWKS_URL: one authorization server at a time",
                id="authserver.E002",
            )
        )
    if "oauth" not in settings.MCP_AUTH:
        errors.append(
            checks.Error(
                "OAUTH_BUILTIN is on but MCP_AUTH does not include oauth: no token it issues would be accepted.",
                hint="MCP_AUTH=oauth (or api-key,oauth)",
                id="authserver.E003",
            )
        )
    if resource:
        parts = urlsplit(resource)
        if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS):
            errors.append(
                checks.Error(
                    f"OAUTH_RESOURCE {resource!r} is not https: sign-in pages and tokens would travel in the clear.",
                    hint="serve it behind TLS (docs/oauth.md); http is allowed on loopback hosts only",
                    id="authserver.E004",
                )
            )
    for name, (least, most) in LIFETIMES.items():
        value = getattr(settings, name)
        if not least <= value <= most:
            errors.append(
                checks.Error(f"{name} must be from {least} to {most} seconds, not {value}.", id="authserver.E005")
            )
    other = [scope for scope in settings.OAUTH_REQUIRED_SCOPES if scope != SCOPE]
    if other:
        errors.append(
            checks.Error(
                f"OAUTH_REQUIRED_SCOPES names {', '.join(other)}, but the built-in server's tokens carry only {SCOPE}.",
                hint=f"OAUTH_REQUIRED_SCOPES={SCOPE}, or leave it empty",
                id="authserver.E006",
            )
        )
    return errors
