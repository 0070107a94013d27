"""The rollups: what a batch of new events adds to the tables the reports read.

A `Rollup` is a table of figures per UTC period (hour or day) and dimensions. The functions here
are pure: rows in, deltas out, no database. A delta is a row of the rollup's table, `(moment,
*dimensions, *figures, *earliest, *latest)`; the store *adds* it (`INSERT ... ON CONFLICT DO
UPDATE SET n = n + excluded.n`, the earliest and latest kept as the earlier and the later) in the
transaction that inserts the events (analytics/ingest/store.py). Only the events the insert
actually stored are counted, so a line ingested twice counts once, and a rollup row always
equals the count of its stored events: both change in one transaction, and concurrent writers'
additions commute (each waits for the other's row lock, then adds to the row as committed).

A daily rollup of an hourly one (`daily_of`) holds the sums of its hours: the store derives its
deltas from the hourly ones (`by_day` says what they are; on PostgreSQL they are summed in SQL
from the staged hourly deltas, which are then sent once, not twice).

The dimensions and figures are those the events declare (core/app_status.py, core/calls.py);
analytics/checks.py holds every rollup against the declarations and the migrated tables.
Tool-call figures are those of `ToolCallRollup` (analytics/models.py): calls, sums, and
cumulative latency histograms (`total_le_<ms>` counts the calls whose total time was at most
`<ms>`, exactly as `count(*) FILTER (WHERE total_ms <= <ms>)` would), then the calls by outcome.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import namedtuple
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from typing import Any, Literal, Protocol

from django.db import models

from analytics.ingest.decode import APP_STATUS, TOOL_CALLS, Family
from analytics.models import (
    KNOWN_OUTCOMES,
    LATENCY_BOUNDS_MS,
    LATENCY_COLUMNS,
    OLD_CALLER_DIMENSIONS,
    OLD_CALLER_KINDS,
    OTHER_OUTCOMES_COLUMN,
    OUTCOME_COLUMNS,
    AppStatusDailyCount,
    AppStatusHourlyCount,
    OldCallerDaily,
    ToolCallDaily,
    ToolCallHourly,
)


@dataclass(frozen=True, eq=False)
class Rollup:
    """A table of figures per UTC `period` and `dimensions`, added to by every batch of new events."""

    model: type[models.Model]
    period: Literal["hour", "day"]
    dimensions: tuple[str, ...]
    figures: tuple[str, ...]
    """Added up."""
    earliest: tuple[str, ...] = ()
    """Kept as the earliest value added."""
    latest: tuple[str, ...] = ()
    """Kept as the latest value added."""
    daily_of: Rollup | None = None
    """The hourly rollup this one sums per day."""

    @property
    def table(self) -> str:
        return self.model._meta.db_table

    @property
    def key(self) -> tuple[str, ...]:
        return (self.period, *self.dimensions)

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.key, *self.figures, *self.earliest, *self.latest)


Deltas = dict[Rollup, list[tuple]]
"""What a batch adds to each rollup: its rows, `Rollup.columns` in order."""

CALL_DIMENSIONS = ("client", "tool", "backend", "tenant")
CALL_FIGURES: tuple[str, ...] = (
    "calls", "upstream_calls", "bytes", "total_timed", "total_ms_sum", "upstream_timed", "upstream_ms_sum",
    *LATENCY_COLUMNS["total"], *LATENCY_COLUMNS["upstream"], *OUTCOME_COLUMNS.values(), OTHER_OUTCOMES_COLUMN,
)  # fmt: skip
"""The figures of a tool-call rollup row, hourly or daily, in the order `tool_call_deltas` gives
them: sums, cumulative latency buckets, then the calls by outcome (`ok`, each error code, and
the other outcomes')."""

APP_DIMENSIONS = ("client", "tool", "kind")
APP_STATUS_HOURLY = Rollup(AppStatusHourlyCount, "hour", APP_DIMENSIONS, ("count",))
APP_STATUS_DAILY = Rollup(AppStatusDailyCount, "day", APP_DIMENSIONS, ("count",), daily_of=APP_STATUS_HOURLY)
OLD_CALLERS = Rollup(OldCallerDaily, "day", OLD_CALLER_DIMENSIONS, ("calls",), ("first_seen",), ("last_seen",))
TOOL_CALLS_HOURLY = Rollup(ToolCallHourly, "hour", CALL_DIMENSIONS, CALL_FIGURES)
TOOL_CALLS_DAILY = Rollup(ToolCallDaily, "day", CALL_DIMENSIONS, CALL_FIGURES, daily_of=TOOL_CALLS_HOURLY)

ROLLUPS: dict[Family, tuple[Rollup, ...]] = {
    APP_STATUS: (APP_STATUS_HOURLY, APP_STATUS_DAILY, OLD_CALLERS),
    TOOL_CALLS: (TOOL_CALLS_HOURLY, TOOL_CALLS_DAILY),
}
DAILY: dict[Rollup, tuple[Rollup, ...]] = {
    hourly: tuple(r for rollups in ROLLUPS.values() for r in rollups if r.daily_of is hourly)
    for rollups in ROLLUPS.values()
    for hourly in rollups
    if any(r.daily_of is hourly for r in rollups)
}
"""The daily rollups summed from each hourly one."""
COUNTED: dict[Family, Any] = {
    APP_STATUS: namedtuple(
        "CountedAppStatus", ("time", "client", "tool", "kind", "tenant", "replaced_by", "input", "change")
    ),
    TOOL_CALLS: namedtuple("CountedToolCall", ("time", "client", "tool", "backend", "tenant", "outcome",
                                               "upstream_calls", "bytes", "upstream_ms", "total_ms")),
}  # fmt: skip
"""The columns of a family's events its rollups count: what an insert returns of the rows it stored."""

_HOUR = timedelta(hours=1)
_NEVER = datetime.min.replace(tzinfo=UTC)
_OLD_CALLER_KINDS = frozenset(OLD_CALLER_KINDS)


class Counted(Protocol):
    """An event row as the rollups read it: a decoded row, or the counted columns an insert returned."""

    @property
    def time(self) -> datetime: ...


def deltas(family: Family, rows: Sequence[Any]) -> Deltas:
    """What `rows` (events of `family`, all new) add to the family's rollups that are not daily
    sums of another (the store derives those: `by_day`)."""
    return _DELTAS[family](rows)


def app_status_deltas(rows: Iterable[Any]) -> Deltas:
    """App-status events per UTC hour, client, tool and kind; and the old callers' calls per UTC
    day, kind, client, tenant, tool and what changed, with when they were first and last seen."""
    counts: dict[tuple, int] = {}
    old_callers: dict[tuple, list] = {}
    hour = end = _NEVER  # the UTC hour of the row before, and the next one: logs are in time order
    for row in rows:
        moment = row.time
        if not hour <= moment < end:
            hour = moment.replace(minute=0, second=0, microsecond=0)
            end = hour + _HOUR
        key = (hour, row.client, row.tool, row.kind)
        counts[key] = counts.get(key, 0) + 1
        if row.kind in _OLD_CALLER_KINDS:
            day_key = (
                hour.replace(hour=0), row.kind, row.client, row.tenant, row.tool, row.replaced_by, row.input, row.change
            )
            if (seen := old_callers.get(day_key)) is None:
                old_callers[day_key] = [1, moment, moment]
            else:
                seen[0] += 1
                seen[1], seen[2] = min(seen[1], moment), max(seen[2], moment)
    return {
        APP_STATUS_HOURLY: [(*key, count) for key, count in counts.items()],
        OLD_CALLERS: [(*key, *seen) for key, seen in old_callers.items()],
    }


_OUTCOME_INDEX = {outcome: index for index, outcome in enumerate(KNOWN_OUTCOMES)}
_OTHER_OUTCOME = len(KNOWN_OUTCOMES)
_BUCKETS = len(LATENCY_BOUNDS_MS) + 1  # one more for the calls slower than the last bound
_TOTAL, _UPSTREAM = 7, 7 + _BUCKETS  # where the buckets start in an accumulator
_OUTCOMES = _UPSTREAM + _BUCKETS  # where the calls by outcome start
_WIDTH = _OUTCOMES + len(KNOWN_OUTCOMES) + 1


def tool_call_deltas(rows: Iterable[Any]) -> Deltas:
    """The `CALL_FIGURES` of tool calls per UTC hour, client, tool, backend and tenant (every
    outcome together, the calls by outcome among the figures).

    A call's total time counts when logged; its upstream time when it made at least one upstream
    request and logged the time (as `upstream_timed` is defined)."""
    accumulators: dict[tuple, list[float]] = {}
    hour = end = _NEVER
    for row in rows:
        moment = row.time
        if not hour <= moment < end:
            hour = moment.replace(minute=0, second=0, microsecond=0)
            end = hour + _HOUR
        key = (hour, row.client, row.tool, row.backend, row.tenant)
        figures = accumulators.get(key)
        if figures is None:
            figures = accumulators[key] = [0] * _WIDTH
        figures[0] += 1
        figures[_OUTCOMES + _OUTCOME_INDEX.get(row.outcome, _OTHER_OUTCOME)] += 1
        upstream_calls, upstream_ms, total_ms = row.upstream_calls, row.upstream_ms, row.total_ms
        if upstream_calls is not None:
            figures[1] += upstream_calls
        if row.bytes is not None:
            figures[2] += row.bytes
        if total_ms is not None:
            figures[3] += 1
            figures[4] += total_ms
            figures[_TOTAL + bisect_left(LATENCY_BOUNDS_MS, total_ms)] += 1
        if upstream_calls is not None and upstream_calls > 0 and upstream_ms is not None:
            figures[5] += 1
            figures[6] += upstream_ms
            figures[_UPSTREAM + bisect_left(LATENCY_BOUNDS_MS, upstream_ms)] += 1
    return {TOOL_CALLS_HOURLY: [(*key, *_cumulative(figures)) for key, figures in accumulators.items()]}


def _cumulative(figures: list[float]) -> list[float]:
    """An accumulator's figures with its buckets (calls per bucket) as cumulative counts at each
    bound (the last bucket, slower than every bound, has no column)."""
    result = figures[:_TOTAL]
    result[4], result[6] = float(result[4]), float(result[6])  # the millisecond sums
    result += accumulate(figures[_TOTAL : _UPSTREAM - 1])
    result += accumulate(figures[_UPSTREAM : _OUTCOMES - 1])
    result += figures[_OUTCOMES:]
    return result


_DELTAS: dict[Family, Callable[[Iterable[Any]], Deltas]] = {
    APP_STATUS: app_status_deltas,
    TOOL_CALLS: tool_call_deltas,
}


def by_day(daily: Rollup, hourly_rows: Iterable[tuple]) -> list[tuple]:
    """The deltas of a daily rollup from those of the hourly one it sums: the hourly figures
    added up per UTC day and dimensions."""
    width = len(daily.dimensions) + 1
    sums: dict[tuple, list] = {}
    for row in hourly_rows:
        key = (row[0].replace(hour=0), *row[1:width])
        if (figures := sums.get(key)) is None:
            sums[key] = list(row[width:])
        else:
            for index, figure in enumerate(row[width:]):
                figures[index] += figure
    return [(*key, *figures) for key, figures in sums.items()]
