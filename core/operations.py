"""What the server says about its own health: the log events that are neither a tool call nor
an app status. Operators alert on these messages, so they never change wording.
"""

from __future__ import annotations

import logging
from typing import Annotated

import msgspec
from msgspec import Meta

from core.events import Count, ErrorText, Event, Milliseconds, OneOf, ShortText, TenantName, ToolName, ToolNames

Seconds = Annotated[float, Meta(ge=0, le=1e9)]
PATH_LENGTH = 4_096
FilePath = Annotated[str, Meta(max_length=PATH_LENGTH)]
"""A file's path on the server's machine (the longest Linux allows)."""
KEY_ID_LENGTH = 255
KeyId = Annotated[str, Meta(max_length=KEY_ID_LENGTH)]
"""A signing key's `kid`, as sign-in accepts one."""


class SurfaceUnreadable(Event, kw_only=True, frozen=True):
    """The tool-surface tables could not be read (the two events below say what answers instead)."""

    LOGGER = "tools.governance"
    LEVEL = logging.WARNING
    error: ErrorText
    retired: Count
    """Retired tools in what answers instead."""
    contract_changes: Count


class SurfaceUnreadableFromSnapshot(SurfaceUnreadable, kw_only=True, frozen=True):
    """The tool-surface tables could not be read; calls are governed by the last rules read."""

    MESSAGE = "Tool-surface tables unreadable: answering from the last snapshot"


class SurfaceUnreadableFromFixture(SurfaceUnreadable, kw_only=True, frozen=True):
    """The tool-surface tables could not be read, and none were read before: calls are governed
    by the committed fixture."""

    MESSAGE = "Tool-surface tables unreadable: answering from the committed fixture"


class SurfaceReadableAgain(Event, kw_only=True, frozen=True):
    """The tool-surface tables can be read again."""

    LOGGER = "tools.governance"
    MESSAGE = "Tool-surface tables readable again"


class ScheduledRetirementFired(Event, kw_only=True, frozen=True):
    """A deprecated tool's or an alias's retire-on date came: the replica that noticed first
    recorded its retirement (every replica answers it as retired from then on)."""

    LOGGER = "tools.governance"
    MESSAGE = "Scheduled retirement fired"
    LEVEL = logging.WARNING
    tool: ToolName
    retire_on: ShortText
    replaced_by: ToolNames


class SurfaceRowsSkipped(Event, kw_only=True, frozen=True):
    """Rows of the tool-surface tables that do not validate (written around the services, e.g.
    by SQL) were left out of the rules this refresh read; the rest govern calls. Logged once per
    refresh that skips any (system check tools.E120 names them)."""

    LOGGER = "tools.governance"
    MESSAGE = "Tool-surface rows skipped: they do not validate"
    LEVEL = logging.WARNING
    rows: Count
    tools: ToolNames
    """The names of the rows skipped (the first 32)."""
    error: ErrorText
    """What is wrong with each, in order."""


class GovernanceClockFailed(Event, kw_only=True, frozen=True):
    """GOVERNANCE_CLOCK could not say what time it is (it does not import, raised, or returned no
    aware datetime): retire-on dates are judged by the system clock until it answers again.
    Logged once, when it starts failing (system check tools.E019 reports it at start)."""

    LOGGER = "tools.governance"
    MESSAGE = "Governance clock failed: judging dates by the system clock"
    LEVEL = logging.ERROR
    error: ErrorText


class ClientSurfaceRulesUnreadable(Event, kw_only=True, frozen=True):
    """The client surface rules could not be read; listings are shaped by the last rules read."""

    LOGGER = "tools.client_surface"
    MESSAGE = "Client surface rules unreadable: shaping by the last rules"
    LEVEL = logging.WARNING
    error: ErrorText
    rules: Count


class TenantsUnreadable(Event, kw_only=True, frozen=True):
    """Sign-in could not read the tenants' table: the request was answered 503."""

    LOGGER = "tools.oauth"
    MESSAGE = "Tenants unreadable"
    LEVEL = logging.ERROR
    error: ErrorText


class TenantKeyUndecryptable(Event, kw_only=True, frozen=True):
    """A tenant's stored TomTom key cannot be decrypted with any configured key (rotation?)."""

    LOGGER = "tenants"
    MESSAGE = "Tenant key cannot be decrypted"
    LEVEL = logging.ERROR
    tenant: TenantName


class HandlerRaised(Event, kw_only=True, frozen=True):
    """An MCP request handler raised where the SDK maps no error: answered JSON-RPC code 0.
    Logged with the exception."""

    LOGGER = "tools.mcp.exchange"
    MESSAGE = "MCP request handler raised"
    LEVEL = logging.ERROR
    method: ShortText


class LiveIngestDropped(Event, kw_only=True, frozen=True):
    """The live path's queue was full: lines were not stored (ingesting the log later fills the gap)."""

    LOGGER = "analytics.live"
    MESSAGE = "Live app-status ingestion dropped lines: the queue was full"
    LEVEL = logging.WARNING
    lines_dropped: Count


class LiveIngestFailed(Event, kw_only=True, frozen=True):
    """Writing a batch of the live path failed; logged with the exception."""

    LOGGER = "analytics.live"
    MESSAGE = "Live app-status ingestion failed"
    LEVEL = logging.ERROR
    lines_lost: Count


class SigningKeysFetched(Event, kw_only=True, frozen=True):
    """Sign-in fetched the issuer's signing keys (JWKS)."""

    LOGGER = "tools.oauth"
    MESSAGE = "Signing keys fetched"
    keys: Count


class SigningKeysRefused(Event, kw_only=True, frozen=True):
    """The issuer's key set could not be fetched or read: the keys held before stay in use until
    they are too old, and the next fetch waits `retry_in_s` (doubling after each failure)."""

    LOGGER = "tools.oauth"
    MESSAGE = "Signing keys refused"
    LEVEL = logging.WARNING
    reason: ErrorText
    failures: Count
    retry_in_s: Seconds
    keys_kept: Count


class SkippedKey(msgspec.Struct, kw_only=True, frozen=True, gc=False):
    """A key of a key set that sign-in cannot use."""

    index: Count
    kid: KeyId | None = None
    reason: ErrorText


class SigningKeysSkipped(Event, kw_only=True, frozen=True):
    """Keys of the issuer's key set that cannot be used were left out; the others are used."""

    LOGGER = "tools.oauth"
    MESSAGE = "Signing keys skipped"
    LEVEL = logging.WARNING
    keys: Count
    skipped: Annotated[list[SkippedKey], Meta(max_length=100)]


OAUTH_CLIENT_ID_LENGTH = 2_048
OAuthClientId = Annotated[str, Meta(max_length=OAUTH_CLIENT_ID_LENGTH)]
"""An OAuth client's id: a random id the server issued, or the https URL of its metadata document."""
GRANT_ID_LENGTH = 36
GrantId = Annotated[str, Meta(max_length=GRANT_ID_LENGTH)]
"""A built-in authorization server grant's id (a UUID)."""


class OAuthClientRegistered(Event, kw_only=True, frozen=True):
    """The built-in authorization server registered a client (RFC 7591), or first accepted one
    by its Client ID Metadata Document."""

    LOGGER = "authserver"
    MESSAGE = "OAuth client registered"
    client_id: OAuthClientId
    kind: Annotated[ShortText, OneOf(("registered", "metadata_document"))]
    redirect_uris: Count


class OAuthClientRefused(Event, kw_only=True, frozen=True):
    """A client whose `client_id` is an https URL could not sign in: its Client ID Metadata
    Document could not be fetched or broke a rule (`error` says which). The person sees the same
    reason on the error page; this line is how the operator sees it."""

    LOGGER = "authserver"
    MESSAGE = "OAuth client refused"
    LEVEL = logging.WARNING
    client_id: OAuthClientId
    error: ErrorText


class OAuthGrantIssued(Event, kw_only=True, frozen=True):
    """A person consented: the built-in authorization server issued a grant (and its code)."""

    LOGGER = "authserver"
    MESSAGE = "OAuth grant issued"
    grant: GrantId
    client_id: OAuthClientId
    tenant: TenantName


class OAuthGrantRevoked(Event, kw_only=True, frozen=True):
    """A grant was revoked: its codes and refresh tokens die at once, its access tokens within
    OAUTH_BUILTIN_REVOCATION_SECONDS."""

    LOGGER = "authserver"
    MESSAGE = "OAuth grant revoked"
    grant: GrantId
    client_id: OAuthClientId
    reason: Annotated[
        ShortText, OneOf(("admin", "client revoked", "revocation request", "code replayed", "refresh reused"))
    ]


class OAuthRefreshReused(Event, kw_only=True, frozen=True):
    """A refresh token already exchanged was presented again: it may have been stolen, so the
    whole grant is revoked (OAuth 2.1 §4.3.1)."""

    LOGGER = "authserver"
    MESSAGE = "OAuth refresh reused"
    LEVEL = logging.WARNING
    grant: GrantId
    client_id: OAuthClientId


class ServerStarted(Event, kw_only=True, frozen=True):
    """A server process is ready to serve: stdio when it starts reading, each HTTP worker at the
    end of its ASGI lifespan startup. `simplifier` says whether this installation has the
    compiled kernel (tools/geometry/_kernel.c) or runs the numpy fallback, several times slower
    on long routes (docs/adr/0037-compiled-simplifier-kernel.md)."""

    LOGGER = "tomtom_mcp.server"
    MESSAGE = "Server started"
    version: ShortText
    transport: Annotated[ShortText, OneOf(("stdio", "http"))]
    simplifier: Annotated[ShortText, OneOf(("compiled kernel", "numpy fallback"))]


class EmbeddedDatabaseMigrated(Event, kw_only=True, frozen=True):
    """The console script applied the migrations the embedded database (no `DATABASE_URL`) lacked:
    on the first start, and on the first start after an upgrade."""

    LOGGER = "tomtom_mcp.embedded"
    MESSAGE = "Embedded database migrated"
    path: FilePath
    migrations: Count
    total_ms: Milliseconds


class EmbeddedDatabaseNotMigrated(Event, kw_only=True, frozen=True):
    """The embedded database could not be created or migrated (an unwritable data directory?):
    the server runs on, governed by the committed tool-surface fixture (stdio) or not ready
    (`/readyz`). Logged with the exception."""

    LOGGER = "tomtom_mcp.embedded"
    MESSAGE = "Embedded database not migrated"
    LEVEL = logging.ERROR
    path: FilePath
    error: ErrorText
