"""The MCP exchange events: what the edge answered besides tool calls, for the product evidence.

Three lines, each declared once here and read by the analytics (docs/analytics.md, "Evidence"):

- `SessionStarted`: an `initialize` answered, with the client's name and version and the protocol
  version agreed: the protocol and client mix per host family;
- `ToolsListed`: a `tools/list` answered, with the bytes each listed tool cost: listed against
  called, and the tools a host is listed but never calls;
- `RequestRefused`: a JSON-RPC request answered with a JSON-RPC error (a method the server does
  not have, parameters the SDK refused, a handler that raised): the JSON-RPC error codes.

A tool call is not here: it has its own line (core/calls.py), which also carries the protocol
version, the tools its error answer pointed to and the arguments it failed on.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from core.events import (
    DIMENSION,
    MEASURE,
    ClientName,
    Count,
    ErrorText,
    Event,
    OneOf,
    RequestId,
    SessionKey,
    ShortText,
    TenantName,
    ToolName,
    UserAgent,
)

LOGGER = "tools.mcp.requests"
MAX_LISTED = 128
"""The most tools one `Tools listed` line names (the catalogue has far fewer)."""
TRANSPORTS = ("http", "stdio", "exec")
BACKENDS = ("tomtom-orbis-maps", "tomtom-maps")

VERSION_LENGTH = 64
VersionText = Annotated[str, Meta(max_length=VERSION_LENGTH)]
"""A version as a client sent it (`clientInfo.version`, a protocol revision), clipped."""
RpcCode = Annotated[int, Meta(ge=-(2**31), le=2**31 - 1)]
"""A JSON-RPC error code (a 32-bit signed integer in every SDK)."""


class ListedTool(msgspec.Struct, kw_only=True, frozen=True, gc=False):
    """One tool of a listing, with what it cost: its wire entry's UTF-8 bytes."""

    name: ToolName
    bytes: Count


class SessionStarted(Event, kw_only=True, frozen=True):
    """An `initialize` request answered: a client session began (over HTTP, the signed
    `Mcp-Session-Id` minted for it; over stdio, the process's session)."""

    LOGGER = LOGGER
    MESSAGE = "Session started"

    client: Annotated[ClientName, DIMENSION]
    client_version: Annotated[VersionText, DIMENSION] = ""
    """`clientInfo.version` as sent ("" when the client sent none)."""
    protocol_version: Annotated[VersionText, DIMENSION] = ""
    """The protocol revision agreed (the one the server answered with)."""
    requested_version: VersionText = ""
    """The revision the client asked for, when it differs from the one agreed."""
    transport: Annotated[ShortText, OneOf(TRANSPORTS)] = ""
    apps: Annotated[ShortText, OneOf(("apps", "text"))] = ""
    """Whether the client's capabilities declared MCP Apps."""
    tenant: Annotated[TenantName, DIMENSION] | None = None
    user_agent: UserAgent | None = None
    request_id: RequestId | None = None
    session: SessionKey | None = None


class ToolsListed(Event, kw_only=True, frozen=True):
    """A `tools/list` request answered: which tools this caller was listed, and what each cost."""

    LOGGER = LOGGER
    MESSAGE = "Tools listed"

    client: Annotated[ClientName, DIMENSION]
    protocol_version: Annotated[VersionText, DIMENSION] = ""
    transport: Annotated[ShortText, OneOf(TRANSPORTS)] = ""
    tenant: Annotated[TenantName, DIMENSION] | None = None
    backend: Annotated[ShortText, DIMENSION, OneOf(BACKENDS)] = ""
    bytes: Annotated[Count, MEASURE]
    """The whole listing's `tools` array, in UTF-8 bytes of its JSON: the model-context cost."""
    tools: Annotated[list[ListedTool], Meta(max_length=MAX_LISTED)]
    request_id: RequestId | None = None
    session: SessionKey | None = None


class RequestRefused(Event, kw_only=True, frozen=True):
    """A JSON-RPC request answered with a JSON-RPC error instead of a result."""

    LOGGER = LOGGER
    MESSAGE = "MCP request refused"

    method: Annotated[ShortText, DIMENSION]
    """The request's method as sent (clipped)."""
    code: Annotated[RpcCode, DIMENSION]
    client: Annotated[ClientName, DIMENSION]
    protocol_version: Annotated[VersionText, DIMENSION] = ""
    transport: Annotated[ShortText, OneOf(TRANSPORTS)] = ""
    tenant: Annotated[TenantName, DIMENSION] | None = None
    request_id: RequestId | None = None
    session: SessionKey | None = None
    error: ErrorText | None = None
    """The error's message as the client read it (keys masked)."""


EXCHANGE_EVENTS: tuple[type[Event], ...] = (SessionStarted, ToolsListed, RequestRefused)
