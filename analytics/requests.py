"""One request, as the drill-down lands on it: the link to its page, and the calls around it.

Every request id an analytics page shows is a link to its request page (`request_url`; in a
template, `{% request_link id at %}` of analytics_tags). The request page shows every stored
event of the call (analytics.selectors.request_events) and, when the call came in a client
session (core.events.SessionKey), the session's calls just before and after it
(`session_neighbours`): what the caller did around the failure. Raw tool calls have no index by
session (it would slow every insert), so the neighbours are looked for in the time index, within
`NEIGHBOUR_WINDOW` of the call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.urls import reverse

from analytics.models import ToolCallEvent
from analytics.tool_stats import CALLER_ERRORS

NEIGHBOURS = 5
"""The most calls of the session shown before the call, and as many after it."""
NEIGHBOUR_WINDOW = timedelta(hours=1)
"""How far before and after the call its session's calls are looked for."""
REQUEST_ID_FIELDS = ("delivery_request_id", "report_request_id")
"""The fields of a request page's events that name another request: shown as links to it."""


def request_url(request_id: str, at: datetime | None = None) -> str:
    """The page of every event of the call `request_id`, looked for around `at` (the time of the
    event that links there); "" without a request id."""
    if not request_id:
        return ""
    url = reverse("analytics:request", args=[request_id[:64]])
    return f"{url}?{urlencode({'at': at.isoformat()})}" if at is not None else url


def error_class(code: str) -> str:
    """`caller` for a code only the caller can fix (its arguments, the tool name, its key:
    analytics.tool_stats.CALLER_ERRORS), `server` for ours or TomTom's; "" for `ok`."""
    if not code or code == "ok":
        return ""
    return "caller" if code in CALLER_ERRORS else "server"


@dataclass(frozen=True, slots=True)
class NeighbourCall:
    time: datetime
    tool: str
    outcome: str
    request_id: str
    total_ms: float | None

    @property
    def link(self) -> str:
        return request_url(self.request_id, self.time)


@dataclass(frozen=True, slots=True)
class Neighbours:
    """The calls of the call's session around it, oldest first; `session` "" when the call came
    in none (a sessionless caller), `call` None when it is not stored."""

    session: str = ""
    call: NeighbourCall | None = None
    before: list[NeighbourCall] = field(default_factory=list)
    after: list[NeighbourCall] = field(default_factory=list)


def session_neighbours(request_id: str, start: datetime, end: datetime, *, limit: int = NEIGHBOURS) -> Neighbours:
    """The session of the call `request_id` (its `Tool call` line logged from `start` to `end`)
    and at most `limit` of the session's calls on each side of it, within `NEIGHBOUR_WINDOW`."""
    columns = ("time", "tool", "outcome", "request_id", "total_ms")
    found = (
        ToolCallEvent.objects.filter(request_id=request_id, time__gte=start, time__lt=end)
        .order_by("time")
        .values(*columns, "session")
        .first()
    )
    if found is None:
        return Neighbours()
    session = found.pop("session")
    call = NeighbourCall(**found)
    if not session:
        return Neighbours(call=call)
    moment = call.time
    same = ToolCallEvent.objects.filter(session=session).exclude(request_id=request_id)
    before = same.filter(time__gte=moment - NEIGHBOUR_WINDOW, time__lte=moment).order_by("-time", "-event_id")
    after = same.filter(time__gte=moment, time__lte=moment + NEIGHBOUR_WINDOW).order_by("time", "event_id")
    earlier = [NeighbourCall(**row) for row in before.values(*columns)[:limit]]
    later = [NeighbourCall(**row) for row in after.values(*columns)[: limit + len(earlier)]]
    # a call logged in the same millisecond is on one side only: before, as the time index orders it
    seen = {(row.time, row.request_id) for row in earlier}
    later = [row for row in later if (row.time, row.request_id) not in seen][:limit]
    return Neighbours(session, call, list(reversed(earlier)), later)
