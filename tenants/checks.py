"""System checks of the sign-in settings and the tenants' table (ids documented in
docs/oauth.md; never reused).

The tenants' table is judged with `manage.py check --database default` (tag `database`):
tenants.W002, an enabled tenant without an active TomTom key (every call it makes is refused
`unauthorized`); tenants.W003, an allow-list naming a tool the server does not offer (a typo, or
a tool retired since)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from tenants.tool_names import allow_list_problems, known_tool_names

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
    required = ("OAUTH_RESOURCE",) if settings.OAUTH_BUILTIN else ("OAUTH_ISSUER", "OAUTH_JWKS_URL", "OAUTH_RESOURCE")
    for name in required:  # the built-in authorization server (authserver.checks) needs no external issuer
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


@checks.register(checks.Tags.database)
def check_tenants(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The tenants' table: tenants.W002 and tenants.W003 (skipped before `migrate`)."""
    if not databases or DEFAULT_DB_ALIAS not in databases:
        return []
    from tenants.models import Tenant

    if Tenant._meta.db_table not in connections[DEFAULT_DB_ALIAS].introspection.table_names():
        return []
    issues: list[checks.CheckMessage] = []
    keyless = Tenant.objects.filter(enabled=True).exclude(keys__active=True).order_by("name")
    for tenant in keyless:
        issues.append(
            checks.Warning(
                f"Tenant {tenant.name} is enabled but has no active TomTom key: every tool call it makes is refused "
                "`unauthorized`.",
                hint="Add its key in the admin (Tenants -> the tenant -> TomTom keys), or untick `enabled`.",
                obj=tenant.name,
                id="tenants.W002",
            )
        )
    try:
        known = known_tool_names()
    except DatabaseError:  # the tool tables are not migrated yet
        known = None
    for tenant in Tenant.objects.order_by("name"):
        problems = allow_list_problems(tenant.allowed_tools or [], known) if known is not None else []
        if problems:
            issues.append(
                checks.Warning(
                    f"Tenant {tenant.name}'s allow-list names tools the server does not offer: {' '.join(problems)}",
                    hint="Correct the allow-list in the admin: the tenant cannot call these names.",
                    obj=tenant.name,
                    id="tenants.W003",
                )
            )
    return issues
