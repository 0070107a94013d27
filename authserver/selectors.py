"""Reads of the authorization server's tables (no writes here; authserver.services writes).

`RevokedGrants` is the hot path's view of revocation: the ids of grants revoked within the last
access-token lifetime (older revoked grants have no live access token left), re-read from the
database at most every OAUTH_BUILTIN_REVOCATION_SECONDS on a thread of its own, so verifying a
token costs a set lookup and never waits on the database except for that one read.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import jwt
from django.conf import settings
from django.db import DatabaseError, connections
from django.utils import timezone

from authserver import tokens
from authserver.errors import OAuthError
from authserver.models import CLIENT_ID_LENGTH, Grant, OAuthClient
from tenants.models import Tenant, TenantMember

_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="authserver-revoked")
"""One thread reads the revoked grants for every `RevokedGrants` of the process."""


def tenant_of(user: Any) -> Tenant | None:
    """The tenant a person acts as (TenantMember), or None."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    member = TenantMember.objects.select_related("tenant").filter(user_id=user.pk).first()
    return member.tenant if member is not None else None


def client(client_id: object) -> OAuthClient:
    """The client `client_id` names: a registered one, or (an https URL) the one its metadata
    document describes (authserver.cimd); `OAuthError(invalid_client)` otherwise."""
    if not isinstance(client_id, str) or not client_id or len(client_id) > CLIENT_ID_LENGTH or "\x00" in client_id:
        raise OAuthError("invalid_client", "client_id is missing, too long or not text")
    if client_id.startswith("https://"):
        from authserver import cimd

        found = cimd.resolve_metadata_client(client_id)
    else:
        registered = OAuthClient.objects.filter(client_id=client_id, kind=OAuthClient.REGISTERED).first()
        if registered is None:
            raise OAuthError("invalid_client", "The client is not registered with this server")
        found = registered
    if found.revoked_at is not None:
        raise OAuthError("invalid_client", "The client's registration is revoked")
    return found


def keys() -> list[tokens.SigningKey]:
    return tokens.signing_keys(settings.SECRET_KEY, list(getattr(settings, "SECRET_KEY_FALLBACKS", [])))


def access_token_claims(token: str, *, issuer: str, audiences: list[str]) -> dict[str, Any] | None:
    """The claims of a valid built-in access token (revocation aside), None for any other string."""
    if len(token) > 16 * 1024 or token.count(".") != 2:
        return None
    try:
        header = jwt.get_unverified_header(token)
        return tokens.verify(token, header, keys(), issuer=issuer, audiences=audiences, leeway=0)
    except (tokens.TokenInvalid, jwt.PyJWTError):
        return None


def revoked_grant_ids(within_seconds: int) -> frozenset[str]:
    """Ids of grants revoked in the last `within_seconds`."""
    since = timezone.now() - timedelta(seconds=within_seconds)
    return frozenset(str(pk) for pk in Grant.objects.filter(revoked_at__gte=since).values_list("pk", flat=True))


class RevokedGrants:
    """The grants revoked lately, as every replica sees them within `refresh_seconds`."""

    def __init__(self, refresh_seconds: float, lifetime_seconds: int, leeway_seconds: int = 0) -> None:
        self.refresh_seconds = refresh_seconds
        self.window = lifetime_seconds + leeway_seconds + int(refresh_seconds) + 1
        self._ids: frozenset[str] = frozenset()
        self._read_at: float | None = None
        self._lock = asyncio.Lock()

    def _read(self) -> frozenset[str]:
        try:
            return revoked_grant_ids(self.window)
        finally:
            connections.close_all()  # one read every few seconds: no connection held open between them

    async def contains(self, grant_id: str) -> bool:
        """Whether `grant_id` is revoked. When the set is due, this request waits for the one read
        (on the pool's thread, not the event loop); when that read fails the last set is kept for
        another `refresh_seconds`, and `DatabaseError` is raised only if it was never read."""
        now = time.monotonic()
        if self._read_at is None or now - self._read_at >= self.refresh_seconds:
            async with self._lock:
                if self._read_at is None or time.monotonic() - self._read_at >= self.refresh_seconds:
                    try:
                        self._ids = await asyncio.get_running_loop().run_in_executor(_pool, self._read)
                        self._read_at = time.monotonic()
                    except DatabaseError:
                        if self._read_at is None:
                            raise
                        self._read_at = time.monotonic()  # keep the last set; try again after refresh_seconds
        return grant_id in self._ids
