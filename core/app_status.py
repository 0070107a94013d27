"""The App status contract: what the server says about app data and widgets, one JSON line each.

Each kind is an event (core/events.py) on the `tools.app_status` logger. The messages are a
contract: `analytics` ingests lines by their exact `message`, so they never change wording.
docs/app-status.md documents every kind and field; tests/core keeps the two in step.

Every line carries `event: "app_status"` and `kind` (the short name of its message), `tool`,
`client`, and when known `user_agent`, `request_id` and `session`, then the fields of its kind.
A field without a value is left out of the line.
"""

from __future__ import annotations

import logging
from typing import Annotated, ClassVar, Literal, TypedDict, get_args

import msgspec

from core.events import (
    DETAIL,
    DIMENSION,
    MEASURE,
    ClientName,
    Count,
    ErrorText,
    Event,
    Metres,
    Milliseconds,
    OneOf,
    RequestId,
    SessionKey,
    ShortText,
    TenantName,
    ToolName,
    ToolNames,
    UserAgent,
)

LOGGER = "tools.app_status"
MARK = ("event", "app_status")
"""The field that marks a line as an app-status event."""
UNKNOWN_KIND = "unknown"
"""The kind readers give a line marked as an app-status event whose message is none of these."""

# The closed sets the widget tools take as inputs too (tools/definitions), declared once.
SourceName = Literal["inline", "data_url", "tool_input", "none"]
"""Where a widget's data came from: the result's `_meta`, data-viz fetching it again, traffic's own input."""
StageName = Literal["init", "result", "decode", "fetch", "render"]
"""Where a widget failed."""
ReasonName = Literal["too_large", "host_dropped", "decode_failed"]
"""Why the data-viz widget asked for its data again."""

# Fields that several kinds carry, declared once.
Delivery = Annotated[ShortText, DIMENSION, OneOf(("inline", "too_large", "error"))]
"""How a result carried its app data; `error`: an error result, which carries none but goes to
the widget all the same (its `_meta` names the tool and the request)."""
Source = Annotated[ShortText, DIMENSION, OneOf(get_args(SourceName))]
Reason = Annotated[ShortText, DIMENSION, OneOf(get_args(ReasonName))]
Stage = Annotated[ShortText, DIMENSION, OneOf(get_args(StageName))]
Bytes = Annotated[Count, MEASURE]
Chars = Annotated[Count, MEASURE]
Duration = Annotated[Milliseconds, MEASURE]
DeliveryRequestId = Annotated[RequestId, DETAIL]
"""The request id of the call whose result the widget handled, as the widget read it from the
result's `_meta` (the join key from a widget's report to the `App data` line of that call)."""


class Caller(TypedDict):
    """The fields every line carries about the call it reports on (`**` them into an event)."""

    tool: str
    client: str
    user_agent: str | None
    request_id: str | None
    session: str | None


class AppStatusEvent(Event, kw_only=True, frozen=True, omit_defaults=True):
    """What every app-status line carries: the call it reports on."""

    LOGGER: ClassVar[str] = LOGGER
    KIND: ClassVar[str]

    tool: Annotated[ToolName, DIMENSION]
    client: Annotated[ClientName, DIMENSION]
    user_agent: UserAgent | None = None
    request_id: RequestId | None = None
    session: SessionKey | None = None
    """The client session of the call (core.events.SessionKey): a report joins a delivery of
    the same session only."""

    @classmethod
    def marks(cls) -> tuple[tuple[str, str], ...]:
        return (MARK, ("kind", cls.KIND))


class Simplification(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True, gc=False):
    """How the lines in app data were reduced to fit: a nested record of `AppData`."""

    original_points: Count | None = None
    points: Count | None = None
    max_error_m: Metres | None = None
    """An upper bound, in metres, of how far any original vertex is from the line drawn."""


class AppData(AppStatusEvent, kw_only=True, frozen=True):
    """A result of a tool called with `show_ui` carried app data (the app-data interceptor); or,
    `delivery` `error`, an error result of a tool a widget draws went to a client offered widgets."""

    KIND = "app_data"
    MESSAGE = "App data"
    delivery: Delivery
    raw_bytes: Bytes | None = None
    encoded_chars: Chars | None = None
    result_chars: Chars | None = None
    simplification: Simplification | None = None


class TooLarge(AppStatusEvent, kw_only=True, frozen=True):
    """A TomTom tool's app data did not fit the result even simplified: its widget cannot draw."""

    KIND = "too_large"
    MESSAGE = "App data too large for the result: the app can't draw"
    LEVEL = logging.WARNING
    raw_bytes: Bytes | None = None
    result_chars: Chars | None = None


class Fetched(AppStatusEvent, kw_only=True, frozen=True):
    """The data-viz widget fetched its data again (`tomtom-get-app-data`)."""

    KIND = "fetched"
    MESSAGE = "App data fetched"
    source: Source
    reason: Reason | None = None
    raw_bytes: Bytes | None = None


class HostDropped(AppStatusEvent, kw_only=True, frozen=True):
    """The data-viz widget fetched its data again because the host dropped `_meta`."""

    KIND = "host_dropped"
    MESSAGE = "App data fetched: host dropped it"
    LEVEL = logging.WARNING
    source: Source
    reason: Reason | None = None


class DecodeFailed(AppStatusEvent, kw_only=True, frozen=True):
    """The data-viz widget fetched its data again because it could not decode it."""

    KIND = "decode_failed"
    MESSAGE = "App data fetched: app failed to decode it"
    LEVEL = logging.WARNING
    source: Source
    reason: Reason | None = None
    error: ErrorText | None = None


class FetchFailed(AppStatusEvent, kw_only=True, frozen=True):
    """`tomtom-get-app-data` refused or failed."""

    KIND = "fetch_failed"
    MESSAGE = "App data fetch failed"
    LEVEL = logging.WARNING
    error_code: Annotated[ShortText, DIMENSION]
    error: ErrorText | None = None


class Drawn(AppStatusEvent, kw_only=True, frozen=True):
    """A widget reported that it drew (`tomtom-report-app-status`)."""

    KIND = "drawn"
    MESSAGE = "App drawn"
    source: Source
    duration_ms: Duration | None = None
    features: Annotated[Count, MEASURE] | None = None
    delivery_request_id: DeliveryRequestId | None = None


class Failed(AppStatusEvent, kw_only=True, frozen=True):
    """A widget reported that it failed (`tomtom-report-app-status`)."""

    KIND = "failed"
    MESSAGE = "App failed"
    LEVEL = logging.WARNING
    source: Source
    stage: Stage
    duration_ms: Duration | None = None
    error: ErrorText | None = None
    delivery_request_id: DeliveryRequestId | None = None


class Cancelled(AppStatusEvent, kw_only=True, frozen=True):
    """A widget reported that its host cancelled the call before a result came
    (`tomtom-report-app-status`): neither drawn nor failed."""

    KIND = "cancelled"
    MESSAGE = "App cancelled"
    source: Source
    duration_ms: Duration | None = None
    reason: Annotated[ShortText, DETAIL] | None = None
    """The host's reason, as it said it (its first `SHORT_TEXT_LENGTH` characters)."""
    delivery_request_id: DeliveryRequestId | None = None


class GovernedCall(AppStatusEvent, kw_only=True, frozen=True):
    """What every governance line carries besides the call: the signed-in tenant (absent for a
    caller with an API key), so the old callers are counted per tenant too."""

    tenant: Annotated[TenantName, DIMENSION] | None = None


class RetiredToolCalled(GovernedCall, kw_only=True, frozen=True):
    """A call to a retired tool name, refused (governance)."""

    KIND = "retired_tool"
    MESSAGE = "Retired tool called"
    LEVEL = logging.WARNING
    replaced_by: Annotated[ToolNames, DIMENSION]


class OutdatedCall(GovernedCall, kw_only=True, frozen=True):
    """A call that still sends an input that changed, refused (governance); one line per input
    that changed."""

    KIND = "outdated_call"
    MESSAGE = "Outdated call: the tool's inputs changed"
    LEVEL = logging.WARNING
    input: Annotated[ShortText, DIMENSION]
    change: Annotated[ShortText, DIMENSION, OneOf(("removed", "renamed", "type_changed", "unit_changed"))]


class DeprecatedToolCalled(GovernedCall, kw_only=True, frozen=True):
    """A call to a deprecated tool, answered with a notice (governance)."""

    KIND = "deprecated_tool"
    MESSAGE = "Deprecated tool called"
    replaced_by: Annotated[ToolNames, DIMENSION]


class AliasCalled(GovernedCall, kw_only=True, frozen=True):
    """A call to an alias, passed on to the tool it names and answered with a notice
    (governance); `replaced_by` is that tool."""

    KIND = "alias_call"
    MESSAGE = "Alias called"
    replaced_by: Annotated[ToolNames, DIMENSION]


APP_STATUS_EVENTS: tuple[type[AppStatusEvent], ...] = (
    AppData,
    TooLarge,
    Fetched,
    HostDropped,
    DecodeFailed,
    FetchFailed,
    Drawn,
    Failed,
    Cancelled,
    RetiredToolCalled,
    OutdatedCall,
    DeprecatedToolCalled,
    AliasCalled,
)
"""Every kind, in the order the docs list them."""
BY_MESSAGE: dict[str, type[AppStatusEvent]] = {event.MESSAGE: event for event in APP_STATUS_EVENTS}
BY_KIND: dict[str, type[AppStatusEvent]] = {event.KIND: event for event in APP_STATUS_EVENTS}

FAILING: tuple[type[AppStatusEvent], ...] = (Failed, TooLarge, HostDropped, DecodeFailed, FetchFailed)
"""The kinds that mean a widget did not draw as it should."""
REPORTS: tuple[type[AppStatusEvent], ...] = (Drawn, Failed, Cancelled)
"""What a widget reports of a result it handled (`tomtom-report-app-status`): one per result."""
OLD_CALLERS: tuple[type[AppStatusEvent], ...] = (RetiredToolCalled, OutdatedCall, DeprecatedToolCalled, AliasCalled)
"""Governance answers, the callers who must migrate: calls to a retired tool name, with inputs
that changed, to a deprecated tool, or through an alias."""
