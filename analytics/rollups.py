"""The rollups a batch of new events adds to: hourly and daily app-status counts and tool-call figures.

A batch's events are counted here, in Python, into one delta per rollup row they fall in (UTC
hour or day, and the row's dimensions), and the deltas are *added* to the rollups
(`INSERT ... ON CONFLICT DO UPDATE SET n = n + excluded.n`) in the transaction that inserts
the events. Only the events the insert actually stored are counted (analytics/services.py), so
a line ingested twice counts once, and a rollup row always equals the count of its stored
events: both change in one transaction, and concurrent writers' additions commute (each waits
for the other's row lock, then adds to the row as committed), which a recount of the hour from
the events its own transaction can see would not guarantee.

Calls of retired names and outdated inputs are counted per UTC day into `OldCallerDaily`, with
the first and last time each was seen: those two are kept as the earliest and the latest of the
rows added, which commutes as the sums do.

Figures are those of `ToolCallRollup` (analytics/models.py): calls, sums, and cumulative
latency histograms (`total_le_<ms>` counts the calls whose total time was at most `<ms>`),
exactly as `count(*) FILTER (WHERE total_ms <= <ms>)` would count them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from typing import NamedTuple, Protocol

from django.db import connection, models

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
from analytics.tool_call_parsing import ToolCallRow

CALL_FIGURES: tuple[str, ...] = (
    "calls", "upstream_calls", "bytes", "total_timed", "total_ms_sum", "upstream_timed", "upstream_ms_sum",
    *LATENCY_COLUMNS["total"], *LATENCY_COLUMNS["upstream"], *OUTCOME_COLUMNS.values(), OTHER_OUTCOMES_COLUMN,
)  # fmt: skip
"""The figures of a tool-call rollup row, hourly or daily, in the order `tool_call_figures` gives
them: sums, cumulative latency buckets, then the calls by outcome (`ok`, each error code of
core/errors.py, and the other outcomes')."""
_OUTCOME_INDEX = {outcome: index for index, outcome in enumerate(KNOWN_OUTCOMES)}
_OTHER_OUTCOME = len(KNOWN_OUTCOMES)
APP_DIMENSIONS = ("client", "tool", "kind")
CALL_DIMENSIONS = ("client", "tool", "backend", "tenant")

AppKey = tuple[datetime, str, str, str]
"""(UTC hour or day, client, tool, kind)."""
OldCallerKey = tuple[datetime, str, str, str, str, str, str]
"""(UTC day, kind, client, tool, replaced_by, input, change)."""
CallKey = tuple[datetime, str, str, str, str]
"""(UTC hour or day, client, tool, backend, tenant)."""

_BUCKETS = len(LATENCY_BOUNDS_MS) + 1  # one more for the calls slower than the last bound
_TOTAL, _UPSTREAM = 7, 7 + _BUCKETS  # where the buckets start in an accumulator
_OUTCOMES = _UPSTREAM + _BUCKETS  # where the calls by outcome start
_WIDTH = _OUTCOMES + len(KNOWN_OUTCOMES) + 1
_HOUR = timedelta(hours=1)
_OLD_CALLER_KINDS = frozenset(OLD_CALLER_KINDS)
_NEVER = datetime.min.replace(tzinfo=UTC)


class AppStatusDeltas(NamedTuple):
    """What a batch of app-status events adds to the rollups."""

    counts: dict[AppKey, int]
    """Events per UTC hour, client, tool and kind."""
    old_callers: dict[OldCallerKey, list]
    """[calls, first seen, last seen] of the old callers per UTC day and what they called."""


class AppStatusRow(Protocol):
    """The columns of an app-status event the rollups count (an `EventRow` has them)."""

    @property
    def time(self) -> datetime: ...
    @property
    def kind(self) -> str: ...
    @property
    def client(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def replaced_by(self) -> str: ...
    @property
    def input(self) -> str: ...
    @property
    def change(self) -> str: ...


def app_status_deltas(rows: Sequence[AppStatusRow]) -> AppStatusDeltas:
    """The rollup deltas of app-status events (rows of `EventRow`, or the counted columns of the
    events an insert stored)."""
    return AppStatusDeltas(app_status_counts(rows), old_caller_counts(rows))


def old_caller_counts(rows: Iterable[AppStatusRow]) -> dict[OldCallerKey, list]:
    """[calls, first seen, last seen] of the old-caller events among `rows` per UTC day, kind,
    client, tool and what changed."""
    counts: dict[OldCallerKey, list] = {}
    for row in rows:
        if row.kind not in _OLD_CALLER_KINDS:
            continue
        moment = row.time
        key = (
            moment.replace(hour=0, minute=0, second=0, microsecond=0),
            row.kind, row.client, row.tool, row.replaced_by, row.input, row.change,
        )  # fmt: skip
        if (seen := counts.get(key)) is None:
            counts[key] = [1, moment, moment]
        else:
            seen[0] += 1
            seen[1], seen[2] = min(seen[1], moment), max(seen[2], moment)
    return counts


def app_status_counts(rows: Iterable[AppStatusRow]) -> dict[AppKey, int]:
    """How many of `rows` fall in each UTC hour, client, tool and kind."""
    counts: dict[AppKey, int] = {}
    hour = end = _NEVER  # the UTC hour of the row before, and the next one: logs are in time order
    for row in rows:
        moment = row.time
        if not hour <= moment < end:
            hour = moment.replace(minute=0, second=0, microsecond=0)
            end = hour + _HOUR
        key = (hour, row.client, row.tool, row.kind)
        counts[key] = counts.get(key, 0) + 1
    return counts


def tool_call_figures(rows: Iterable[ToolCallRow]) -> dict[CallKey, list[float]]:
    """The `CALL_FIGURES` of `rows` per UTC hour, client, tool, backend and tenant (every outcome
    together, the calls by outcome among the figures).

    A call's total time counts when logged; its upstream time when it made at least one
    upstream request and logged the time (as `upstream_timed` is defined)."""
    accumulators: dict[CallKey, list[float]] = {}
    hour = end = _NEVER  # the UTC hour of the row before, and the next one: logs are in time order
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
    return {key: _cumulative(figures) for key, figures in accumulators.items()}


def _cumulative(figures: list[float]) -> list[float]:
    """An accumulator's figures with its buckets (calls per bucket) as cumulative counts at each
    bound (the last bucket, slower than every bound, has no column)."""
    result = figures[:_TOTAL]
    result[4], result[6] = float(result[4]), float(result[6])  # the millisecond sums
    result += accumulate(figures[_TOTAL : _UPSTREAM - 1])
    result += accumulate(figures[_UPSTREAM : _OUTCOMES - 1])
    result += figures[_OUTCOMES:]
    return result


def by_day(deltas: Mapping[tuple, int | list[float]]) -> dict[tuple, list[float]]:
    """Hourly deltas summed per UTC day (a key's first item is the hour): keyed by the day and
    the rest of the key."""
    daily: dict[tuple, list[float]] = {}
    for key, value in deltas.items():
        figures = [value] if isinstance(value, int) else value
        day_key = (key[0].replace(hour=0), *key[1:])
        if (sums := daily.get(day_key)) is None:
            daily[day_key] = list(figures)
        else:
            for index, figure in enumerate(figures):
                sums[index] += figure
    return daily


def add_app_status(deltas: AppStatusDeltas) -> None:
    """Add hourly app-status counts to the hourly and daily rollups, and the old callers to theirs."""
    counts, old_callers = deltas
    if counts:
        _add(AppStatusHourlyCount, "hour", APP_DIMENSIONS, ("count",), [(*k, v) for k, v in counts.items()])
        _add(AppStatusDailyCount, "day", APP_DIMENSIONS, ("count",), [(*k, *v) for k, v in by_day(counts).items()])
    if old_callers:
        _add(OldCallerDaily, "day", OLD_CALLER_DIMENSIONS, ("calls",), [(*k, *v) for k, v in old_callers.items()],
             earliest=("first_seen",), latest=("last_seen",))  # fmt: skip


def add_tool_calls(figures: dict[CallKey, list[float]]) -> None:
    """Add hourly tool-call figures to the hourly rollup, and their sums per day and combination
    to the daily one."""
    if not figures:
        return
    _add(ToolCallHourly, "hour", CALL_DIMENSIONS, CALL_FIGURES, [(*k, *v) for k, v in figures.items()])
    if connection.vendor == "postgresql":
        _add_daily_calls_from_stage()
    else:
        _add(ToolCallDaily, "day", CALL_DIMENSIONS, CALL_FIGURES, [(*k, *v) for k, v in by_day(figures).items()])


def _add_daily_calls_from_stage() -> None:
    """On PostgreSQL: add the hourly deltas `_add` just staged (its temporary table) to the daily
    rollup, summed per day and combination in SQL (what `by_day` computes elsewhere), without
    sending the deltas twice (ADR 18)."""
    daily, stage = ToolCallDaily._meta.db_table, f"{ToolCallHourly._meta.db_table}_delta"
    key = ("day", *CALL_DIMENSIONS)
    groups = ", ".join(str(position) for position in range(1, len(key) + 1))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {daily} ({', '.join((*key, *CALL_FIGURES))}) "
            f"SELECT date_trunc('day', hour, 'UTC'), {', '.join(CALL_DIMENSIONS)}, "
            f"{', '.join(f'sum({name})' for name in CALL_FIGURES)} "
            f"FROM {stage} GROUP BY {groups} ORDER BY {groups} "
            f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET "
            + ", ".join(f"{name} = {daily}.{name} + excluded.{name}" for name in CALL_FIGURES)
        )


_PG_TYPES: dict[type, str] = {
    models.DateTimeField: "timestamptz",
    models.CharField: "text",
    models.TextField: "text",
    models.BigIntegerField: "int8",
    models.IntegerField: "int4",
    models.FloatField: "float8",
}


def _add(
    model: type[models.Model],
    moment: str,
    dimensions: Sequence[str],
    figures: Sequence[str],
    rows: list[tuple],
    *,
    earliest: Sequence[str] = (),
    latest: Sequence[str] = (),
) -> None:
    """Add `rows` (moment, dimensions, figures, then the `earliest` and `latest` columns) to
    `model`'s table: new rows are inserted, existing ones get the figures added, and keep the
    earlier of the `earliest` and the later of the `latest` values. Rows are written in key order,
    so two writers lock them in the same order."""
    table = model._meta.db_table
    key = (moment, *dimensions)
    columns = (*key, *figures, *earliest, *latest)
    least, greatest = ("LEAST", "GREATEST") if connection.vendor == "postgresql" else ("min", "max")
    conflict = f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET " + ", ".join(
        [f"{name} = {table}.{name} + excluded.{name}" for name in figures]
        + [f"{name} = {least}({table}.{name}, excluded.{name})" for name in earliest]
        + [f"{name} = {greatest}({table}.{name}, excluded.{name})" for name in latest]
    )
    rows.sort(key=lambda row: row[: len(key)])
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            stage = f"{table}_delta"
            cursor.execute(  # one round trip
                f"CREATE TEMPORARY TABLE IF NOT EXISTS {stage} AS SELECT {', '.join(columns)} FROM {table} "
                f"WITH NO DATA; TRUNCATE {stage}"
            )
            with (
                connection.wrap_database_errors,
                cursor.cursor.copy(f"COPY {stage} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)") as copy,
            ):
                copy.set_types([_PG_TYPES[type(model._meta.get_field(name))] for name in columns])
                for row in rows:
                    copy.write_row(row)
            cursor.execute(
                f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(columns)} FROM {stage} "
                f"ORDER BY {', '.join(key)} {conflict}"
            )
        else:
            adapt = connection.ops.adapt_datetimefield_value
            cursor.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))}) {conflict}",
                [[adapt(value) if isinstance(value, datetime) else value for value in row] for row in rows],
            )
