"""Self-correction: a failing tool call an agent corrected by calling again (`CorrectionDaily`).

A call is **failing** when it ended `invalid_arguments`, `unknown_tool` or `retired`
(analytics.models.CORRECTABLE) and came in on a client session. It is **corrected** when the same
session has a call that ended `ok`, of the same tool or of one of the tools its error answer
pointed to (`suggested`: a retired tool's replacements, the name closest to an unknown one),
logged strictly later and at most `ANALYTICS_CORRECTION_WINDOW_SECONDS` after it. A failing call
counts once in `failures` and at most once in `corrected`, however many successes follow, on the
row of its own day, client, tool and outcome.

Whether a failing call is corrected is a function of the set of stored calls, whatever the order
they were stored in: a batch adds the failures it stored, and the failures (stored or new) that
its new successes correct and that the stored successes did not (`correction_deltas`), as the
widget funnel counts the pairs of the stored and new events less those of the stored alone
(analytics/ingest/cancellations.py). The store reads the stored calls that may change: those of
the batch's sessions within one window before its first call to one after its last
(`Store.stored_calls`).

Concurrent writers (replicas, worker processes) storing calls of one session at once would each
miss the other's: on PostgreSQL each writer first locks every session of its batch
(analytics/ingest/locks.py), then reads.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from analytics.models import CORRECTABLE

OK = "ok"
"""The first key (b"corr") of the two-key advisory locks on client sessions: a space apart from
the one-key locks (analytics/partitions.py's)."""
_FAILING = frozenset(CORRECTABLE)


def window() -> timedelta:
    """The self-correction window (`ANALYTICS_CORRECTION_WINDOW_SECONDS`)."""
    return timedelta(seconds=settings.ANALYTICS_CORRECTION_WINDOW_SECONDS)


def joined(row: Any) -> bool:
    """Whether a call takes part in the join: on a session, ending `ok` or failing."""
    return bool(row.session) and (row.outcome == OK or row.outcome in _FAILING)


def _successes(rows: Iterable[Any]) -> dict[str, tuple[list[datetime], list[str]]]:
    """Per session, the successful calls' times (in order) and tools."""
    found: dict[str, list[tuple[datetime, str]]] = {}
    for row in rows:
        if row.outcome == OK and row.session:
            found.setdefault(row.session, []).append((row.time, row.tool))
    result = {}
    for session, calls in found.items():
        calls.sort()
        result[session] = ([moment for moment, _tool in calls], [tool for _moment, tool in calls])
    return result


def _corrected(failure: Any, successes: dict[str, tuple[list[datetime], list[str]]], within: timedelta) -> bool:
    """Whether one of `successes` corrects `failure` (the rule of the module docstring)."""
    found = successes.get(failure.session)
    if found is None:
        return False
    times, tools = found
    wanted = {failure.tool, *(failure.suggested.split(", ") if failure.suggested else ())}
    start = bisect_right(times, failure.time)  # strictly later
    end = bisect_right(times, failure.time + within)
    return any(tools[index] in wanted for index in range(start, end))


def correction_deltas(rows: Sequence[Any], stored: Sequence[Any], within: timedelta) -> list[tuple]:
    """What new calls `rows` add to `CorrectionDaily`, `stored` being the stored calls of their
    sessions from one window before the first to one after the last: `(day, client, tool,
    outcome, failures, corrected)` rows."""
    figures: dict[tuple, list[int]] = {}
    new_ok, old_ok = _successes(rows), _successes(stored)

    def add(row: Any, failures: int, corrected: int) -> None:
        key = (row.time.replace(hour=0, minute=0, second=0, microsecond=0), row.client, row.tool, row.outcome)
        if (counts := figures.get(key)) is None:
            counts = figures[key] = [0, 0]
        counts[0] += failures
        counts[1] += corrected

    for row in rows:
        if row.session and row.outcome in _FAILING:
            add(row, 1, _corrected(row, old_ok, within) or _corrected(row, new_ok, within))
    if new_ok:
        for row in stored:
            if row.outcome in _FAILING and _corrected(row, new_ok, within) and not _corrected(row, old_ok, within):
                add(row, 0, 1)
    return [(*key, *counts) for key, counts in figures.items() if any(counts)]
