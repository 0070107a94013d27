"""Built-in access tokens: short-lived JWTs any replica can verify without the database.

Signed HS256 with a key derived from DJANGO_SECRET_KEY for this purpose only
(HMAC-SHA256(secret, "tomtom-mcp oauth access token v1")); verified under SECRET_KEY and each of
SECRET_KEY_FALLBACKS, so rotating the secret does not sign everyone out at once. The header
is `{"alg": "HS256", "typ": "at+jwt", "kid": "builtin-<8 hex>"}` (RFC 9068), the kid naming which
secret signed it. Claims: iss, aud (the /mcp resource), sub (the user id), tenant (the tenant's
claim value), client_id, scope, gid (the grant), iat, exp, jti.

Revocation is not looked up per request: `authserver.selectors.RevokedGrants` keeps the grants
revoked lately and the caller checks `gid` against it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Any

import jwt

KID_PREFIX = "builtin-"
KEY_PURPOSE = b"tomtom-mcp oauth access token v1"
ALGORITHM = "HS256"
TOKEN_TYPE = "at+jwt"
MAX_CLAIM_CHARS = 255


class TokenInvalid(Exception):
    """A built-in access token that is not acceptable; the message says why (no token in it)."""


@dataclass(frozen=True, slots=True)
class SigningKey:
    kid: str
    key: bytes


def derive_key(secret: str) -> SigningKey:
    """The access-token key derived from one Django secret, and its kid."""
    key = hmac.new(secret.encode(), KEY_PURPOSE, hashlib.sha256).digest()
    return SigningKey(KID_PREFIX + hashlib.sha256(key).hexdigest()[:8], key)


def signing_keys(secret: str, fallbacks: list[str] | tuple[str, ...] = ()) -> list[SigningKey]:
    """The current key first, then those of the fallback secrets."""
    return [derive_key(secret), *(derive_key(s) for s in fallbacks)]


def is_builtin_kid(kid: object) -> bool:
    return isinstance(kid, str) and kid.startswith(KID_PREFIX) and len(kid) == len(KID_PREFIX) + 8


def issue(
    key: SigningKey,
    *,
    issuer: str,
    audience: str,
    subject: str,
    tenant: str,
    client_id: str,
    scope: str,
    grant_id: str,
    lifetime: int,
    now: float | None = None,
) -> str:
    """A signed access token (see the module docstring)."""
    issued = int(time.time() if now is None else now)
    claims = {
        "iss": issuer,
        "aud": audience,
        "sub": subject,
        "tenant": tenant,
        "client_id": client_id,
        "scope": scope,
        "gid": grant_id,
        "iat": issued,
        "exp": issued + lifetime,
        "jti": secrets.token_urlsafe(12),
    }
    return jwt.encode(claims, key.key, algorithm=ALGORITHM, headers={"typ": TOKEN_TYPE, "kid": key.kid})


def verify(
    token: str, header: dict[str, Any], keys: list[SigningKey], *, issuer: str, audiences: list[str], leeway: int
) -> dict[str, Any]:
    """The claims of a built-in token whose (already parsed) `header` names one of `keys`;
    `TokenInvalid` otherwise: another algorithm than HS256, an unknown kid, a bad signature,
    another issuer or audience, expired, or a claim missing or of the wrong type."""
    if header.get("alg") != ALGORITHM:
        raise TokenInvalid("The access token's alg is not HS256")
    key = next((k for k in keys if hmac.compare_digest(k.kid, str(header.get("kid")))), None)
    if key is None:
        raise TokenInvalid("The access token is signed with a key this server does not have")
    claims = decode(
        token,
        key.key,
        algorithm=ALGORITHM,
        issuer=issuer,
        audiences=audiences,
        leeway=leeway,
        require=("exp", "iss", "aud", "sub", "iat"),
    )
    for name in ("tenant", "client_id", "gid", "sub"):
        value = claims.get(name)
        if not isinstance(value, str) or not value or len(value) > MAX_CLAIM_CHARS:
            raise TokenInvalid(f"The access token has no usable {name} claim")
    if not isinstance(claims.get("scope", ""), str):
        raise TokenInvalid("The access token's scope is not a string")
    return claims


def decode(
    token: str,
    key: Any,
    *,
    algorithm: str,
    issuer: str,
    audiences: list[str],
    leeway: int,
    require: tuple[str, ...],
) -> dict[str, Any]:
    """PyJWT's check of a token's signature, `iss`, `aud`, `exp`/`nbf` and required claims, its
    refusals said as `TokenInvalid` in the words a 401's challenge carries: one wording for this
    server's own tokens and an external issuer's (protocol/oauth.py) alike."""
    try:
        return jwt.decode(
            token,
            key=key,
            algorithms=[algorithm],
            issuer=issuer,
            audience=audiences,
            leeway=leeway,
            options={"require": list(require), "verify_signature": True},
        )
    except jwt.ExpiredSignatureError:
        raise TokenInvalid("The access token has expired") from None
    except jwt.ImmatureSignatureError:
        raise TokenInvalid("The access token is not valid yet") from None
    except jwt.InvalidIssuerError:
        raise TokenInvalid("The access token is from another issuer") from None
    except jwt.InvalidAudienceError:
        raise TokenInvalid("The access token is not for this resource") from None
    except jwt.MissingRequiredClaimError as exc:
        raise TokenInvalid(f"The access token has no {exc.claim} claim") from None
    except jwt.PyJWTError:  # bad signature, key/algorithm mismatch, unreadable claims
        raise TokenInvalid("The access token's signature or claims are invalid") from None
