"""Store: a batch's events not stored yet, and what they add to the rollups, in one transaction.

`Store` owns every write of the ingestion, on PostgreSQL and on SQLite alike, with the same SQL
but for a few words (`Dialect`):

1. `prepare` (on the parsing thread or worker, not the writer's) turns a batch's rows into what
   the database loads: binary COPY data on PostgreSQL, adapted parameter rows on SQLite.
2. `write`, in one transaction per batch, for each family of events:
   - when nothing is stored in the batch's time range yet (new logs), the rows are loaded straight
     into the table; otherwise (or when a concurrent writer's commit makes the unique constraint
     refuse them) into a staging table of the session, then `INSERT ... SELECT ... ORDER BY time,
     event_id ON CONFLICT DO NOTHING RETURNING` the counted columns of exactly the rows stored;
   - the rollup deltas of the rows stored (the batch's own when all were, else recounted from
     what the insert returned: analytics/ingest/rollups.py) are loaded into a staging table and
     added with `INSERT ... SELECT ... ON CONFLICT DO UPDATE`, in key order, so two writers lock
     rows in the same order; a daily rollup of an hourly one is summed from the staged hourly
     deltas in SQL.
   - the widget funnel joins a delivery and the reports that name it, which may be stored in
     different batches, in either order: before inserting a batch, the store looks up the stored
     events its deliveries and reports join, in the grace window around the batch
     (`stored_links`), and the funnel's deltas count them (analytics/ingest/rollups.py). With
     logs ingested in time order the look-up finds only the reports of the last deliveries of
     the batch before; two writers storing a delivery and its report at the same moment (worker
     processes on neighbouring chunks) may each miss the other: the report then counts as
     unjoined and its delivery as never reported.
   - the widget reports it stored count against their client sessions' caps first
     (analytics/ingest/caps.py): a report over a cap is marked `dropped` and counted only so.
   - the self-correction figures join a failing tool call and a later successful one of its
     client session (analytics/ingest/corrections.py): before inserting a batch of calls, the
     store locks the batch's sessions (PostgreSQL) and reads their stored calls within the
     correction window around the batch (`stored_calls`), so concurrent writers count each
     failing call's correction exactly once.
   - who still calls counts a call's outdated inputs as one call: before inserting a batch's
     `Outdated call` lines, the store locks their request ids (PostgreSQL) and reads the stored
     lines of the same calls (`stored_siblings`; analytics/ingest/old_calls.py).

On PostgreSQL the raw event tables are partitioned by month: the partitions a batch needs are
created before its transaction, which then holds no lock a concurrent writer's DDL would wait for
(analytics/partitions.py). Staging tables are temporary: each connection has its own.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from django.db import IntegrityError, connection, models, transaction

from analytics.ingest import corrections, locks, old_calls
from analytics.ingest.cancellations import REACH
from analytics.ingest.caps import over_caps
from analytics.ingest.decode import APP_STATUS, TOOL_CALLS, Family
from analytics.ingest.evidence import CORRECTIONS
from analytics.ingest.rollups import (
    APP_STATUS_HOURLY,
    COUNTED,
    DAILY,
    FUNNEL_REPORTS,
    OLD_CALLERS,
    WIDGET_FUNNEL,
    Deltas,
    Rollup,
    app_status_deltas,
    deltas,
    dropped_deltas,
    funnel_deltas,
    grace,
    merged,
    negated,
    old_caller_deltas,
)
from analytics.models import (
    CORRECTABLE,
    OLD_CALLER_KINDS,
    AppStatusEvent,
    ExchangeEvent,
    IngestionMark,
    ToolCallEvent,
)
from analytics.partitions import ensure_partitions, is_partitioned

FUNNEL_KINDS = frozenset(("app_data", *FUNNEL_REPORTS))
_OLD_CALLER_KINDS = frozenset(OLD_CALLER_KINDS)
EVENT_MODELS: dict[str, type[models.Model]] = {
    "AppStatus": AppStatusEvent,
    "ToolCall": ToolCallEvent,
    "Exchange": ExchangeEvent,
}
"""The table of each family's events (analytics/checks.py holds their columns against the family's)."""
HEARTBEAT_FAMILIES = frozenset(("AppStatus", "ToolCall"))
"""The families with an `IngestionMark` (the freshness line, the heartbeat and its alert). Exchange
lines are logged beside the tool calls of the same sessions, in the same logs, and have none: a
quiet hour without a new session is not a stopped ingestion."""


@dataclass(slots=True)
class Part:
    """One family's events of a batch (unique identities, none before the retention horizon),
    with what the parsing stage prepared: how many, their first and last times, the rollup deltas
    should all of them be new, and the rows as the database loads them."""

    family: Family
    count: int
    first: datetime | None
    last: datetime | None
    deltas: Deltas
    payload: Any
    linked: list[Any] = field(default_factory=list)
    """The batch's deliveries and widget reports (app-status events): what the widget funnel
    joins; or its calls on a session that ended `ok` or failing (tool calls): what the
    self-correction joins; kept until the store knows which stored events they join."""
    old_callers: list[Any] = field(default_factory=list)
    """The batch's old-caller lines (app-status events): the lines of one call count once
    (analytics/ingest/old_calls.py)."""


class Dialect:
    """What PostgreSQL and SQLite spell differently (SQLite's spelling is this class's). Made on
    the writer's thread; `prepare` may run on another (the parser thread), so it holds what it
    formats with instead of reaching for that thread's connection."""

    least, greatest = "min", "max"

    def __init__(self) -> None:
        self.adapt = connection.ops.adapt_datetimefield_value

    def day(self, column: str) -> str:
        """The UTC day of a time column, as the database stores a time (SQLite: `YYYY-MM-DD HH:MM:SS`)."""
        return f"substr({column}, 1, 10) || ' 00:00:00'"

    def stage(self, name: str, like: str, columns: Sequence[str]) -> str:
        return f"CREATE TEMP TABLE IF NOT EXISTS {name} AS SELECT {', '.join(columns)} FROM {like} WHERE false"

    def empty(self, name: str) -> str:
        return f"DELETE FROM {name}"

    def prepare(self, model: type[models.Model], columns: Sequence[str], rows: Iterable[tuple]) -> Any:
        adapt, width = self.adapt, len(columns)
        return [[adapt(v) if isinstance(v, datetime) else v for v in row[:width]] for row in rows]

    def among(self, column: str) -> str:
        """`column` is one of a list of texts given as one parameter (`listed`; request ids, which
        hold no comma)."""
        return f"{column} IN (SELECT value FROM json_each(%s))"

    def listed(self, values: Iterable[str]) -> Any:
        return orjson.dumps(list(values)).decode()

    def load(self, cursor: Any, table: str, columns: Sequence[str], payload: Any) -> None:
        """Load prepared rows into `table`."""
        marks = ", ".join(["%s"] * len(columns))
        cursor.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", payload)

    def returned(self, value: Any) -> datetime:
        """A time an insert returned, as an aware `datetime` (SQLite stores UTC without an offset)."""
        moment = datetime.fromisoformat(value) if isinstance(value, str) else value
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class PostgreSQL(Dialect):
    least, greatest = "LEAST", "GREATEST"

    def __init__(self) -> None:
        super().__init__()
        connection.ensure_connection()
        self.formatter = connection.connection.cursor()
        """A psycopg cursor whose adapters format COPY data; it never executes anything."""

    def day(self, column: str) -> str:
        return f"date_trunc('day', {column}, 'UTC')"

    def stage(self, name: str, like: str, columns: Sequence[str]) -> str:
        return f"CREATE TEMPORARY TABLE IF NOT EXISTS {name} AS SELECT {', '.join(columns)} FROM {like} WITH NO DATA"

    def empty(self, name: str) -> str:
        return f"TRUNCATE {name}"

    def among(self, column: str) -> str:
        return f"{column} = ANY(string_to_array(%s, ','))"

    def listed(self, values: Iterable[str]) -> Any:
        return ",".join(values)  # one text parameter: adapting a list costs per item

    def prepare(self, model: type[models.Model], columns: Sequence[str], rows: Iterable[tuple]) -> bytes:
        """Binary COPY data, formatted with the connection's adapters (the connection is not used)."""
        from psycopg.copy import Copy, FileWriter

        buffer = io.BytesIO()
        with Copy(self.formatter, binary=True, writer=FileWriter(buffer)) as copy:
            copy.set_types(_pg_types(model, columns))
            width = len(columns)
            for row in rows:
                copy.write_row(row if len(row) == width else row[:width])
        return buffer.getvalue()

    def load(self, cursor: Any, table: str, columns: Sequence[str], payload: Any) -> None:
        statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
        with connection.wrap_database_errors, cursor.cursor.copy(statement) as copy:
            copy.write(payload)


_PG_TYPES: dict[type, str] = {  # keyed by any type: get_field may also answer a relation
    models.BinaryField: "bytea",
    models.DateTimeField: "timestamptz",
    models.CharField: "text",
    models.TextField: "text",
    models.BigIntegerField: "int8",
    models.IntegerField: "int4",
    models.FloatField: "float8",
}


def _pg_types(model: type[models.Model], columns: Sequence[str]) -> list[str]:
    return [_PG_TYPES[type(model._meta.get_field(name))] for name in columns]


class Store:
    """The one write path of ingestion (see the module docstring), on the current connection."""

    def __init__(self) -> None:
        self.dialect: Dialect = PostgreSQL() if connection.vendor == "postgresql" else Dialect()

    def part(self, family: Family, rows: list[tuple]) -> Part:
        """A batch's part of `family`'s events: counted for the rollups and prepared to load."""
        times = [row.time for row in rows]  # type: ignore[attr-defined]  # the family's Row
        model = EVENT_MODELS[family.name]
        payload = self.dialect.prepare(model, family.column_names, rows) if rows else None
        first, last = min(times, default=None), max(times, default=None)
        linked = []
        old_callers = []
        if family is APP_STATUS:
            linked = [row for row in rows if row.kind in FUNNEL_KINDS]  # type: ignore[attr-defined]
            old_callers = [row for row in rows if row.kind in _OLD_CALLER_KINDS]  # type: ignore[attr-defined]
        elif family is TOOL_CALLS:
            linked = [row for row in rows if corrections.joined(row)]
        return Part(family, len(rows), first, last, deltas(family, rows), payload, linked, old_callers)

    def write(self, parts: Sequence[Part]) -> list[int]:
        """Store one batch in one transaction; return how many events of each part were new."""
        for part in parts:
            self._ensure_partitions(part)
        new = []
        with transaction.atomic():
            for part in parts:
                links = self.stored_links(part)
                siblings = self.stored_siblings(part)
                stored, returned = self._insert(part)
                if stored:
                    counted = self._counted(part, links, returned)
                    if siblings:  # the lines of one call count once: some of its lines were stored
                        lines = part.old_callers if returned is None else returned
                        counted = {**counted, OLD_CALLERS: old_caller_deltas(lines, siblings)}
                    self._add(counted)
                new.append(stored)
            self._mark(parts)
        return new

    def _counted(self, part: Part, links: list[Any], returned: list | None) -> Deltas:
        """What the part's stored events add to the rollups (`returned`: the counted columns of
        those stored when not all were), less the widget reports over a session cap."""
        if part.family is TOOL_CALLS:
            if returned is not None:
                return deltas(part.family, returned, links)
            if not links:  # nothing stored to join: the batch's own deltas say it all
                return part.deltas
            return {**part.deltas, CORRECTIONS: corrections.correction_deltas(part.linked, links, corrections.window())}
        reports = (part.linked if returned is None else returned) if part.family is APP_STATUS else []
        dropped = over_caps(reports, self.dialect, EVENT_MODELS[part.family.name]._meta.db_table) if reports else []
        if not dropped:
            if returned is not None:
                return deltas(part.family, returned, links)
            if links:  # all new, joining stored events
                return {**part.deltas, WIDGET_FUNNEL: funnel_deltas(part.linked, links, grace())}
            return part.deltas
        gone = {id(row) for row in dropped}
        if returned is not None:
            counted = deltas(part.family, [row for row in returned if id(row) not in gone], links)
        else:  # the batch's own deltas, less the dropped reports' (hourly counts add up)
            hourly, width = part.deltas[APP_STATUS_HOURLY], len(APP_STATUS_HOURLY.key)
            less = negated(app_status_deltas(dropped)[APP_STATUS_HOURLY], width)
            admitted = [row for row in part.linked if id(row) not in gone]
            counted = {
                **part.deltas,
                APP_STATUS_HOURLY: merged(APP_STATUS_HOURLY, hourly, less),
                WIDGET_FUNNEL: funnel_deltas(admitted, links, grace()),
            }
        counted[WIDGET_FUNNEL] = merged(WIDGET_FUNNEL, counted[WIDGET_FUNNEL], dropped_deltas(dropped))
        return counted

    def anything_stored(self, model: type[models.Model], first: datetime, last: datetime) -> bool:
        """Whether any event of `model` is stored from `first` to `last` (then a batch is loaded
        through the staging table); another writer may store some right after this says no."""
        return model._default_manager.filter(time__gte=first, time__lte=last).exists()

    def stored_links(self, part: Part) -> list[Any]:
        """The stored events the part's deliveries and reports join (`funnel_deltas`): within
        the grace window of the batch, the deliveries its reports name, and the reports naming
        its deliveries or its reports' deliveries; and, for the cancellations naming no delivery
        (analytics/ingest/cancellations.py), the stored deliveries and such cancellations of the
        part's client sessions from `REACH` grace windows before the batch to `REACH` after, and
        the reports naming those deliveries. Read before the part is inserted. For tool calls, the
        stored calls the self-correction joins them to (`stored_calls`)."""
        if part.family is TOOL_CALLS:
            return self.stored_calls(part)
        if not part.linked:
            return []
        assert part.first is not None and part.last is not None
        delivered = {row.request_id for row in part.linked if row.kind == "app_data" and row.request_id}
        named = {row.delivery_request_id for row in part.linked if row.kind != "app_data" and row.delivery_request_id}
        sessions = {row.session for row in part.linked if row.session}
        if not delivered and not named and not sessions:
            return []
        Counted, table = COUNTED[part.family], EVENT_MODELS[part.family.name]._meta.db_table
        window, dialect, adapt = grace(), self.dialect, self.dialect.adapt
        kinds = ", ".join(f"'{kind}'" for kind in sorted(FUNNEL_REPORTS))
        first, last = part.first - REACH * window, part.last + REACH * window
        in_sessions = f"time >= %s AND time <= %s AND {dialect.among('session')}"
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {', '.join(Counted._fields)} FROM {table} WHERE (time >= %s AND time <= %s AND ("
                f"(kind = 'app_data' AND {dialect.among('request_id')}) "
                f"OR (kind IN ({kinds}) AND {dialect.among('delivery_request_id')}))) "
                f"OR ({in_sessions} AND (kind = 'app_data' "
                f"OR (kind = 'cancelled' AND coalesce(delivery_request_id, '') = ''))) "
                f"OR (time >= %s AND time <= %s AND kind IN ({kinds}) AND delivery_request_id IN ("
                f"SELECT request_id FROM {table} WHERE kind = 'app_data' AND {in_sessions}))",
                [
                    adapt(part.first - window),
                    adapt(part.last + window),
                    dialect.listed(named),
                    dialect.listed(delivered | named),
                    adapt(first),
                    adapt(last),
                    dialect.listed(sorted(sessions)),
                    adapt(first - window),
                    adapt(last + window),
                    adapt(first),
                    adapt(last),
                    dialect.listed(sorted(sessions)),
                ],
            )
            found = cursor.fetchall()
        return [Counted._make((dialect.returned(row[0]), *row[1:])) for row in found]

    def stored_calls(self, part: Part) -> list[Any]:
        """The stored calls of the part's client sessions that ended `ok` or failing, from one
        correction window before its first call to one after its last, once the sessions are
        locked against concurrent writers (analytics/ingest/corrections.py)."""
        sessions = sorted({row.session for row in part.linked})
        if not sessions:
            return []
        assert part.first is not None and part.last is not None
        locks.lock(locks.SESSIONS, sessions)
        window, dialect = corrections.window(), self.dialect
        Counted, table = COUNTED[part.family], EVENT_MODELS[part.family.name]._meta.db_table
        outcomes = ", ".join(f"'{outcome}'" for outcome in (corrections.OK, *CORRECTABLE))
        postgresql = isinstance(dialect, PostgreSQL)  # a session may hold a comma: a list, not `among`
        among = "session = ANY(%s::text[])" if postgresql else "session IN (SELECT value FROM json_each(%s))"
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {', '.join(Counted._fields)} FROM {table} WHERE time >= %s AND time <= %s "
                f"AND {among} AND outcome IN ({outcomes})",
                [
                    dialect.adapt(part.first - window),
                    dialect.adapt(part.last + window),
                    sessions if postgresql else orjson.dumps(sessions).decode(),
                ],
            )
            found = cursor.fetchall()
        return [Counted._make((dialect.returned(row[0]), *row[1:])) for row in found]

    def stored_siblings(self, part: Part) -> list[Any]:
        """The stored `Outdated call` lines of the part's calls that sent outdated inputs (the
        same request id, within `old_calls.SIBLINGS` of the batch), once their request ids are
        locked against concurrent writers (analytics/ingest/old_calls.py)."""
        ids = sorted({row.request_id for row in part.old_callers if not old_calls.counted_alone(row)})
        if not ids:
            return []
        assert part.first is not None and part.last is not None
        locks.lock(locks.CALLS, ids)
        dialect, Counted = self.dialect, COUNTED[part.family]
        postgresql = isinstance(dialect, PostgreSQL)
        among = "request_id = ANY(%s::text[])" if postgresql else "request_id IN (SELECT value FROM json_each(%s))"
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {', '.join(Counted._fields)} FROM {EVENT_MODELS[part.family.name]._meta.db_table} "
                f"WHERE kind = %s AND time >= %s AND time <= %s AND {among}",
                [
                    old_calls.OUTDATED,
                    dialect.adapt(part.first - old_calls.SIBLINGS),
                    dialect.adapt(part.last + old_calls.SIBLINGS),
                    ids if postgresql else orjson.dumps(ids).decode(),
                ],
            )
            found = cursor.fetchall()
        return [Counted._make((dialect.returned(row[0]), *row[1:])) for row in found]

    def _insert(self, part: Part) -> tuple[int, list | None]:
        """Insert the part's events not stored yet; return how many, and the counted columns of
        the rows inserted when not all of them were (None when all were)."""
        if not part.count:
            return 0, None
        family = part.family
        model = EVENT_MODELS[family.name]
        table, columns = model._meta.db_table, family.column_names
        assert part.first is not None and part.last is not None
        if not self.anything_stored(model, part.first, part.last):
            try:
                with transaction.atomic(), connection.cursor() as cursor:
                    self.dialect.load(cursor, table, columns, part.payload)
                return part.count, None
            except IntegrityError:  # a concurrent writer stored some of them first
                pass
        stage, listed, Counted = f"{table}_stage", ", ".join(columns), COUNTED[family]
        with connection.cursor() as cursor:
            cursor.execute(self.dialect.stage(stage, table, columns))
            cursor.execute(self.dialect.empty(stage))
            self.dialect.load(cursor, stage, columns, part.payload)
            cursor.execute(
                f"INSERT INTO {table} ({listed}) SELECT {listed} FROM {stage} WHERE true ORDER BY time, event_id "
                f"ON CONFLICT (time, event_id) DO NOTHING RETURNING {', '.join(Counted._fields)}"
            )
            returned = cursor.fetchall()
        if len(returned) == part.count:
            return part.count, None
        return len(returned), [Counted._make((self.dialect.returned(row[0]), *row[1:])) for row in returned]

    def _add(self, batch_deltas: Deltas) -> None:
        for rollup, rows in batch_deltas.items():
            if rows:
                self._add_rows(rollup, rows)
                for daily in DAILY.get(rollup, ()):
                    self._add_daily(daily)

    def _add_rows(self, rollup: Rollup, rows: list[tuple]) -> None:
        """Stage `rows` and add them to the rollup's table, in key order."""
        table, columns = rollup.table, rollup.columns
        stage = f"{table}_delta"
        rows = sorted(rows, key=lambda row: row[: len(rollup.key)])
        with connection.cursor() as cursor:
            cursor.execute(self.dialect.stage(stage, table, columns))
            cursor.execute(self.dialect.empty(stage))
            self.dialect.load(cursor, stage, columns, self.dialect.prepare(rollup.model, columns, rows))
            listed = ", ".join(columns)
            cursor.execute(
                f"INSERT INTO {table} ({listed}) SELECT {listed} FROM {stage} WHERE true "
                f"ORDER BY {', '.join(rollup.key)} {self._on_conflict(rollup)}"
            )

    def _add_daily(self, daily: Rollup) -> None:
        """Add a daily rollup's deltas, summed per day in SQL from the hourly deltas just staged."""
        assert daily.daily_of is not None
        stage = f"{daily.daily_of.table}_delta"
        dimensions = ", ".join(daily.dimensions)
        groups = ", ".join(str(position) for position in range(1, len(daily.key) + 1))
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {daily.table} ({', '.join(daily.columns)}) "
                f"SELECT {self.dialect.day(daily.daily_of.period)}, {dimensions}, "
                f"{', '.join(f'sum({name})' for name in daily.figures)} "
                f"FROM {stage} WHERE true GROUP BY {groups} ORDER BY {groups} {self._on_conflict(daily)}"
            )

    def _mark(self, parts: Sequence[Part]) -> None:
        """Move each family's `IngestionMark` forward: stored now, reaching at least the batch's
        newest event (every event of the batch is stored once this transaction commits, whether
        it was new or not). Last, after every rollup row: writers lock the marks in one order too."""
        now, adapt = datetime.now(UTC), self.dialect.adapt
        rows = sorted(
            (part.family.name, part.last)
            for part in parts
            if part.count and part.last is not None and part.family.name in HEARTBEAT_FAMILIES
        )
        if not rows:
            return
        table, greatest = IngestionMark._meta.db_table, self.dialect.greatest
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {table} (family, data_up_to, last_ingest) VALUES (%s, %s, %s) "
                f"ON CONFLICT (family) DO UPDATE SET "
                f"data_up_to = {greatest}(coalesce({table}.data_up_to, excluded.data_up_to), excluded.data_up_to), "
                f"last_ingest = {greatest}(coalesce({table}.last_ingest, excluded.last_ingest), excluded.last_ingest)",
                [(family, adapt(last), adapt(now)) for family, last in rows],
            )

    def _on_conflict(self, rollup: Rollup) -> str:
        table = rollup.table
        least, greatest = self.dialect.least, self.dialect.greatest
        return f"ON CONFLICT ({', '.join(rollup.key)}) DO UPDATE SET " + ", ".join(
            [f"{name} = {table}.{name} + excluded.{name}" for name in rollup.figures]
            + [f"{name} = {least}({table}.{name}, excluded.{name})" for name in rollup.earliest]
            + [f"{name} = {greatest}({table}.{name}, excluded.{name})" for name in rollup.latest]
        )

    def _ensure_partitions(self, part: Part) -> None:
        table = EVENT_MODELS[part.family.name]._meta.db_table
        if part.count and is_partitioned(table):
            assert part.first is not None and part.last is not None
            ensure_partitions(table, _months_between(part.first, part.last))


def _months_between(first: datetime, last: datetime) -> list[datetime]:
    """A moment in every UTC month from `first`'s to `last`'s."""
    months, moment = [], first.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    while moment <= last:
        months.append(moment)
        moment = (moment + timedelta(days=32)).replace(day=1)
    return months
