"""One client session's timeline: every stored event logged with its session key (`session`,
core.events.SessionKey: the label of the signed `Mcp-Session-Id`, never the id itself), in time
order: the session's start, its listings, its refused requests (`ExchangeEvent`), its tool calls
(`ToolCallEvent`) and its widgets' events (`AppStatusEvent`). Each table is read through its
index on `session`; the list is bounded (`MAX_EVENTS`, the first in time order) and says how many
events the session has in all.

Only columns are shown, never the stored line (`raw`): a call's error is the message the caller
read, keys already masked by the server."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Model

from analytics.models import AppStatusEvent, ExchangeEvent, ToolCallEvent
from analytics.selectors.evidence import Bounded

MAX_EVENTS = 500
"""The most events a session's timeline lists."""
EXCHANGE_MESSAGES = {
    "session": "Session started",
    "listed": "Tools listed",
    "refused": "MCP request refused",
}
"""What each kind of exchange event is called on the page (its log message)."""
CALL_FIELDS = ("outcome", "error", "suggested", "argument_paths", "total_ms", "bytes", "backend", "protocol_version")
EXCHANGE_FIELDS = {
    "session": ("client_version", "protocol_version", "requested_version", "transport", "apps", "tenant"),
    "listed": ("protocol_version", "backend", "bytes", "tools"),
    "refused": ("method", "code", "error", "protocol_version"),
}
APP_STATUS_FIELDS = ("delivery", "stage", "reason", "error_code", "error", "duration_ms", "delivery_request_id")


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    """One event of a session: what (`message`), its kind or outcome, the tool and the request
    it concerns, and its notable fields as (name, text) pairs."""

    time: datetime
    source: str
    """`exchange`, `call` or `widget`: the table it was stored in."""
    message: str
    kind: str
    tool: str
    client: str
    request_id: str
    fields: tuple[tuple[str, str], ...]


def _shown(name: str, value: Any) -> str:
    """A field's value as text: a count with thousands separators, a code (JSON-RPC's) as is."""
    return f"{value:,}" if isinstance(value, int) and name != "code" else str(value)


def _fields(row: Any, names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    values = ((name, getattr(row, name, None)) for name in names)
    return tuple((name, _shown(name, value)) for name, value in values if value not in (None, ""))


def _call(row: ToolCallEvent) -> TimelineEvent:
    return TimelineEvent(
        row.time, "call", "Tool call", row.outcome, row.tool, row.client, row.request_id, _fields(row, CALL_FIELDS)
    )


def _count(row: Any) -> int:
    """How many tools a listing named (its `tools` column: the list as JSON text)."""
    try:
        listed = json.loads(getattr(row, "tools", "") or "[]")
    except ValueError:
        return 0
    return len(listed) if isinstance(listed, list) else 0


def _exchange(row: Any) -> TimelineEvent:
    message = EXCHANGE_MESSAGES.get(row.kind, "Unknown exchange message")
    fields = _fields(row, EXCHANGE_FIELDS.get(row.kind, ()))
    if row.kind == "listed":  # the tools listed, counted (their names and bytes are the listing's)
        fields = (*((n, v) for n, v in fields if n != "tools"), ("tools", f"{_count(row):,}"))
    return TimelineEvent(row.time, "exchange", message, row.kind, "", row.client, row.request_id or "", fields)


def _widget(row: AppStatusEvent) -> TimelineEvent:
    from core.app_status import BY_KIND

    kind = BY_KIND.get(row.kind)
    message = kind.MESSAGE if kind else "Widget report over a session cap (not counted)"
    if kind is None and row.kind != "dropped":
        message = "Unknown app-status message"
    return TimelineEvent(
        row.time, "widget", message, row.kind, row.tool, row.client, row.request_id, _fields(row, APP_STATUS_FIELDS)
    )


def session_timeline(session: str, *, limit: int = MAX_EVENTS) -> Bounded[TimelineEvent]:
    """The first `limit` stored events of the client session `session`, oldest first (events
    logged in the same millisecond: exchange, then call, then widget), and how many it has."""
    if not session:
        return Bounded([], 0)
    sources: tuple[tuple[type[Model], Callable[[Any], TimelineEvent], int], ...] = (
        (ExchangeEvent, _exchange, 0),
        (ToolCallEvent, _call, 1),
        (AppStatusEvent, _widget, 2),
    )
    found: list[tuple[datetime, int, TimelineEvent]] = []
    total = 0
    for model, shaped, order in sources:
        rows = model._default_manager.filter(session=session)
        total += rows.count()
        events = (shaped(row) for row in rows.order_by("time")[:limit])
        found.extend((event.time, order, event) for event in events)
    found.sort(key=lambda item: (item[0], item[1]))
    return Bounded([event for _, _, event in found[:limit]], total)


def session_of(request_id: str, start: datetime, end: datetime) -> str:
    """The client session of the request `request_id` (logged from `start` to `end`), from its
    tool call, its widget events or its exchange line; "" when none of them has one."""
    models: tuple[type[Model], ...] = (ToolCallEvent, AppStatusEvent, ExchangeEvent)
    for model in models:
        found = (
            model._default_manager.filter(request_id=request_id, time__gte=start, time__lt=end)
            .exclude(session="")
            .values_list("session", flat=True)
            .first()
        )
        if found:
            return str(found)
    return ""
