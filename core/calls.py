"""The tool-call events: one line per call, and one more when a call failed on our side.

`ToolCall` is the Tool-call line of CONTEXT.md, written by the dispatcher's call log
(tools/dispatch.py, `log_calls`); the analytics store it, roll it up and count it in the
Prometheus metrics, all from this declaration. Its `outcome` is `ok` or an error code of
core/errors.py: a new code is a new member of `ErrorCode`, and nothing else here changes.
"""

from __future__ import annotations

import logging
from typing import Annotated

from msgspec import Meta

from core.errors import ErrorCode
from core.events import (
    DIMENSION,
    MEASURE,
    ClientName,
    Count,
    ErrorText,
    Event,
    Milliseconds,
    Nouns,
    OneOf,
    RequestId,
    SessionKey,
    ShortText,
    TenantName,
    ToolName,
    ToolNames,
    Traceback,
    UserAgent,
)
from core.exchange import VersionText

LOGGER = "tools.calls"
OK = "ok"
ARGUMENT_PATH_LENGTH = 128
ArgumentPath = Annotated[str, Meta(max_length=ARGUMENT_PATH_LENGTH), Nouns("argument paths (`locations[1].lat`)")]
"""An argument's path in a call's arguments (`locations[1].lat`), as the error named it, clipped."""
MAX_ARGUMENT_PATHS = 32
"""The most argument paths one `Tool call` line names (the error's first ones)."""
OUTCOMES: tuple[str, ...] = (OK, *(code.value for code in ErrorCode))
"""How a call can end: `ok`, or one of the closed set of error codes."""


class ToolCall(Event, kw_only=True, frozen=True):
    """One tool call: who called which tool, how it ended, what it cost and how long it took.
    Logged at error level when the call ended `internal`; `tenant` is null for a caller with an
    API key."""

    LOGGER = LOGGER
    MESSAGE = "Tool call"

    tool: Annotated[ToolName, DIMENSION]
    """The tool name called, as sent (also when no tool has it)."""
    client: Annotated[ClientName, DIMENSION]
    user_agent: UserAgent | None = None
    transport: Annotated[ShortText, OneOf(("http", "stdio", "exec"))] = ""
    tenant: Annotated[TenantName, DIMENSION] | None = None
    """The signed-in tenant; null for a caller with an API key."""
    backend: Annotated[ShortText, DIMENSION, OneOf(("tomtom-orbis-maps", "tomtom-maps"))] = ""
    outcome: Annotated[ShortText, DIMENSION, OneOf(OUTCOMES)]
    upstream_calls: Annotated[Count, MEASURE] | None = None
    """TomTom requests made, retries included."""
    upstream_rate_limited: Annotated[Count, MEASURE] | None = None
    """TomTom requests answered 429 (rate limited), retries included."""
    upstream_ms: Annotated[Milliseconds, MEASURE] | None = None
    total_ms: Annotated[Milliseconds, MEASURE] | None = None
    bytes: Annotated[Count, MEASURE] | None = None
    """The answer's text, in UTF-8 bytes: the model-context cost."""
    request_id: RequestId | None = None
    session: SessionKey | None = None
    """The client session the call came in on (core.events.SessionKey); absent without one."""
    error: ErrorText | None = None
    """The error's message, as the caller read it (keys masked), for a call that did not end `ok`."""
    protocol_version: VersionText | None = None
    """The MCP protocol revision of the request (`MCP-Protocol-Version` over HTTP, the one agreed
    over stdio); absent when not known."""
    suggested: ToolNames | None = None
    """For a call that did not end `ok`: the tools its error answer pointed to (a retired tool's
    replacements, the tool an unknown name is closest to); the self-correction figures count a
    later successful call of one of them as the correction."""
    argument_paths: Annotated[list[ArgumentPath], Meta(max_length=MAX_ARGUMENT_PATHS)] | None = None
    """For an `invalid_arguments` call: the argument paths its error named (`locations[1]`),
    in the order named."""

    def level(self) -> int:
        return logging.ERROR if self.outcome == ErrorCode.INTERNAL else logging.INFO


class ToolCallFailed(Event, kw_only=True, frozen=True):
    """A call raised what no tool should: answered `internal`; the traceback, keys masked, is here."""

    LOGGER = LOGGER
    MESSAGE = "Tool call failed unexpectedly"
    LEVEL = logging.ERROR

    tool: ToolName
    request_id: RequestId
    exception: Traceback
