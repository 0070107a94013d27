"""Deployment checks (`manage.py check --deploy`): a production start with an insecure setting
fails with an error, not Django's warning. Every id is documented in docs/deploy.md.

- `tomtom_mcp.E001`: `DJANGO_DEBUG` is on.
- `tomtom_mcp.E002`: `DJANGO_SECRET_KEY` is unset (the development key is in use) or shorter than 50 characters.
- `tomtom_mcp.E003`: an `MCP_SESSION_SECRETS` entry is the development key or shorter than 32 characters
  (unset, it falls back to `DJANGO_SECRET_KEY`).

And on every `manage.py check`:

- `tomtom_mcp.E004`: `MCP_MIDDLEWARE` (the middleware that serve `MCP_PATH`) names a middleware
  that is not in `MIDDLEWARE`, or names them in another order.
- `tomtom_mcp.E005`: a limit of the TomTom client is outside what can work: a deadline that is
  not above 0 s, a byte limit below 1 KiB, no connection allowed, a negative retry count
  (`TOMTOM_MAX_CONNECTIONS=0` would make every call wait out its deadline).
"""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register

MIN_SECRET_KEY_LENGTH = 50
MIN_SESSION_SECRET_LENGTH = 32


@register(Tags.security, deploy=True)
def check_production_secrets(app_configs: object = None, **kwargs: object) -> list[Error]:
    insecure_key = settings.INSECURE_DEV_KEY
    errors = []
    if settings.DEBUG:
        errors.append(Error("DJANGO_DEBUG is on in production.", hint="Unset DJANGO_DEBUG.", id="tomtom_mcp.E001"))
    secret_key = settings.SECRET_KEY
    if secret_key in (insecure_key,) or len(secret_key) < MIN_SECRET_KEY_LENGTH:
        errors.append(
            Error(
                "DJANGO_SECRET_KEY is the development key or too short.",
                hint=f"Set DJANGO_SECRET_KEY to {MIN_SECRET_KEY_LENGTH}+ random characters: "
                "python -c 'import secrets; print(secrets.token_urlsafe(50))'",
                id="tomtom_mcp.E002",
            )
        )
    weak = [s for s in settings.MCP_SESSION_SECRETS if s == insecure_key or len(s) < MIN_SESSION_SECRET_LENGTH]
    if weak:
        errors.append(
            Error(
                "MCP_SESSION_SECRETS holds the development key or a secret that is too short.",
                hint=f"Set MCP_SESSION_SECRETS (the same on every replica) to {MIN_SESSION_SECRET_LENGTH}+ random "
                "characters, or set a strong DJANGO_SECRET_KEY it falls back to.",
                id="tomtom_mcp.E003",
            )
        )
    return errors


@register()
def check_mcp_middleware(app_configs: object = None, **kwargs: object) -> list[Error]:
    # Imported here: the middleware module loads the MCP SDK, which `django.setup()` (every
    # management command, every ingestion worker) has no other need of.
    from tomtom_mcp.middleware import is_subsequence

    if is_subsequence(settings.MCP_MIDDLEWARE, settings.MIDDLEWARE):
        return []
    return [
        Error(
            "MCP_MIDDLEWARE is not a part of MIDDLEWARE in its order.",
            hint="List in MCP_MIDDLEWARE only names from MIDDLEWARE, in the order MIDDLEWARE has them.",
            id="tomtom_mcp.E004",
        )
    ]


TOMTOM_LIMITS = {
    "TOMTOM_TIMEOUT": (0.001, "seconds above 0"),
    "TOMTOM_CONNECT_TIMEOUT": (0.001, "seconds above 0"),
    "TOMTOM_MAX_BODY_BYTES": (1024, "at least 1024 bytes"),
    "TOMTOM_MAX_DECODED_BYTES": (1024, "at least 1024 bytes"),
    "TOMTOM_MAX_HEADER_BYTES": (1024, "at least 1024 bytes"),
    "TOMTOM_MAX_CONNECTIONS": (1, "at least 1"),
    "TOMTOM_MAX_RETRIES": (0, "0 or more"),
    "TOMTOM_MAX_RETRY_AFTER": (0, "0 or more seconds"),
}
"""Each TomTom client limit and the least value with which calls can still be answered."""


@register()
def check_tomtom_limits(app_configs: object = None, **kwargs: object) -> list[Error]:
    return [
        Error(
            f"{name} is {getattr(settings, name)!r}: it must be {what}.",
            hint=f"Set {name} to {what}, or unset it for its default (README, Configuration).",
            obj=name,
            id="tomtom_mcp.E005",
        )
        for name, (least, what) in TOMTOM_LIMITS.items()
        if not getattr(settings, name) >= least
    ]
