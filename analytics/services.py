"""Ingest log lines into the database: the one write path, for log files and the live path.

`events_ingest(lines)` parses lines on a helper thread and writes them in batches on the
caller's thread (and in its database connection and transaction). A line is an app-status
event, a tool-call event (analytics/tool_call_parsing.py), skipped or malformed. Each batch is
one transaction: it inserts the events not stored yet (by identity, see analytics/parsing.py)
and counts again, from the stored events, the hourly rollups of every hour the batch touches. So
ingesting the same lines twice, or a file the live path already wrote, adds nothing; the counts
match the events after every commit; and re-running an ingestion that was cut short also
repairs its counts. Memory is bounded by the batch size and the line-length limit, whatever the
input's length: at most four batches exist at once (one being parsed, two queued, one being
written).

On PostgreSQL a batch of new lines is copied straight into the table (binary COPY); a batch
that may hold stored events goes through a temporary table and `INSERT ... ON CONFLICT DO
NOTHING`. On SQLite the ORM inserts the events not stored yet.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import queue
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import BinaryIO

from django.db import IntegrityError, connection, models, transaction
from django.db.backends.utils import CursorWrapper

from analytics.models import (
    LATENCY_BOUNDS_MS,
    UNKNOWN_KIND,
    AppStatusDailyCount,
    AppStatusEvent,
    AppStatusHourlyCount,
    ToolCallDaily,
    ToolCallEvent,
    ToolCallHourly,
    latency_column,
)
from analytics.parsing import COLUMNS, EventRow, Malformed
from analytics.partitions import ensure_partitions, is_partitioned, retention_cutoff
from analytics.tool_call_parsing import TOOL_CALL_COLUMNS, ToolCallRow, parse_log_line

BATCH_SIZE = 10_000
MAX_LINE_BYTES = 1024 * 1024
"""Longer lines are malformed; no app-status line comes near it."""
MAX_REPORTED_MALFORMED = 1000
"""Malformed lines past this many are counted but their line numbers are not kept."""
GZIP_MAGIC = b"\x1f\x8b"
_TOO_LONG = f"longer than {MAX_LINE_BYTES} bytes"
ONE_HOUR = timedelta(hours=1)


@dataclass(slots=True)
class IngestReport:
    """What one ingestion saw. `events = new + duplicates` (app-status events),
    `tool_calls = tool_calls_new + tool_call_duplicates`; every line is exactly one of an
    app-status event, a tool-call event, skipped or malformed.

    The parser thread updates the line counts as it goes (a progress report reads them while
    the ingestion runs); they are final when `events_ingest` returns."""

    lines: int = 0
    events: int = 0
    new: int = 0
    unknown: int = 0
    tool_calls: int = 0
    tool_calls_new: int = 0
    unknown_fields: int = 0
    """Tool-call lines with fields this version does not know (kept with the fields it knows)."""
    expired: int = 0
    """App-status events older than the retention horizon: not stored (analytics/partitions.py)."""
    tool_calls_expired: int = 0
    skipped: int = 0
    malformed: int = 0
    malformed_lines: list[tuple[int, str]] = field(default_factory=list)
    """(line number, reason) of the first MAX_REPORTED_MALFORMED malformed lines."""

    @property
    def duplicates(self) -> int:
        """App-status events already stored."""
        return self.events - self.new - self.expired

    @property
    def tool_call_duplicates(self) -> int:
        return self.tool_calls - self.tool_calls_new - self.tool_calls_expired

    def add_malformed(self, line_number: int, reason: str) -> None:
        self.malformed += 1
        if len(self.malformed_lines) < MAX_REPORTED_MALFORMED:
            self.malformed_lines.append((line_number, reason))


@contextlib.contextmanager
def log_open(path: str) -> Iterator[BinaryIO]:
    """A log file (or stdin for "-") as bytes, decompressed when it starts with gzip's magic bytes.
    Raises OSError when the file cannot be opened; stdin is left open."""
    raw = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115 - closed below
    try:
        # BufferedReader wants a raw stream; typeshed's BinaryIO (stdin's buffer) declares no readinto.
        buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)  # type: ignore[type-var]
        if buffered.peek(len(GZIP_MAGIC)).startswith(GZIP_MAGIC):
            # GzipFile's readline, not a BufferedReader over it: when the stream breaks (garbage or
            # a cut-off member after a complete one), a BufferedReader's read-ahead loses the
            # decoded lines it had gathered; GzipFile's readline hands out every complete line
            # it holds first.
            with gzip.GzipFile(fileobj=buffered, mode="rb") as unzipped:
                yield unzipped  # type: ignore[misc]
        else:
            yield buffered
    finally:
        if path != "-":
            raw.close()


class BrokenLog(OSError):
    """The input broke off (a truncated or corrupt gzip file); says where."""


def log_lines(stream: BinaryIO) -> Iterator[bytes]:
    """The lines of a stream, each cut at MAX_LINE_BYTES + 1 bytes (the rest of a longer line is
    read and dropped, so memory stays bounded and the line still counts once).

    When the stream breaks off, every complete line before the break has been yielded, and
    `BrokenLog` says after how many lines and bytes of (decompressed) log it broke and why."""
    lines = position = 0
    try:
        while line := stream.readline(MAX_LINE_BYTES + 1):
            position += len(line)
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    position += len(rest)
                position += len(rest)
            lines += 1
            yield line
    except (EOFError, zlib.error, OSError) as error:
        if isinstance(error, BrokenLog):
            raise
        raise BrokenLog(
            f"{error or type(error).__name__} (after line {lines:,}, byte {position:,} of the log)"
        ) from None


Progress = Callable[[IngestReport], object]
Batch = tuple[list[EventRow], list[ToolCallRow]]


def events_ingest(
    lines: Iterable[bytes],
    *,
    batch_size: int = BATCH_SIZE,
    progress: Progress | None = None,
    progress_every: float = 5.0,
) -> IngestReport:
    """Parse and store app-status and tool-call lines; see the module docstring for the guarantees.

    `progress`, when given, is called on the caller's thread with the report so far, about every
    `progress_every` seconds (between batches)."""
    report = IngestReport()
    batches: queue.Queue[Batch | BaseException | None] = queue.Queue(maxsize=2)
    stop = threading.Event()
    parser = threading.Thread(
        target=_parse_batches, args=(lines, report, batch_size, batches, stop), name="analytics-parse", daemon=True
    )
    parser.start()
    next_progress = time.monotonic() + progress_every
    horizon = retention_cutoff()
    try:
        while (batch := batches.get()) is not None:
            if isinstance(batch, BaseException):
                raise batch
            rows, calls = batch
            if horizon is not None:
                kept, kept_calls = [r for r in rows if r.time >= horizon], [c for c in calls if c.time >= horizon]
                report.expired += len(rows) - len(kept)
                report.tool_calls_expired += len(calls) - len(kept_calls)
                rows, calls = kept, kept_calls
            new, calls_new = _write(rows, calls)
            report.new += new
            report.tool_calls_new += calls_new
            if progress is not None and time.monotonic() >= next_progress:
                progress(report)
                next_progress = time.monotonic() + progress_every
    finally:
        stop.set()
        with contextlib.suppress(queue.Empty):
            batches.get_nowait()  # unblock a parser waiting to put
        parser.join()
    return report


def _parse_batches(
    lines: Iterable[bytes],
    report: IngestReport,
    batch_size: int,
    batches: queue.Queue[Batch | BaseException | None],
    stop: threading.Event,
) -> None:
    """The parser thread: count every line in `report`, hand batches of unique events over.

    A stream that breaks off (a truncated or corrupt gzip file) counts as one malformed line
    where it broke; the lines before it are kept."""

    def hand_over(item: Batch | BaseException | None) -> bool:
        while not stop.is_set():
            with contextlib.suppress(queue.Full):
                batches.put(item, timeout=0.1)
                return True
        return False

    def counted() -> None:
        report.lines, report.events, report.unknown = number, events, unknown
        report.tool_calls, report.unknown_fields, report.skipped = calls, unknown_fields, skipped

    number = events = unknown = calls = unknown_fields = skipped = 0
    batch: dict[bytes, EventRow] = {}
    call_batch: dict[bytes, ToolCallRow] = {}
    try:
        try:
            for number, line in enumerate(lines, 1):
                parsed = parse_log_line(line) if len(line) <= MAX_LINE_BYTES else Malformed(_TOO_LONG)
                if type(parsed) is ToolCallRow:
                    calls += 1
                    unknown_fields += parsed.unknown_fields
                    call_batch[parsed.event_id] = parsed
                elif type(parsed) is EventRow:
                    events += 1
                    unknown += parsed.kind == UNKNOWN_KIND
                    batch[parsed.event_id] = parsed
                elif type(parsed) is Malformed:
                    report.add_malformed(number, parsed.reason)
                else:
                    skipped += 1
                    continue
                if len(batch) + len(call_batch) >= batch_size:
                    counted()
                    if not hand_over((list(batch.values()), list(call_batch.values()))):
                        return
                    batch, call_batch = {}, {}
        except (EOFError, OSError, zlib.error) as error:
            number += 1
            report.add_malformed(number, f"unreadable, the rest of the input is lost: {error}")
        counted()
        if (batch or call_batch) and not hand_over((list(batch.values()), list(call_batch.values()))):
            return
        hand_over(None)
    except BaseException as error:  # handed to the caller's thread, which raises it
        hand_over(error)


def _write(rows: list[EventRow], calls: list[ToolCallRow]) -> tuple[int, int]:
    """Store one batch (unique identities) in one transaction and recount the hours it touches;
    return how many app-status and tool-call events were new."""
    new = calls_new = 0
    with transaction.atomic():
        if rows:
            new = _insert(APP_STATUS, rows)
            _recount_hours(APP_STATUS, rows)
            _recount_days(_RECOUNT_APP_DAYS, rows)
        if calls:
            calls_new = _insert(TOOL_CALLS, calls)
            _recount_hours(TOOL_CALLS, calls)
            _recount_days(_RECOUNT_DAYS, calls)
    return new, calls_new


_PG_TYPE_NAMES: dict[type, str] = {  # keyed by any type: get_field may also answer a relation
    models.BinaryField: "bytea",
    models.DateTimeField: "timestamptz",
    models.CharField: "text",
    models.TextField: "text",
    models.BigIntegerField: "int8",
    models.FloatField: "float8",
}


@dataclass(frozen=True, slots=True)
class _Events:
    """One kind of raw events: its model, the columns a parsed row fills, and its rollup's recount."""

    model: type[models.Model]
    columns: tuple[str, ...]
    recount: str
    """INSERT ... SELECT ... ON CONFLICT DO UPDATE, with `{hour}` and `{ranges}` to fill in."""

    @property
    def table(self) -> str:
        return self.model._meta.db_table

    @property
    def stage(self) -> str:
        return f"{self.table}_stage"

    @property
    def column_list(self) -> str:
        return ", ".join(self.columns)

    @property
    def pg_types(self) -> list[str]:
        return [_PG_TYPE_NAMES[type(self.model._meta.get_field(name))] for name in self.columns]

    def values(self, row: tuple) -> tuple:
        """The row's column values (a tool-call row carries one more, non-column field)."""
        return row[: len(self.columns)]


_APP_HOURLY = AppStatusHourlyCount._meta.db_table
_CALL_HOURLY = ToolCallHourly._meta.db_table
_CALL_DAILY = ToolCallDaily._meta.db_table
_CALL_KEY = "hour, client, tool, backend, tenant, outcome"
_UPSTREAM_TIMED = "upstream_calls > 0 AND upstream_ms IS NOT NULL"
_CALL_SUMS: dict[str, str] = {
    "calls": "count(*)",
    "upstream_calls": "coalesce(sum(upstream_calls), 0)",
    "bytes": "coalesce(sum(bytes), 0)",
    "total_timed": "count(total_ms)",
    "total_ms_sum": "coalesce(sum(total_ms), 0)",
    "upstream_timed": f"count(*) FILTER (WHERE {_UPSTREAM_TIMED})",
    "upstream_ms_sum": f"coalesce(sum(upstream_ms) FILTER (WHERE {_UPSTREAM_TIMED}), 0)",
    **{latency_column("total", ms): f"count(*) FILTER (WHERE total_ms <= {ms})" for ms in LATENCY_BOUNDS_MS},
    **{
        latency_column("upstream", ms): f"count(*) FILTER (WHERE {_UPSTREAM_TIMED} AND upstream_ms <= {ms})"
        for ms in LATENCY_BOUNDS_MS
    },
}

APP_STATUS = _Events(
    AppStatusEvent,
    COLUMNS,
    f"""
INSERT INTO {_APP_HOURLY} (hour, client, tool, kind, count)
SELECT {{hour}}, client, tool, kind, count(*) FROM {AppStatusEvent._meta.db_table}
WHERE {{ranges}}
GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
ON CONFLICT (hour, client, tool, kind) DO UPDATE SET count = excluded.count
WHERE {_APP_HOURLY}.count <> excluded.count
""",
)
TOOL_CALLS = _Events(
    ToolCallEvent,
    TOOL_CALL_COLUMNS,
    f"""
INSERT INTO {_CALL_HOURLY} ({_CALL_KEY}, {", ".join(_CALL_SUMS)})
SELECT {{hour}}, client, tool, backend, tenant, outcome, {", ".join(_CALL_SUMS.values())}
FROM {ToolCallEvent._meta.db_table}
WHERE {{ranges}}
GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
ON CONFLICT ({_CALL_KEY}) DO UPDATE SET {", ".join(f"{name} = excluded.{name}" for name in _CALL_SUMS)}
WHERE {_CALL_HOURLY}.calls <> excluded.calls
""",
)
"""Events are only ever added, so a group whose figures changed has more calls."""
_CALL_DAY_KEY = "day, client, tool, backend, tenant, outcome"
_RECOUNT_DAYS = f"""
INSERT INTO {_CALL_DAILY} ({_CALL_DAY_KEY}, {", ".join(_CALL_SUMS)})
SELECT {{day}}, client, tool, backend, tenant, outcome, {", ".join(f"sum({name})" for name in _CALL_SUMS)}
FROM {_CALL_HOURLY}
WHERE {{ranges}}
GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
ON CONFLICT ({_CALL_DAY_KEY}) DO UPDATE SET {", ".join(f"{name} = excluded.{name}" for name in _CALL_SUMS)}
WHERE {_CALL_DAILY}.calls <> excluded.calls
"""
_APP_DAILY = AppStatusDailyCount._meta.db_table
_RECOUNT_APP_DAYS = f"""
INSERT INTO {_APP_DAILY} (day, client, tool, kind, count)
SELECT {{day}}, client, tool, kind, sum(count) FROM {_APP_HOURLY}
WHERE {{ranges}}
GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
ON CONFLICT (day, client, tool, kind) DO UPDATE SET count = excluded.count
WHERE {_APP_DAILY}.count <> excluded.count
"""
_DAY_OF_HOUR = {
    "postgresql": "date_trunc('day', hour, 'UTC')",
    "sqlite": "strftime('%%Y-%%m-%%d 00:00:00', hour)",
}


def _insert(events: _Events, rows: list) -> int:
    return _insert_postgresql(events, rows) if connection.vendor == "postgresql" else _insert_orm(events, rows)


def _insert_postgresql(events: _Events, rows: list) -> int:
    """Copy straight into the table when nothing is stored in the batch's time range yet (new
    logs); otherwise, or when a concurrent writer gets in between and the unique constraint
    refuses the copy, copy into a session-private table and insert what is not stored yet."""
    first, last = min(row.time for row in rows), max(row.time for row in rows)
    if is_partitioned(events.table):
        ensure_partitions(events.table, _months_between(first, last))
    if _nothing_stored_between(first, last, model=events.model):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                _copy(cursor, events, events.table, rows)
            return len(rows)
        except IntegrityError:
            pass
    columns = events.column_list
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {events.stage} AS SELECT {columns} FROM {events.table} WITH NO DATA"
        )
        cursor.execute(f"TRUNCATE {events.stage}")
        _copy(cursor, events, events.stage, rows)
        # Sorted, so two writers meet the same rows in the same order.
        cursor.execute(
            f"INSERT INTO {events.table} ({columns}) SELECT {columns} FROM {events.stage} ORDER BY time, event_id "
            "ON CONFLICT (time, event_id) DO NOTHING"
        )
        return cursor.rowcount


def _months_between(first: datetime, last: datetime) -> list[datetime]:
    """A moment in every UTC month from `first`'s to `last`'s."""
    months, moment = [], first.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    while moment <= last:
        months.append(moment)
        moment = (moment + timedelta(days=32)).replace(day=1)
    return months


def _nothing_stored_between(first: datetime, last: datetime, *, model: type[models.Model] = AppStatusEvent) -> bool:
    return not model._default_manager.filter(time__gte=first, time__lte=last).exists()


def _copy(cursor: CursorWrapper, events: _Events, table: str, rows: list) -> None:
    with (
        connection.wrap_database_errors,
        cursor.cursor.copy(f"COPY {table} ({events.column_list}) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.set_types(events.pg_types)
        width = len(events.columns)
        for row in rows:
            copy.write_row(row if len(row) == width else row[:width])


def _insert_orm(events: _Events, rows: list) -> int:
    """Look up which events are stored, insert the others (SQLite serialises writers, so the
    look-up holds until commit)."""
    manager = events.model._default_manager
    stored = {
        bytes(event_id)
        for event_id in manager.filter(
            time__gte=min(row.time for row in rows),
            time__lte=max(row.time for row in rows),
            event_id__in=[row.event_id for row in rows],
        ).values_list("event_id", flat=True)
    }
    new = [
        events.model(**dict(zip(events.columns, events.values(row), strict=True)))
        for row in rows
        if row.event_id not in stored
    ]
    manager.bulk_create(new)
    return len(new)


_HOUR_OF_TIME = {
    "postgresql": "date_trunc('hour', time, 'UTC')",
    # Django stores SQLite datetimes as UTC text, 'YYYY-MM-DD HH:MM:SS[.ffffff]'.
    "sqlite": "strftime('%%Y-%%m-%%d %%H:00:00', time)",
}


def _recount_hours(events: _Events, rows: list) -> None:
    """Count again, from the stored events, every UTC hour in which a row falls.

    Events are only ever added, so a recount can only raise a count or add a row: setting the
    counts it finds is enough, and doing it again changes nothing. A batch of log lines in time
    order touches a few hours; consecutive hours are read as one range."""
    ranges = _hour_ranges({row.time.replace(minute=0, second=0, microsecond=0) for row in rows})
    adapt = connection.ops.adapt_datetimefield_value
    sql = events.recount.format(
        hour=_HOUR_OF_TIME[connection.vendor],
        ranges=" OR ".join(["(time >= %s AND time < %s)"] * len(ranges)),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [adapt(moment) for start_end in ranges for moment in start_end])


def _recount_days(recount: str, rows: list) -> None:
    """Sum again, from an hourly rollup, every UTC day in which a row falls (after its hours were
    recounted): a daily rollup is always the sum of its hours."""
    days = sorted({row.time.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0) for row in rows})
    adapt = connection.ops.adapt_datetimefield_value
    sql = recount.format(
        day=_DAY_OF_HOUR[connection.vendor], ranges=" OR ".join(["(hour >= %s AND hour < %s)"] * len(days))
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [adapt(moment) for day in days for moment in (day, day + timedelta(days=1))])


def _hour_ranges(hours: set[datetime]) -> list[tuple[datetime, datetime]]:
    """Hour starts as (start, end) ranges of consecutive hours."""
    ranges: list[tuple[datetime, datetime]] = []
    for hour in sorted(hours):
        if ranges and ranges[-1][1] == hour:
            ranges[-1] = (ranges[-1][0], hour + ONE_HOUR)
        else:
            ranges.append((hour, hour + ONE_HOUR))
    return ranges
