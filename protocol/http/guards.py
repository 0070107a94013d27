"""The rules the `/mcp` guard applies: which origins may call, which media types are JSON, and
the CORS headers it answers with.

The guard itself, the order of its refusals and their statuses, is `McpEndpoint.handle`
(protocol/http/endpoint.py); its rules are kept apart so each reads alone.
"""

from __future__ import annotations

from collections.abc import Sequence

LOOPBACK_ORIGINS = ("http://127.0.0.1", "http://localhost", "http://[::1]", "https://127.0.0.1", "https://localhost")
CORS_ALLOW_HEADERS = (
    "Content-Type, Accept, Authorization, tomtom-api-key, tomtom-maps-backend, Mcp-Protocol-Version, "
    "Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID"
)
CORS_EXPOSE_HEADERS = "Mcp-Session-Id, TomTom-Upstream-Metadata, WWW-Authenticate"
JSON_ACCEPTED = ("application/json", "application/*", "*/*")
"""`Accept` media ranges that let us answer JSON."""


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
