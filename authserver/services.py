"""The one write path of every authorization-server entity (the views and the admin call these).

- `register_client(metadata)`: RFC 7591 registration of a public client, bounded and checked.
- `issue_code(...)`: a person consented: a `Grant` and its one-use authorization code.
- `exchange_code(...)`: the code (with its PKCE verifier) for tokens; a replayed code revokes the grant.
- `refresh(...)`: a refresh token for new tokens (rotation); a reused one revokes the grant.
- `revoke_grant(grant)`, `revoke_client(client)`, `revoke_token(token)`.

Codes and refresh tokens are random (256 bits) and stored only as SHA-256 hashes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc7636 import create_s256_code_challenge
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from authserver import selectors, tokens
from authserver.errors import OAuthError
from authserver.models import NAME_LENGTH, URI_LENGTH, AuthorizationCode, Grant, OAuthClient, RefreshToken
from authserver.redirects import redirect_uri_problem
from core.events import log
from core.operations import OAuthClientRegistered, OAuthGrantIssued, OAuthGrantRevoked, OAuthRefreshReused
from tenants.models import Tenant

SCOPE = "mcp"
MAX_REDIRECT_URIS = 10
MAX_METADATA_KEYS = 32
METADATA_TEXT_LENGTH = 2048
SECRET_METHODS = frozenset({"client_secret_post", "client_secret_basic"})
GRANT_TYPES = ("authorization_code", "refresh_token")
VERIFIER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def digest(secret: str) -> str:
    """The stored form of a code or refresh token (SHA-256, hex)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def _bad_metadata(description: str) -> OAuthError:
    return OAuthError("invalid_client_metadata", description)


def _text(metadata: dict[str, Any], name: str, length: int) -> str:
    value = metadata.get(name, "")
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > length:
        raise _bad_metadata(f"{name} is a string of at most {length} characters")
    if any(ord(ch) < 0x20 or ch == "\x7f" for ch in value):
        raise _bad_metadata(f"{name} has no control characters")
    return value


def clean_registration(metadata: object) -> dict[str, Any]:
    """The registration request's metadata, checked and bounded (RFC 7591 §2, §3.2.2 codes); the
    server's choices filled in (a public client: token_endpoint_auth_method `none`)."""
    if not isinstance(metadata, dict):
        raise _bad_metadata("The registration request is a JSON object")
    if len(metadata) > MAX_METADATA_KEYS:
        raise _bad_metadata(f"The registration request has at most {MAX_METADATA_KEYS} fields")
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not 1 <= len(uris) <= MAX_REDIRECT_URIS:
        raise OAuthError("invalid_redirect_uri", f"redirect_uris is a list of 1 to {MAX_REDIRECT_URIS} URIs")
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem:
            raise OAuthError("invalid_redirect_uri", problem.capitalize())
    method = metadata.get("token_endpoint_auth_method", "none")
    if method is not None and method != "none" and method not in SECRET_METHODS:
        raise _bad_metadata("token_endpoint_auth_method is none: this server registers public clients only")
    grant_types = metadata.get("grant_types", list(GRANT_TYPES))
    if not isinstance(grant_types, list) or not grant_types or any(g not in GRANT_TYPES for g in grant_types):
        raise _bad_metadata("grant_types are authorization_code and refresh_token only")
    response_types = metadata.get("response_types", ["code"])
    if response_types != ["code"]:
        raise _bad_metadata('response_types is ["code"] only')
    scope = metadata.get("scope")
    if scope is not None and (not isinstance(scope, str) or any(s != SCOPE for s in scope.split())):
        raise OAuthError("invalid_client_metadata", f"scope is {SCOPE}")
    name = _text(metadata, "client_name", NAME_LENGTH).strip()
    client_uri = _text(metadata, "client_uri", URI_LENGTH)
    if client_uri and not client_uri.startswith("https://"):
        raise _bad_metadata("client_uri is an https URL")
    for other in ("logo_uri", "tos_uri", "policy_uri", "software_id", "software_version"):
        _text(metadata, other, METADATA_TEXT_LENGTH)
    return {
        "redirect_uris": list(dict.fromkeys(uris)),
        "token_endpoint_auth_method": "none",
        "grant_types": list(dict.fromkeys([*grant_types, "authorization_code"])),
        "response_types": ["code"],
        "client_name": name,
        "client_uri": client_uri,
        "scope": SCOPE,
    }


def register_client(metadata: dict[str, Any]) -> OAuthClient:
    """Register a public client (RFC 7591); `OAuthError` for metadata this server does not accept."""
    accepted = clean_registration(metadata)
    client = OAuthClient.objects.create(
        client_id=secrets.token_urlsafe(24),
        kind=OAuthClient.REGISTERED,
        name=accepted["client_name"] or "Unnamed client",
        redirect_uris=accepted["redirect_uris"],
        client_uri=accepted["client_uri"],
        metadata=accepted,
    )
    log(OAuthClientRegistered(client_id=client.client_id, kind=client.kind, redirect_uris=len(client.redirect_uris)))
    return client


@dataclass(frozen=True, slots=True)
class TokenSet:
    """What the token endpoint answers (RFC 6749 §5.1)."""

    access_token: str
    refresh_token: str
    expires_in: int
    scope: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "access_token": self.access_token,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "refresh_token": self.refresh_token,
            "scope": self.scope,
        }


def issue_code(
    *, client: OAuthClient, user: Any, tenant: Tenant, redirect_uri: str, code_challenge: str, resource: str
) -> str:
    """A person allowed `client`: a new grant and its authorization code (returned once, stored hashed)."""
    code = secrets.token_urlsafe(32)
    with transaction.atomic():
        grant = Grant.objects.create(client=client, user=user, tenant=tenant, scope=SCOPE, resource=resource)
        AuthorizationCode.objects.create(
            code_hash=digest(code),
            grant=grant,
            client=client,
            user=user,
            redirect_uri=redirect_uri,
            code_challenge=code_challenge,
            resource=resource,
            expires_at=timezone.now() + timedelta(seconds=settings.OAUTH_BUILTIN_CODE_SECONDS),
        )
    log(OAuthGrantIssued(grant=str(grant.pk), client_id=client.client_id, tenant=tenant.name))
    return code


def _tokens(grant: Grant, issuer: str) -> TokenSet:
    refresh_token = secrets.token_urlsafe(32)
    RefreshToken.objects.create(
        token_hash=digest(refresh_token),
        grant=grant,
        expires_at=timezone.now() + timedelta(seconds=settings.OAUTH_BUILTIN_REFRESH_TOKEN_SECONDS),
    )
    lifetime = settings.OAUTH_BUILTIN_ACCESS_TOKEN_SECONDS
    access = tokens.issue(
        tokens.derive_key(settings.SECRET_KEY),
        issuer=issuer,
        audience=grant.resource,
        subject=str(grant.user_id),
        tenant=grant.tenant.claim,
        client_id=grant.client.client_id,
        scope=grant.scope,
        grant_id=str(grant.pk),
        lifetime=lifetime,
    )
    Grant.objects.filter(pk=grant.pk).update(last_used_at=timezone.now())
    return TokenSet(access, refresh_token, lifetime, grant.scope)


def _check_verifier(verifier: str | None, challenge: str) -> None:
    # RFC 7636 §4.1: 43 to 128 unreserved characters.
    if not isinstance(verifier, str) or not 43 <= len(verifier) <= 128 or not set(verifier) <= VERIFIER_CHARS:
        raise OAuthError("invalid_grant", "code_verifier is 43 to 128 unreserved characters (RFC 7636)")
    if not hmac.compare_digest(create_s256_code_challenge(verifier), challenge):
        raise OAuthError("invalid_grant", "The code_verifier does not match the code_challenge")


def _live_grant(grant: Grant) -> bool:
    return (
        grant.revoked_at is None
        and grant.client.revoked_at is None
        and grant.tenant.enabled
        and selectors.tenant_of(grant.user) == grant.tenant
    )


def exchange_code(
    *, code: str, client_id: str, redirect_uri: str | None, verifier: str | None, issuer: str
) -> TokenSet:
    """Tokens for an authorization code (RFC 6749 §4.1.3, RFC 7636 §4.6); a code presented a
    second time revokes the grant it made (RFC 6749 §4.1.2)."""
    replayed: Grant | None = None
    with transaction.atomic():
        row = (
            AuthorizationCode.objects.select_for_update()
            .select_related("grant__client", "grant__tenant", "grant__user")
            .filter(code_hash=digest(code))
            .first()
        )
        if row is None or row.client.client_id != client_id:
            raise OAuthError("invalid_grant", "The authorization code is not known for this client")
        if row.used_at is not None:
            replayed = row.grant
        else:
            if row.expires_at <= timezone.now():
                raise OAuthError("invalid_grant", "The authorization code has expired")
            if (redirect_uri or "") != row.redirect_uri:
                raise OAuthError("invalid_grant", "redirect_uri is not the one the code was issued to")
            _check_verifier(verifier, row.code_challenge)
            row.used_at = timezone.now()
            row.save(update_fields=["used_at"])
            if not _live_grant(row.grant):
                raise OAuthError("invalid_grant", "The grant is revoked, or the person's tenant is disabled")
            return _tokens(row.grant, issuer)
    revoke_grant(replayed, reason="code replayed")
    raise OAuthError("invalid_grant", "The authorization code was already used; its grant is revoked")


def refresh(*, refresh_token: str, client_id: str, issuer: str) -> TokenSet:
    """New tokens for a refresh token, which is used up (rotation, OAuth 2.1 §4.3.1); one used
    before revokes the whole grant: whoever holds it may have stolen it."""
    reused: Grant | None = None
    with transaction.atomic():
        row = (
            RefreshToken.objects.select_for_update()
            .select_related("grant__client", "grant__tenant", "grant__user")
            .filter(token_hash=digest(refresh_token))
            .first()
        )
        if row is None or row.grant.client.client_id != client_id:
            raise OAuthError("invalid_grant", "The refresh token is not known for this client")
        if row.used_at is not None:
            reused = row.grant
        else:
            if row.expires_at <= timezone.now():
                raise OAuthError("invalid_grant", "The refresh token has expired")
            if not _live_grant(row.grant):
                raise OAuthError("invalid_grant", "The grant is revoked, or the person's tenant is disabled")
            answer = _tokens(row.grant, issuer)
            row.used_at = timezone.now()
            row.replaced_by = RefreshToken.objects.get(token_hash=digest(answer.refresh_token))
            row.save(update_fields=["used_at", "replaced_by"])
            return answer
    if reused.revoked_at is None:
        log(OAuthRefreshReused(grant=str(reused.pk), client_id=reused.client.client_id))
        revoke_grant(reused, reason="refresh reused")
    raise OAuthError("invalid_grant", "The refresh token was already used; its grant is revoked")


def revoke_grant(grant: Grant, reason: str = "admin") -> None:
    """Revoke a grant: its codes and refresh tokens are refused at once, its access tokens by every
    replica within OAUTH_BUILTIN_REVOCATION_SECONDS. Revoking a revoked grant changes nothing."""
    now = timezone.now()
    if Grant.objects.filter(pk=grant.pk, revoked_at__isnull=True).update(revoked_at=now):
        grant.revoked_at = now
        log(OAuthGrantRevoked(grant=str(grant.pk), client_id=grant.client.client_id, reason=reason))


def revoke_client(client: OAuthClient) -> None:
    """Revoke a client and every grant it holds; it can no longer sign anyone in."""
    now = timezone.now()
    OAuthClient.objects.filter(pk=client.pk, revoked_at__isnull=True).update(revoked_at=now)
    client.revoked_at = client.revoked_at or now
    for grant in Grant.objects.filter(client=client, revoked_at__isnull=True).select_related("client"):
        revoke_grant(grant, reason="client revoked")


def revoke_token(*, token: str, client_id: str, issuer: str, audiences: list[str]) -> None:
    """RFC 7009: revoke the grant of a refresh token or a built-in access token that belongs to
    `client_id`; anything else (unknown, expired, another client's) is ignored, as §2.2 says."""
    row = RefreshToken.objects.select_related("grant__client").filter(token_hash=digest(token)).first()
    if row is not None:
        if row.grant.client.client_id == client_id:
            revoke_grant(row.grant, reason="revocation request")
        return
    claims = selectors.access_token_claims(token, issuer=issuer, audiences=audiences)
    if claims is None or claims["client_id"] != client_id:
        return
    grant = Grant.objects.select_related("client").filter(pk=claims["gid"]).first()
    if grant is not None:
        revoke_grant(grant, reason="revocation request")


def store_metadata_client(
    client_id: str, document: dict[str, Any], *, fetched_at: dt.datetime, expires_at: dt.datetime
) -> OAuthClient | None:
    """Insert or refresh the row of a client known by its metadata document, checked by
    authserver.cimd (two replicas fetching at once: the second updates); None if another replica
    kept creating it under us."""
    fields = {
        "kind": OAuthClient.METADATA_DOCUMENT,
        "name": (document.get("client_name") or urlsplit(client_id).hostname or client_id)[:NAME_LENGTH],
        "redirect_uris": list(document["redirect_uris"]),
        "client_uri": document.get("client_uri") or "",
        "metadata": document,
        "fetched_at": fetched_at,
        "expires_at": expires_at,
    }
    for _ in range(2):
        try:
            with transaction.atomic():
                row, _created = OAuthClient.objects.update_or_create(client_id=client_id, defaults=fields)
            return row
        except IntegrityError:  # created by another replica between our read and our insert
            continue
    return None
