"""The widget funnel's join of a cancellation that names no delivery (ADR 41, issue #42).

A host that cancels a call sends no result, so the widget's `cancelled` report cannot name the
delivery (`delivery_request_id`), though the server may have delivered (logged `App data`) for the
call already. Such a report joins, by `implicit_joins`, a delivery:

- of its own client session and client name (never across sessions; a sessionless report or
  delivery joins nothing this way), and of the same tool;
- not joined to a report naming it (`delivery_request_id`, same session, within the grace window:
  the funnel's ordinary join), nor to another cancellation;
- logged at or before the report, within the grace window;
- of those, the latest: the cancellations of a session's tool taken in time order, each the latest
  delivery left (a stack).

The pairs are a function of the set of events, whatever order they were stored in: the funnel
counts what a batch changes as the pairs of the stored events and the batch's together less the
pairs of the stored events alone (`rollups.funnel_deltas`). A report's pair depends only on the
events of its session's tool in the grace window before it (the deliveries there, what those
deliveries are joined to, and the cancellations there), so a new event changes the pairs of the
cancellations from one grace window before it to two after it; the store reads the stored events
those depend on (`Store.stored_links`). The limit: two calls of one tool running at once in one
session, both cancelled, may each take the other's delivery; that moves no report to another
session, host or tool, only between the size buckets of that tool's deliveries.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

REPORT_KINDS = frozenset(("drawn", "failed", "cancelled"))
"""The kinds of a widget's report (core.app_status.REPORTS)."""
REACH = 2
"""How many grace windows after a new event (and before it) a cancellation's pair may change:
the store reads the stored events from `REACH + 1` windows before a batch to `REACH` after."""


def implicit_joins(events: Iterable[Any], grace: timedelta) -> list[tuple[Any, Any]]:
    """The `(report, delivery)` pairs of the `cancelled` reports naming no delivery among
    `events` (app-status rows: the deliveries, the reports) and the deliveries they join, by the
    rule of the module docstring."""
    groups: dict[tuple[str, str, str], list[Any]] = {}
    by_request: dict[str, list[Any]] = {}
    named = []
    for row in events:
        if not row.session:
            continue
        kind = row.kind
        if kind == "app_data":
            groups.setdefault((row.session, row.client, row.tool), []).append(row)
            if row.request_id:
                by_request.setdefault(row.request_id, []).append(row)
        elif kind in REPORT_KINDS:
            if row.delivery_request_id:
                named.append(row)
            elif kind == "cancelled":
                groups.setdefault((row.session, row.client, row.tool), []).append(row)
    if not groups:
        return []
    joined: set[int] = set()  # the deliveries a report naming them joins
    for report in named:
        for delivery in by_request.get(report.delivery_request_id, ()):
            if (
                delivery.session == report.session
                and delivery.client == report.client
                and abs(report.time - delivery.time) <= grace
            ):
                joined.add(id(delivery))
    pairs = []
    for rows in groups.values():
        rows.sort(key=_order)
        left: list[Any] = []  # the deliveries no report took yet, the latest last
        for row in rows:
            if row.kind == "app_data":
                if id(row) not in joined:
                    left.append(row)
            elif left and row.time - left[-1].time <= grace:
                pairs.append((row, left.pop()))
            else:
                left.clear()  # the latest is out of the window: so is every one before it
    return pairs


def _order(row: Any) -> tuple:
    """Time order; at one moment the deliveries first (a report joins one logged at or before
    it), by request id; the reports by identity (which takes which changes no figure)."""
    if row.kind == "app_data":
        return (row.time, 0, row.request_id or "", b"")
    return (row.time, 1, "", bytes(row.event_id or b""))
