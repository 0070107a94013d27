"""Redirect URIs: which may be registered, and when a requested one matches a registered one.

A redirect URI is https, or http on a loopback host for desktop clients (RFC 8252 §7.3, §8.3:
127.0.0.1, [::1] or localhost), absolute, without a fragment (RFC 6749 §3.1.2) and without
user info. Matching is exact string comparison (OAuth 2.1 §4.1.1.3), except that for a loopback
http URI the port may differ (RFC 8252 §7.3: a native app picks a free port at run time).
"""

from __future__ import annotations

from urllib.parse import urlsplit

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
URI_LENGTH = 2048


def redirect_uri_problem(uri: object) -> str | None:
    """Why `uri` may not be registered as a redirect URI, or None when it may."""
    if not isinstance(uri, str) or not uri or len(uri) > URI_LENGTH:
        return f"a redirect URI is a string of 1 to {URI_LENGTH} characters"
    if any(ch.isspace() or ord(ch) < 0x20 for ch in uri):
        return "a redirect URI has no spaces or control characters"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        return "a redirect URI must be a valid absolute URL"
    if parts.fragment or "#" in uri:
        return "a redirect URI has no fragment"
    if not parts.hostname or "@" in parts.netloc:
        return "a redirect URI names a host and no user info"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return None
    return "a redirect URI is https, or http on a loopback host (127.0.0.1, [::1], localhost)"


def redirect_matches(registered: str, requested: str) -> bool:
    """Whether `requested` is `registered` exactly, or differs only in its port when both are
    loopback http URIs (RFC 8252 §7.3)."""
    if requested == registered:
        return True
    try:
        a, b = urlsplit(registered), urlsplit(requested)
        a.port, b.port  # noqa: B018
    except ValueError:
        return False
    return (
        a.scheme == b.scheme == "http"
        and a.hostname in LOOPBACK_HOSTS
        and a.hostname == b.hostname
        and a.path == b.path
        and a.query == b.query
        and not a.fragment
        and not b.fragment
        and "@" not in b.netloc
    )


def registered_redirect(registered: list[str], requested: str | None) -> str | None:
    """The redirect URI to use: `requested` when it matches one registered (None when not); the
    only registered one when none is requested."""
    if requested is None:
        return registered[0] if len(registered) == 1 else None
    return requested if any(redirect_matches(uri, requested) for uri in registered) else None
