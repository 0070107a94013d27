"""The OAuth 2.1 resource server in front of `/mcp` (MCP authorization, revisions 2025-06-18 and
2025-11-25; docs/oauth.md, docs/adr/0013-oauth-resource-server-and-tenants.md).

- `/.well-known/oauth-protected-resource` and its path-suffixed form for `MCP_PATH` (RFC 9728)
  publish `ResourceServer.metadata()`: this resource and the authorization server(s) to ask.
- `ResourceServer.verify(token)` validates a bearer access token as a JWT from `OAUTH_ISSUER`.
  First its form, read strictly before PyJWT sees it (`token_header`): three base64url parts,
  a header and claims that are JSON objects nested at most `MAX_JSON_DEPTH` deep, an algorithm
  from the allowed asymmetric set (`alg: none` and every HMAC algorithm are refused before any
  key is looked at), a `kid` that is a string, no `crit` (we support no extension). Then the
  signature against the issuer's keys (protocol/jwks.py: fetched within one deadline, cached,
  kept in use while the issuer's key server fails), `iss` exactly, `aud` naming this resource
  (RFC 8707), `exp` (required) and `nbf` with `OAUTH_LEEWAY_SECONDS` of leeway, the required
  scopes (`scope` or `scp`), and the tenant claim. It answers the SDK's `AccessToken`, or raises
  `AuthFailure`, which becomes the HTTP answer with its RFC 6750 `WWW-Authenticate` challenge
  (`challenge()`): 401 `invalid_token` (or no error at all when no token was sent), 403
  `insufficient_scope` naming the scope to ask for; or 503 with `Retry-After` when no signing
  key can be had (the issuer's fault, not the caller's). Nothing in a token makes a 500.

With the built-in authorization server on (`OAUTH_BUILTIN`, authserver/), a token whose `kid`
is `builtin-<8 hex>` is this server's own: HS256 only, verified with the key derived from
DJANGO_SECRET_KEY (authserver.tokens, no database and no key fetch), its grant checked against
the grants revoked lately (authserver.selectors.RevokedGrants, re-read at most every
OAUTH_BUILTIN_REVOCATION_SECONDS), then admitted to its tenant exactly as an external token is.
The external path keeps refusing every HMAC algorithm.

The token only says who is calling: it is never forwarded anywhere (TomTom gets the tenant's own
key). The JWKS cache is a cache of the issuer's public keys, not request state: any replica
answers any request, each fetching the keys itself.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from django.db import DatabaseError
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl

from authserver import tokens as builtin_tokens
from authserver.selectors import RevokedGrants
from core.events import ERROR_TEXT_LENGTH, clip, log
from core.operations import TenantsUnreadable
from protocol.jwks import JwksCache, KeysUnavailable
from tenants.store import Admission
from tools.tomtom.credentials import bearer_token

ASYMMETRIC_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
MAX_TOKEN_CHARS = 16 * 1024
MAX_CLAIM_CHARS = 255
MAX_JSON_DEPTH = 32
"""Deepest nesting of a token's header or claims: a JWT needs two or three levels."""
COMPACT_JWS = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
"""A signed JWT: three base64url parts (RFC 7515 §7.1), the signature not empty."""
METADATA_PATH = "/.well-known/oauth-protected-resource"


class AuthFailure(Exception):
    """Why a request is not allowed in: `status` 401 or 403 and the RFC 6750 `error` code (or
    503, with `retry_after` seconds, when sign-in cannot be decided now)."""

    def __init__(
        self,
        status: int,
        error: str | None,
        description: str,
        *,
        scope: str | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(description)
        self.status = status
        self.error = error
        self.description = description
        self.scope = scope
        self.retry_after = retry_after


def _invalid(description: str) -> AuthFailure:
    return AuthFailure(401, "invalid_token", description)


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    issuer: str
    jwks_url: str
    resource: str
    """This server's canonical URL (`OAUTH_RESOURCE`): the metadata's `resource`, the tokens' `aud`."""
    authorization_servers: Sequence[str]
    required_scopes: Sequence[str] = ()
    tenant_claim: str = "sub"
    algorithms: Sequence[str] = ("RS256", "ES256", "PS256", "EdDSA")
    leeway_seconds: int = 30
    jwks_cache_seconds: int = 300
    jwks_max_stale_seconds: int = 3600
    builtin_keys: Sequence[builtin_tokens.SigningKey] = ()
    """The built-in authorization server's access-token keys (current first); empty: it is off."""
    builtin_issuer: str = ""
    builtin_access_token_seconds: int = 600
    builtin_revocation_seconds: int = 30

    def __post_init__(self) -> None:
        weak = set(self.algorithms) - ASYMMETRIC_ALGORITHMS
        if weak or not self.algorithms:
            raise ValueError(f"only asymmetric JWT algorithms may be allowed, not {sorted(weak) or 'none'}")


def token_header(token: str) -> dict[str, Any]:
    """The JOSE header of a compact JWS, read strictly before PyJWT sees the token: three
    base64url parts, a header and claims that are JSON objects (RFC 8259: no NaN, no lone
    surrogate) nested at most `MAX_JSON_DEPTH` deep; anything else is `invalid_token`."""
    if not COMPACT_JWS.fullmatch(token):
        raise _invalid("The access token is not a JWT")
    header_part, claims_part, _signature = token.split(".")
    header, claims = _json_part(header_part), _json_part(claims_part)
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise _invalid("The access token is not a JWT")
    if _too_deep(header) or _too_deep(claims):
        raise _invalid("The access token's header or claims are nested too deeply")
    return header


def _json_part(part: str) -> Any:
    try:
        return orjson.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except ValueError:  # binascii.Error and orjson.JSONDecodeError are ValueErrors
        raise _invalid("The access token is not a JWT") from None


def _too_deep(value: Any) -> bool:
    """Whether `value` nests lists or objects more than `MAX_JSON_DEPTH` deep (no recursion)."""
    level: list[Any] = [value]
    for _depth in range(MAX_JSON_DEPTH + 1):
        level = [
            child
            for item in level
            if isinstance(item, (dict, list))
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return False
    return True


def granted_scopes(claims: dict[str, Any]) -> list[str]:
    """The scopes of a token: `scope` (RFC 9068, space-separated) or `scp` (a list or a string)."""
    value = claims.get("scope", claims.get("scp", ""))
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [s for s in value if isinstance(s, str)]
    return []


class ResourceServer:
    """Validates access tokens for this resource and says how to get one (see the module docstring)."""

    def __init__(self, settings: OAuthSettings) -> None:
        self.settings = settings
        self.jwks = JwksCache(
            settings.jwks_url, max_age=settings.jwks_cache_seconds, max_stale=settings.jwks_max_stale_seconds
        )
        self.metadata_url = str(build_resource_metadata_url(AnyHttpUrl(settings.resource)))
        self._audiences = [settings.resource.rstrip("/"), settings.resource.rstrip("/") + "/"]
        self.revoked_grants = (
            RevokedGrants(
                settings.builtin_revocation_seconds, settings.builtin_access_token_seconds, settings.leeway_seconds
            )
            if settings.builtin_keys
            else None
        )

    def metadata(self) -> ProtectedResourceMetadata:
        """RFC 9728 metadata. URLs go in as text so the model keeps them exactly as configured: an
        issuer is compared as a string (RFC 8414 §3.3), and `http://host` must not become `http://host/`."""
        return ProtectedResourceMetadata.model_validate(
            {
                "resource": self.settings.resource,
                "authorization_servers": list(self.settings.authorization_servers),
                "scopes_supported": list(self.settings.required_scopes) or None,
                "bearer_methods_supported": ["header"],
                "resource_name": "TomTom Maps MCP server",
            }
        )

    def metadata_json(self) -> str:
        return self.metadata().model_dump_json(exclude_none=True)

    def challenge(self, failure: AuthFailure | None = None) -> str:
        """The `WWW-Authenticate` value for a refused request (RFC 6750 §3, RFC 9728 §5.1)."""
        parts = [f'resource_metadata="{self.metadata_url}"']
        scope = failure.scope if failure is not None and failure.scope else " ".join(self.settings.required_scopes)
        if scope:
            parts.append(f'scope="{scope}"')
        if failure is not None and failure.error:
            parts.append(f'error="{failure.error}"')
            parts.append(f'error_description="{failure.description}"')
        return "Bearer " + ", ".join(parts)

    async def verify(self, token: str) -> AccessToken:
        """The validated token, or `AuthFailure` (see the module docstring for every rule)."""
        if len(token) > MAX_TOKEN_CHARS:
            raise _invalid("The access token is too long")
        header = token_header(token)
        if self.settings.builtin_keys and builtin_tokens.is_builtin_kid(header.get("kid")):
            return await self._verify_builtin(token, header)
        if self.settings.builtin_keys and not self.settings.jwks_url:  # the built-in server alone
            raise _invalid("The access token is not from this server's authorization server")
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self.settings.algorithms:
            raise _invalid(f"The access token's alg is not one of {', '.join(self.settings.algorithms)}")
        kid = header.get("kid")
        if kid is not None and not (isinstance(kid, str) and len(kid) <= MAX_CLAIM_CHARS):
            raise _invalid(f"The access token's kid is not a string of at most {MAX_CLAIM_CHARS} characters")
        if "crit" in header:  # RFC 7515 §4.1.11: extensions a recipient does not understand make the JWS invalid
            raise _invalid("The access token's header names critical extensions (crit) this server does not support")
        try:
            key = await self.jwks.key(kid)
        except KeysUnavailable as unavailable:
            raise AuthFailure(
                503,
                None,
                "Sign-in is unavailable for a moment: the issuer's signing keys cannot be had; try again",
                retry_after=unavailable.retry_after,
            ) from None
        if key is None:
            raise _invalid("The access token is signed with a key the issuer does not publish")
        try:
            claims = builtin_tokens.decode(
                token,
                key,
                algorithm=str(algorithm),
                issuer=self.settings.issuer,
                audiences=self._audiences,
                leeway=self.settings.leeway_seconds,
                require=("exp", "iss", "aud"),
            )
        except builtin_tokens.TokenInvalid as refused:
            raise _invalid(str(refused)) from None
        scopes = self._required_scopes(claims)
        tenant = claims.get(self.settings.tenant_claim)
        if not isinstance(tenant, str) or not tenant or len(tenant) > MAX_CLAIM_CHARS:
            raise _invalid(f"The access token has no usable {self.settings.tenant_claim} claim")
        return self._access_token(token, claims, scopes, tenant)

    def _required_scopes(self, claims: dict[str, Any]) -> list[str]:
        """The token's scopes, if they hold every required one; 403 `insufficient_scope` if not."""
        scopes = granted_scopes(claims)
        missing = [s for s in self.settings.required_scopes if s not in scopes]
        if missing:
            raise AuthFailure(
                403,
                "insufficient_scope",
                f"The access token lacks the scope {' '.join(missing)}",
                scope=" ".join(self.settings.required_scopes),
            )
        return scopes

    def _access_token(self, token: str, claims: dict[str, Any], scopes: list[str], tenant: str) -> AccessToken:
        """The SDK's `AccessToken` for verified `claims`, the tenant under OAUTH_TENANT_CLAIM."""
        client_id = claims.get("client_id", claims.get("azp"))
        return AccessToken(
            token=token,
            client_id=client_id if isinstance(client_id, str) else "",
            scopes=scopes,
            expires_at=int(claims["exp"]),
            resource=self.settings.resource,
            subject=claims.get("sub") if isinstance(claims.get("sub"), str) else None,
            claims={"iss": claims["iss"], self.settings.tenant_claim: tenant},
        )

    async def _verify_builtin(self, token: str, header: dict[str, Any]) -> AccessToken:
        """A token of the built-in authorization server (see the module docstring)."""
        try:
            claims = builtin_tokens.verify(
                token,
                header,
                list(self.settings.builtin_keys),
                issuer=self.settings.builtin_issuer,
                audiences=self._audiences,
                leeway=self.settings.leeway_seconds,
            )
        except builtin_tokens.TokenInvalid as refused:
            raise _invalid(str(refused)) from None
        assert self.revoked_grants is not None
        try:
            revoked = await self.revoked_grants.contains(claims["gid"])
        except DatabaseError as exc:
            log(TenantsUnreadable(error=clip(f"{type(exc).__name__}: {exc}", ERROR_TEXT_LENGTH)))
            raise AuthFailure(503, None, "Sign-in is unavailable for a moment; try again") from None
        if revoked:
            raise _invalid("The access token's grant has been revoked")
        return self._access_token(token, claims, self._required_scopes(claims), claims["tenant"])

    def tenant_of(self, token: AccessToken) -> str:
        """The tenant claim's value of a token `verify` accepted."""
        assert token.claims is not None
        return token.claims[self.settings.tenant_claim]

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's `TokenVerifier` protocol: the token, or None when it is refused."""
        try:
            return await self.verify(token)
        except AuthFailure:
            return None


def looks_like_jwt(token: str) -> bool:
    """A compact JWS has three base64url parts; a TomTom key has no dots."""
    return token.count(".") == 2


AdmitFn = Callable[[str, int], Awaitable[Admission | None]]


@dataclass(frozen=True, slots=True)
class SignIn:
    """Which ways in `/mcp` accepts (`MCP_AUTH`) and how a signed-in caller becomes a tenant.

    - `api-key` alone (the default): no token is looked at; today's key rules apply.
    - `oauth` alone: every request needs a valid access token; a TomTom key in a header is not
      a way in, and the server's own key is never spent.
    - both: a bearer that looks like a JWT is an access token; otherwise a `tomtom-api-key`
      header or a bearer TomTom key works as before. A request with neither is answered 401 with
      the challenge, so an OAuth host starts its sign-in; the server's key is not a way in.
    """

    resource_server: ResourceServer
    api_keys: bool = False
    admit: AdmitFn | None = None
    """`tenants.store.admit` unless a test gives another."""

    async def authenticate(self, headers: Mapping[str, str], tool_calls: int) -> Admission | None:
        """The admitted tenant, None for a caller that brings its own TomTom key (the old way), or
        `AuthFailure` (401/403; 503 when the tenants' table cannot be read)."""
        bearer = bearer_token(headers.get("authorization"))
        if bearer is not None and (not self.api_keys or looks_like_jwt(bearer)):
            token = await self.resource_server.verify(bearer)
            return await self._admit(self.resource_server.tenant_of(token), tool_calls)
        authorization = headers.get("authorization")
        if authorization is not None and bearer is None and not self.api_keys:
            raise _invalid("The Authorization header is not a bearer token")
        if self.api_keys and (bearer is not None or (headers.get("tomtom-api-key") or "").strip()):
            return None
        raise AuthFailure(401, None, "Sign in: this server needs an access token")

    async def _admit(self, claim: str, tool_calls: int) -> Admission:
        admit = self.admit
        if admit is None:
            from tenants.store import admit as admit_from_tables

            admit = admit_from_tables
        try:
            admission = await admit(claim, tool_calls)
        except DatabaseError as exc:
            log(TenantsUnreadable(error=clip(f"{type(exc).__name__}: {exc}", ERROR_TEXT_LENGTH)))
            raise AuthFailure(503, None, "Sign-in is unavailable for a moment; try again") from None
        if admission is None:
            raise AuthFailure(403, "access_denied", "Your account is not a tenant of this server")
        if not admission.enabled:
            raise AuthFailure(403, "access_denied", "Your organisation's access to this server is disabled")
        return admission
