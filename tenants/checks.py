"""System checks of the sign-in settings (ids documented in docs/oauth.md; never reused)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks

ASYMMETRIC = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
MODES = {"api-key", "oauth"}
MAX_KEY_AGE_SECONDS = 7 * 86_400
"""The longest OAUTH_JWKS_CACHE_SECONDS or OAUTH_JWKS_MAX_STALE_SECONDS: a week."""


@checks.register(checks.Tags.security)
def check_sign_in(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    modes = set(settings.MCP_AUTH)
    if not modes or modes - MODES:
        errors.append(
            checks.Error(f"MCP_AUTH must list api-key, oauth or both, not {settings.MCP_AUTH!r}.", id="tenants.E001")
        )
    if "oauth" not in modes:
        return errors
    for name in ("OAUTH_ISSUER", "OAUTH_JWKS_URL", "OAUTH_RESOURCE"):
        if not getattr(settings, name):
            errors.append(checks.Error(f"MCP_AUTH includes oauth but {name} is not set.", id="tenants.E002"))
    weak = [alg for alg in settings.OAUTH_ALGORITHMS if alg not in ASYMMETRIC]
    if weak or not settings.OAUTH_ALGORITHMS:
        errors.append(
            checks.Error(
                f"OAUTH_ALGORITHMS may list only asymmetric algorithms, not {weak or 'nothing'}.",
                hint="e.g. RS256,ES256,PS256,EdDSA",
                id="tenants.E003",
            )
        )
    for name, least in (("OAUTH_JWKS_CACHE_SECONDS", 1), ("OAUTH_JWKS_MAX_STALE_SECONDS", 0)):
        if not least <= getattr(settings, name) <= MAX_KEY_AGE_SECONDS:
            errors.append(
                checks.Error(
                    f"{name} must be from {least} to {MAX_KEY_AGE_SECONDS} seconds (a week), "
                    f"not {getattr(settings, name)}.",
                    hint="the defaults: 300 and 3600 (docs/oauth.md, Signing keys)",
                    id="tenants.E005",
                )
            )
    if settings.OAUTH_RESOURCE:
        path = "/" + urlsplit(settings.OAUTH_RESOURCE).path.strip("/")
        if path != settings.MCP_PATH:
            errors.append(
                checks.Error(
                    f"OAUTH_RESOURCE's path {path!r} is not MCP_PATH {settings.MCP_PATH!r}.",
                    hint="OAUTH_RESOURCE is this endpoint's public URL, e.g. https://mcp.example.com/mcp",
                    id="tenants.E004",
                )
            )
    return errors


@checks.register(checks.Tags.security, deploy=True)
def check_encryption_key(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    if "oauth" in settings.MCP_AUTH and not settings.TENANT_KEY_ENCRYPTION_KEYS:
        return [
            checks.Warning(
                "TENANT_KEY_ENCRYPTION_KEYS is not set: tenants' TomTom keys are encrypted with a key derived "
                "from DJANGO_SECRET_KEY, and rotating that secret would make them unreadable.",
                hint="python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'",
                id="tenants.W001",
            )
        ]
    return []
