"""Which TomTom key a call uses.

A caller signed in with OAuth (docs/oauth.md) uses its tenant's key and nothing else: never a
header, never the server's key; a tenant without a key is `unauthorized`. Otherwise, highest first:

1. the `tomtom-api-key` HTTP header,
2. `Authorization: Bearer <key>`,
3. the key given to the stdio or exec command (`--apikey-file`, or the older `--apikey`),
4. the server's own `TOMTOM_API_KEY` (environment or `.env`), unless the deployment is hosted
   and the call came over HTTP: a hosted server never spends its own key on a caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import ErrorCode, ToolError


@dataclass(frozen=True, slots=True)
class KeySources:
    header: str | None = None
    bearer: str | None = None
    cli: str | None = None
    tenant: str | None = None
    """The signed-in tenant's key (from the tenants' table, decrypted)."""
    signed_in: bool = False
    """True for a caller signed in with OAuth: only `tenant` counts."""

    def __repr__(self) -> str:  # never show a key
        given = [name for name in ("header", "bearer", "cli", "tenant") if getattr(self, name)]
        return f"KeySources(given={given})"


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def resolve_api_key(sources: KeySources, *, server_key: str | None, over_http: bool, hosted: bool) -> tuple[str, str]:
    """Return `(key, auth_method)`, or raise an `unauthorized` error that says how to give one."""
    if sources.signed_in:
        if sources.tenant and sources.tenant.strip():
            return sources.tenant.strip(), "oauth"
        raise ToolError(
            ErrorCode.UNAUTHORIZED,
            "No TomTom API key: your organisation has no active TomTom key on this server; "
            "ask its operator to add one.",
        )
    for method, value in (("tomtom-api-key", sources.header), ("bearer", sources.bearer), ("cli", sources.cli)):
        if value and value.strip():
            return value.strip(), method
    if server_key and not (hosted and over_http):
        return server_key, "server-key"
    if over_http:
        how = "send your key in the `tomtom-api-key` header (or `Authorization: Bearer <key>`)"
        if not hosted:
            how += ", or set TOMTOM_API_KEY on the server"
    else:
        how = "set TOMTOM_API_KEY in the environment or .env, or pass --apikey-file PATH"
    raise ToolError(ErrorCode.UNAUTHORIZED, f"No TomTom API key: {how}.")
