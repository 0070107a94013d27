"""Who still calls counts calls, not inputs: one call that sends two outdated inputs is logged as
two `Outdated call` lines (one per input, core/app_status.py), and counts once.

`OldCallerDaily.calls` counts lines: per input, the calls that sent it (the per-input breakdown).
`OldCallerDaily.tool_calls` counts each call once: a call's lines (the `Outdated call` lines of one
request id, client and tool, logged within `SIBLINGS` of each other) count on the row of the first
of them by input, change and identity, and nowhere else; every other old-caller line is a call of
its own (`rollups.app_status_deltas` counts those, and an outdated line without a request id).

Which line is a call's first is a function of the set of its stored lines, whatever order they
were stored in: a batch moves the call from the row of the stored lines' first to the row of the
first of them all (`call_deltas`). The store reads the stored lines of the batch's calls before it
inserts the batch (`Store.stored_siblings`), its request ids locked on PostgreSQL first
(analytics/ingest/locks.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

OUTDATED = "outdated_call"
SIBLINGS = timedelta(minutes=1)
"""How far apart the lines of one call may be logged (they are logged at once)."""
"""The first key (b"oldc") of the two-key advisory locks on a call's request id."""


def counted_alone(row: Any) -> bool:
    """Whether an old-caller line is a call by itself (not one of several lines of one call)."""
    return row.kind != OUTDATED or not row.request_id


def siblings_of(row: Any) -> tuple:
    return (row.request_id, row.client, row.tool)


def _first(lines: Iterable[Any]) -> Any:
    return min(lines, key=lambda row: (row.input, row.change, bytes(row.event_id)))


def row_key(row: Any) -> tuple:
    """The `OldCallerDaily` row an old-caller line counts on."""
    day = row.time.replace(hour=0, minute=0, second=0, microsecond=0)
    return (day, row.kind, row.client, row.tenant, row.tool, row.replaced_by, row.input, row.change)


def call_deltas(rows: Sequence[Any], stored: Sequence[Any]) -> list[tuple]:
    """The `OldCallerDaily` deltas `(key..., calls 0, tool_calls, first_seen, last_seen)` that count
    each call of the new outdated lines `rows` once, `stored` being the stored lines of their calls."""
    calls: dict[tuple, tuple[list[Any], list[Any]]] = {}
    for row in rows:
        if row.kind == OUTDATED and row.request_id:
            calls.setdefault(siblings_of(row), ([], []))[1].append(row)
    for row in stored:
        if (found := calls.get(siblings_of(row))) is not None:
            found[0].append(row)
    deltas = []
    for old, new in calls.values():
        first = _first([*old, *new])
        before = _first(old) if old else None
        if before is not None and bytes(before.event_id) == bytes(first.event_id):
            continue
        deltas.append((*row_key(first), 0, 1, first.time, first.time))
        if before is not None:
            deltas.append((*row_key(before), 0, -1, before.time, before.time))
    return deltas
