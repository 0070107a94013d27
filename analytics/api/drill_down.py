"""The drill-down endpoints: the failing calls behind an error figure, grouped by code and message,
and every stored event of one request. (The failing widget events are with the widget endpoints.)"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from analytics.api.base import MAX_EVENTS, Filters
from analytics.requests import error_class
from analytics.selectors import REQUEST_WINDOW, failing_call_groups, failing_calls, request_events, retention_gap

router = Router()


class FailingCall(Schema):
    time: datetime
    client: str
    tool: str
    outcome: str = Field(description="The error code.")
    error: str = Field(description="The error's message as the caller read it (keys masked).")
    request_id: str
    session: str = Field(description="The client session the call came in on; empty without one.")
    whose: str = Field(
        description="`caller` for the caller's mistakes (invalid_arguments, unknown_tool, retired, unsupported, "
        "unauthorized), `server` for the server's and TomTom's errors."
    )
    tenant: str
    backend: str
    total_ms: float | None

    @staticmethod
    def resolve_whose(call: Any) -> str:
        return error_class(call.outcome)


class MessageGroupRow(Schema):
    code: str
    message: str
    count: int
    first: datetime
    last: datetime


class RetentionGapRow(Schema):
    kept_from: datetime = Field(description="Raw events before this were removed by the retention.")
    counted: int = Field(description="Failing calls of the range before then: counted by the figures, not listed.")


class FailingCallPage(Schema):
    count: int = Field(description="Failing calls in the range (with `code`, `message`), all pages.")
    groups: list[MessageGroupRow] = Field(description="By code and message, the largest first (at most 50).")
    group_count: int
    removed_by_retention: RetentionGapRow | None
    calls: list[FailingCall]


@router.get("/failing-calls", response=FailingCallPage, url_name="failing_calls")
def failing_calls_list(
    request: HttpRequest,
    filters: Query[Filters],
    code: str = "",
    message: str | None = None,
    limit: Annotated[int, Field(ge=1, le=MAX_EVENTS)] = 100,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> dict[str, object]:
    """The calls behind an error figure, newest first, and their groups by code and message."""
    query = filters.query()
    calls = failing_calls(query, code=code, message=message)
    groups, group_count = failing_call_groups(query, code=code)
    gap = retention_gap(query, "ToolCall")
    return {
        "count": calls.count(),
        "groups": groups,
        "group_count": group_count,
        "removed_by_retention": gap,
        "calls": list(calls[offset : offset + limit]),
    }


class RequestEventRow(Schema):
    time: datetime
    message: str
    kind: str = Field(description="The app-status kind, or the tool call's outcome.")
    tool: str
    client: str
    fields: dict[str, Any]


@router.get("/requests/{request_id}", response=list[RequestEventRow], url_name="request")
def request_events_list(request: HttpRequest, request_id: str, at: datetime | None = None) -> list[object]:
    """Every stored event of one call (its tool call, app data, widget reports), a day either side of `at`."""
    moment = at or datetime.now(UTC)
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return list(request_events(request_id[:64], moment - REQUEST_WINDOW, moment + REQUEST_WINDOW))
