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

The widget funnel (`WIDGET_FUNNEL`, `funnel_deltas`) joins two events: a delivery (`App data`)
and the widget reports that name its request id, from the same client session (and client name).
Its deltas are a function of the new rows and of the *stored* events they join (`stored`: the
store looks them up, in the grace window around the batch, before it inserts the batch); with
none stored, of the rows alone. Reports over a session cap (analytics/ingest/caps.py) count
only as `dropped` (`dropped_deltas`).

The evidence rollups (issue #43) are declared in analytics/ingest/evidence.py and registered here
with the others: the exchange lines' (listed tools, protocol mix, refused requests) and the tool
calls' (protocol mix, unknown names, failing argument paths, and the self-correction join of
analytics/ingest/corrections.py, whose `stored` are the stored calls of the batch's sessions).
Who still calls counts each call once however many outdated inputs it sent
(analytics/ingest/old_calls.py).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import namedtuple
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from typing import Any, Protocol

from django.conf import settings

from analytics.ingest import corrections, evidence, old_calls
from analytics.ingest.cancellations import REPORT_KINDS, implicit_joins
from analytics.ingest.decode import APP_STATUS, EXCHANGE, TOOL_CALLS, Family
from analytics.ingest.rollup_type import Deltas, Rollup
from analytics.models import (
    ERROR_SIZE,
    FUNNEL_FIGURES,
    FUNNEL_STAGES,
    KNOWN_OUTCOMES,
    LATENCY_BOUNDS_MS,
    LATENCY_COLUMNS,
    OLD_CALLER_DIMENSIONS,
    OLD_CALLER_KINDS,
    OTHER_OUTCOMES_COLUMN,
    OUTCOME_COLUMNS,
    OVER_CAP,
    SIZE_BUCKETS,
    UNJOINED,
    AppStatusDailyCount,
    AppStatusHourlyCount,
    OldCallerDaily,
    ToolCallDaily,
    ToolCallHourly,
    WidgetFunnelDaily,
)

CALL_DIMENSIONS = ("client", "tool", "backend", "tenant")
CALL_FIGURES: tuple[str, ...] = (
    "calls",
    "upstream_calls",
    "bytes",
    "total_timed",
    "total_ms_sum",
    "upstream_timed",
    "upstream_ms_sum",
    *LATENCY_COLUMNS["total"],
    *LATENCY_COLUMNS["upstream"],
    *OUTCOME_COLUMNS.values(),
    OTHER_OUTCOMES_COLUMN,
)
"""The figures of a tool-call rollup row, hourly or daily, in the order `tool_call_deltas` gives
them: sums, cumulative latency buckets, then the calls by outcome (`ok`, each error code, and
the other outcomes')."""

APP_DIMENSIONS = ("client", "tool", "kind")
APP_STATUS_HOURLY = Rollup(AppStatusHourlyCount, "hour", APP_DIMENSIONS, ("count",))
APP_STATUS_DAILY = Rollup(AppStatusDailyCount, "day", APP_DIMENSIONS, ("count",), daily_of=APP_STATUS_HOURLY)
OLD_CALLERS = Rollup(
    OldCallerDaily, "day", OLD_CALLER_DIMENSIONS, ("calls", "tool_calls"), ("first_seen",), ("last_seen",)
)
TOOL_CALLS_HOURLY = Rollup(ToolCallHourly, "hour", CALL_DIMENSIONS, CALL_FIGURES)
TOOL_CALLS_DAILY = Rollup(ToolCallDaily, "day", CALL_DIMENSIONS, CALL_FIGURES, daily_of=TOOL_CALLS_HOURLY)
WIDGET_FUNNEL = Rollup(
    WidgetFunnelDaily,
    "day",
    ("client", "tool", "size", "simplified"),
    FUNNEL_FIGURES,
    derived={"size": ("raw_bytes", "delivery"), "simplified": ("original_points",)},
)

ROLLUPS: dict[Family, tuple[Rollup, ...]] = {
    APP_STATUS: (APP_STATUS_HOURLY, APP_STATUS_DAILY, OLD_CALLERS, WIDGET_FUNNEL),
    TOOL_CALLS: (TOOL_CALLS_HOURLY, TOOL_CALLS_DAILY, *evidence.CALL_ROLLUPS),
    EXCHANGE: evidence.EXCHANGE_ROLLUPS,
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
        "CountedAppStatus",
        (
            "time",
            "event_id",
            "client",
            "tool",
            "kind",
            "session",
            "delivery",
            "tenant",
            "replaced_by",
            "input",
            "change",
            "request_id",
            "delivery_request_id",
            "stage",
            "raw_bytes",
            "original_points",
        ),
    ),
    TOOL_CALLS: namedtuple(
        "CountedToolCall",
        (
            "time",
            "client",
            "tool",
            "backend",
            "tenant",
            "outcome",
            "upstream_calls",
            "bytes",
            "upstream_ms",
            "total_ms",
            *evidence.CALL_COUNTED,
        ),
    ),
    EXCHANGE: namedtuple("CountedExchange", evidence.EXCHANGE_COUNTED),
}
"""The columns of a family's events its rollups count: what an insert returns of the rows it stored."""

_HOUR = timedelta(hours=1)
_NEVER = datetime.min.replace(tzinfo=UTC)
_OLD_CALLER_KINDS = frozenset(OLD_CALLER_KINDS)


class Counted(Protocol):
    """An event row as the rollups read it: a decoded row, or the counted columns an insert returned."""

    @property
    def time(self) -> datetime: ...


def deltas(family: Family, rows: Sequence[Any], stored: Sequence[Any] = ()) -> Deltas:
    """What `rows` (events of `family`, all new) add to the family's rollups that are not daily
    sums of another (the store derives those: `by_day`); `stored`: the stored events the new ones
    join (the widget funnel's and the corrections', `stored_links`)."""
    result = _DELTAS[family](rows)
    if family is APP_STATUS:
        result[WIDGET_FUNNEL] = funnel_deltas(rows, stored, grace())
    elif family is TOOL_CALLS:
        result.update(evidence.call_deltas(rows))
        result[evidence.CORRECTIONS] = corrections.correction_deltas(rows, stored, corrections.window())
    return result


def grace() -> timedelta:
    """The widget funnel's window (`ANALYTICS_WIDGET_GRACE_SECONDS`)."""
    return timedelta(seconds=settings.ANALYTICS_WIDGET_GRACE_SECONDS)


FUNNEL_REPORTS = REPORT_KINDS
"""The kinds of a widget's report (core.app_status.REPORTS)."""
_FUNNEL_COLUMN = {name: index for index, name in enumerate(FUNNEL_FIGURES)}
_DELIVERED, _REPORTED = _FUNNEL_COLUMN["delivered"], _FUNNEL_COLUMN["reported"]
_MISMATCHED, _DROPPED = _FUNNEL_COLUMN["mismatched"], _FUNNEL_COLUMN["dropped"]
_STAGE_COLUMN = {stage: _FUNNEL_COLUMN[f"failed_{stage}"] for stage in FUNNEL_STAGES}
_FAILED_OTHER = _FUNNEL_COLUMN["failed_other"]


def size_bucket(raw_bytes: int | None, delivery: str = "") -> str:
    """The answer-size bucket of app data of `raw_bytes` bytes (`SIZE_BUCKETS`), `error` for an
    error result's delivery."""
    if delivery == ERROR_SIZE:
        return ERROR_SIZE
    return "unknown" if raw_bytes is None else _SIZE_NAMES[bisect_right(_SIZE_BOUNDS, raw_bytes)]


_SIZE_BOUNDS = [bound for _name, bound in SIZE_BUCKETS if bound is not None]
_SIZE_NAMES = [name for name, _bound in SIZE_BUCKETS]
_DAY = timedelta(days=1)


def _outcome(row: Any) -> int:
    """The funnel column a report counts in."""
    kind = row.kind
    if kind == "failed":
        return _STAGE_COLUMN.get(row.stage, _FAILED_OTHER)
    return _FUNNEL_COLUMN[kind]


def funnel_deltas(rows: Iterable[Any], stored: Iterable[Any], grace: timedelta) -> list[tuple]:
    """The widget funnel's deltas: each new delivery on its row (its day, client, tool, size
    bucket, simplified or not); each new report on the row of the delivery it joins (the
    delivery whose `request_id` is its `delivery_request_id`, logged within `grace` of it, from
    the same client session and client name: `same_origin`), else on its own unjoined row, and
    counted `mismatched` there too when it names a delivery of another session; `reported` once
    per delivery, with its first joined report. A stored report that joins a new delivery moves
    from its unjoined row to the delivery's; one that names a new delivery of another session is
    counted `mismatched` on its unjoined row.

    A `cancelled` report naming no delivery joins one of its session's by the rule of
    analytics/ingest/cancellations.py: counted unjoined as it comes, then moved by the pairs that
    rule makes of the stored and new events, less those it made of the stored ones alone.

    `stored` holds the stored deliveries the new reports name and the stored reports naming the
    new deliveries or the new reports' deliveries, and the stored events of the new events'
    sessions those pairs depend on (`Store.stored_links`)."""
    rows, stored = list(rows), list(stored)
    figures: dict[tuple, list[int]] = {}
    width = len(FUNNEL_FIGURES)

    def add(key: tuple, column: int, amount: int = 1) -> list[int]:
        if (counts := figures.get(key)) is None:
            counts = figures[key] = [0] * width
        counts[column] += amount
        return counts

    deliveries: dict[str, tuple[datetime, tuple, str, str]] = {}  # request id -> (time, row key, session, client)
    stored_reports = []
    for row in stored:
        if row.kind == "app_data":
            if row.request_id:
                deliveries[row.request_id] = (row.time, _delivery_key(row, _day(row.time)), row.session, row.client)
        elif row.delivery_request_id:
            stored_reports.append(row)
    reported: set[str] = set()  # the deliveries a report joins, stored reports of stored deliveries first
    for report in stored_reports:
        delivery = deliveries.get(report.delivery_request_id)
        if delivery is not None and abs(report.time - delivery[0]) <= grace and same_origin(report, delivery):
            reported.add(report.delivery_request_id)
    fresh: set[str] = set()
    later = []  # reports naming a delivery not seen yet (later in the batch, or nowhere)
    day = end = _NEVER  # the UTC day of the row before, and the next one: logs are in time order
    for row in rows:
        kind = row.kind
        if kind == "app_data":
            moment = row.time
            if not day <= moment < end:
                day = _day(moment)
                end = day + _DAY
            key = _delivery_key(row, day)
            if (counts := figures.get(key)) is None:
                counts = figures[key] = [0] * width
            counts[_DELIVERED] += 1
            if request_id := row.request_id:
                deliveries[request_id] = (moment, key, row.session, row.client)
                fresh.add(request_id)
        elif kind in FUNNEL_REPORTS:
            moment = row.time
            if not day <= moment < end:
                day = _day(moment)
                end = day + _DAY
            column = _STAGE_COLUMN.get(row.stage, _FAILED_OTHER) if kind == "failed" else _FUNNEL_COLUMN[kind]
            request_id = row.delivery_request_id
            if not request_id:
                add((day, row.client, row.tool, UNJOINED, UNJOINED), column)
            elif (delivery := deliveries.get(request_id)) is None:
                later.append(row)
            elif abs(moment - delivery[0]) > grace:
                add((day, row.client, row.tool, UNJOINED, UNJOINED), column)
            elif not same_origin(row, delivery):
                add((day, row.client, row.tool, UNJOINED, UNJOINED), column)[_MISMATCHED] += 1
            elif request_id in reported:
                add(delivery[1], column)
            else:
                add(delivery[1], column)[_REPORTED] += 1
                reported.add(request_id)
    for report in later:
        request_id = report.delivery_request_id
        delivery = deliveries.get(request_id)
        if delivery is None or abs(report.time - delivery[0]) > grace:
            add(_unjoined_key(report), _outcome(report))
            continue
        if not same_origin(report, delivery):
            add(_unjoined_key(report), _outcome(report))[_MISMATCHED] += 1
            continue
        add(delivery[1], _outcome(report))
        if request_id not in reported:
            reported.add(request_id)
            add(delivery[1], _REPORTED)
    for report in stored_reports:
        request_id = report.delivery_request_id
        delivery = deliveries.get(request_id)
        if request_id not in fresh or delivery is None or abs(report.time - delivery[0]) > grace:
            continue
        if not same_origin(report, delivery):  # counted unjoined when it was stored: now a mismatch too
            add(_unjoined_key(report), _MISMATCHED)
            continue
        add(delivery[1], _outcome(report))  # counted unjoined when it was stored: it joins now
        add(_unjoined_key(report), _outcome(report), -1)
        if request_id not in reported:
            reported.add(request_id)
            add(delivery[1], _REPORTED)
    for sign, events in ((1, [*stored, *rows]), (-1, stored)):
        for report, delivery in implicit_joins(events, grace):
            key, column = _delivery_key(delivery, _day(delivery.time)), _outcome(report)
            add(key, column, sign)[_REPORTED] += sign
            add(_unjoined_key(report), column, -sign)
    return [(*key, *counts) for key, counts in figures.items() if any(counts)]


def same_origin(report: Any, delivery: tuple[datetime, tuple, str, str]) -> bool:
    """Whether a report comes from the client session (and client name) its delivery went to: a
    sessionless caller's delivery joins a sessionless report of the same client name."""
    return report.session == delivery[2] and report.client == delivery[3]


def dropped_deltas(rows: Iterable[Any]) -> list[tuple]:
    """The funnel's deltas of reports dropped over a session cap: counted `dropped` on the row of
    their day and client, tool `OVER_CAP`, and nowhere else."""
    counts: dict[tuple, int] = {}
    for row in rows:
        key = (_day(row.time), row.client, OVER_CAP, UNJOINED, UNJOINED)
        counts[key] = counts.get(key, 0) + 1
    width = len(FUNNEL_FIGURES)
    deltas = []
    for key, count in counts.items():
        figures = [0] * width
        figures[_DROPPED] = count
        deltas.append((*key, *figures))
    return deltas


def merged(rollup: Rollup, *parts: Iterable[tuple]) -> list[tuple]:
    """Deltas of one rollup added up per key (a key once per statement: PostgreSQL's `ON CONFLICT
    DO UPDATE` refuses a row twice), without the rows that add nothing. Figures only (no
    earliest or latest)."""
    width = len(rollup.key)
    sums: dict[tuple, list] = {}
    for rows in parts:
        for row in rows:
            key = tuple(row[:width])
            if (figures := sums.get(key)) is None:
                sums[key] = list(row[width:])
            else:
                for index, figure in enumerate(row[width:]):
                    figures[index] += figure
    return [(*key, *figures) for key, figures in sums.items() if any(figures)]


def negated(rows: Iterable[tuple], width: int) -> list[tuple]:
    """Deltas that take `rows` (deltas, their first `width` columns the key) away again."""
    return [(*row[:width], *(-figure for figure in row[width:])) for row in rows]


def _day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _delivery_key(row: Any, day: datetime) -> tuple:
    return (
        day,
        row.client,
        row.tool,
        size_bucket(row.raw_bytes, row.delivery),
        "no" if row.original_points is None else "yes",
    )


def _unjoined_key(row: Any) -> tuple:
    return (_day(row.time), row.client, row.tool, UNJOINED, UNJOINED)


def app_status_deltas(rows: Iterable[Any]) -> Deltas:
    """App-status events per UTC hour, client, tool and kind; and the old callers' calls per UTC
    day, kind, client, tenant, tool and what changed, with when they were first and last seen."""
    counts: dict[tuple, int] = {}
    old_callers: list[Any] = []
    hour = end = _NEVER  # the UTC hour of the row before, and the next one: logs are in time order
    for row in rows:
        moment = row.time
        if not hour <= moment < end:
            hour = moment.replace(minute=0, second=0, microsecond=0)
            end = hour + _HOUR
        key = (hour, row.client, row.tool, row.kind)
        counts[key] = counts.get(key, 0) + 1
        if row.kind in _OLD_CALLER_KINDS:
            old_callers.append(row)
    return {
        APP_STATUS_HOURLY: [(*key, count) for key, count in counts.items()],
        OLD_CALLERS: old_caller_deltas(old_callers),
    }


def old_caller_deltas(rows: Iterable[Any], siblings: Sequence[Any] = ()) -> list[tuple]:
    """The old callers' lines per UTC day, kind, client, tenant, tool and what changed (`calls`),
    the calls they make counted once (`tool_calls`, analytics/ingest/old_calls.py: `siblings` are
    the stored lines of the new lines' calls), and when first and last seen."""
    rows = [row for row in rows if row.kind in _OLD_CALLER_KINDS]
    found: dict[tuple, list] = {}
    lines = [(*old_calls.row_key(row), 1, int(old_calls.counted_alone(row)), row.time, row.time) for row in rows]
    for delta in (*lines, *old_calls.call_deltas(rows, siblings)):
        key = delta[:8]
        if (seen := found.get(key)) is None:
            found[key] = list(delta[8:])
        else:
            seen[0] += delta[8]
            seen[1] += delta[9]
            seen[2], seen[3] = min(seen[2], delta[10]), max(seen[3], delta[11])
    return [(*key, *seen) for key, seen in found.items() if seen[0] or seen[1]]


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
    EXCHANGE: evidence.exchange_deltas,
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
