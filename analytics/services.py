"""Ingest app-status lines into the database: the one write path, for log files and the live path.

`events_ingest(lines)` parses lines on a helper thread and writes them in batches on the
caller's thread (and in its database connection and transaction). Each batch is one
transaction: it inserts the events not stored yet (by identity, see analytics/parsing.py) and
counts again, from the stored events, the hourly counts of every hour the batch touches. So
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
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import BinaryIO

from django.db import IntegrityError, connection, models, transaction
from django.db.backends.utils import CursorWrapper

from analytics.models import UNKNOWN_KIND, AppStatusEvent, AppStatusHourlyCount
from analytics.parsing import COLUMNS, EventRow, Malformed, parse_line

BATCH_SIZE = 5000
MAX_LINE_BYTES = 1024 * 1024
"""Longer lines are malformed; no app-status line comes near it."""
MAX_REPORTED_MALFORMED = 1000
"""Malformed lines past this many are counted but their line numbers are not kept."""
GZIP_MAGIC = b"\x1f\x8b"
_TOO_LONG = f"longer than {MAX_LINE_BYTES} bytes"
ONE_HOUR = timedelta(hours=1)


@dataclass(slots=True)
class IngestReport:
    """What one ingestion saw. `events = new + duplicates`; every line is exactly one of
    an event, skipped or malformed."""

    lines: int = 0
    events: int = 0
    new: int = 0
    unknown: int = 0
    skipped: int = 0
    malformed: int = 0
    malformed_lines: list[tuple[int, str]] = field(default_factory=list)
    """(line number, reason) of the first MAX_REPORTED_MALFORMED malformed lines."""

    @property
    def duplicates(self) -> int:
        return self.events - self.new

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


def events_ingest(lines: Iterable[bytes], *, batch_size: int = BATCH_SIZE) -> IngestReport:
    """Parse and store app-status lines; see the module docstring for the guarantees."""
    report = IngestReport()
    batches: queue.Queue[list[EventRow] | BaseException | None] = queue.Queue(maxsize=2)
    stop = threading.Event()
    parser = threading.Thread(
        target=_parse_batches, args=(lines, report, batch_size, batches, stop), name="analytics-parse", daemon=True
    )
    parser.start()
    try:
        while (batch := batches.get()) is not None:
            if isinstance(batch, BaseException):
                raise batch
            report.new += _write(batch)
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
    batches: queue.Queue[list[EventRow] | BaseException | None],
    stop: threading.Event,
) -> None:
    """The parser thread: count every line in `report`, hand batches of unique events over.

    A stream that breaks off (a truncated or corrupt gzip file) counts as one malformed line
    where it broke; the lines before it are kept."""

    def hand_over(item: list[EventRow] | BaseException | None) -> bool:
        while not stop.is_set():
            with contextlib.suppress(queue.Full):
                batches.put(item, timeout=0.1)
                return True
        return False

    number = events = unknown = skipped = 0
    batch: dict[bytes, EventRow] = {}
    try:
        try:
            for number, line in enumerate(lines, 1):
                parsed = parse_line(line) if len(line) <= MAX_LINE_BYTES else Malformed(_TOO_LONG)
                if type(parsed) is EventRow:
                    events += 1
                    unknown += parsed.kind == UNKNOWN_KIND
                    batch[parsed.event_id] = parsed
                    if len(batch) >= batch_size:
                        if not hand_over(list(batch.values())):
                            return
                        batch = {}
                elif type(parsed) is Malformed:
                    report.add_malformed(number, parsed.reason)
                else:
                    skipped += 1
        except (EOFError, OSError, zlib.error) as error:
            number += 1
            report.add_malformed(number, f"unreadable, the rest of the input is lost: {error}")
        report.lines, report.events, report.unknown, report.skipped = number, events, unknown, skipped
        if batch and not hand_over(list(batch.values())):
            return
        hand_over(None)
    except BaseException as error:  # handed to the caller's thread, which raises it
        hand_over(error)


def _write(rows: list[EventRow]) -> int:
    """Store one batch (unique identities) in one transaction and recount the hours it touches;
    return how many events were new."""
    with transaction.atomic():
        new = _insert_postgresql(rows) if connection.vendor == "postgresql" else _insert_orm(rows)
        _recount_hours(rows)
    return new


_EVENTS = AppStatusEvent._meta.db_table
_HOURLY = AppStatusHourlyCount._meta.db_table
_STAGE = "analytics_ingest_stage"
_COLUMN_LIST = ", ".join(COLUMNS)
_PG_TYPE_NAMES: dict[type, str] = {  # keyed by any type: get_field may also answer a relation
    models.BinaryField: "bytea",
    models.DateTimeField: "timestamptz",
    models.CharField: "text",
    models.TextField: "text",
    models.BigIntegerField: "int8",
    models.FloatField: "float8",
}
_PG_TYPES = [_PG_TYPE_NAMES[type(AppStatusEvent._meta.get_field(name))] for name in COLUMNS]


def _insert_postgresql(rows: list[EventRow]) -> int:
    """Copy straight into the table when nothing is stored in the batch's time range yet (new
    logs); otherwise, or when a concurrent writer gets in between and the unique constraint
    refuses the copy, copy into a session-private table and insert what is not stored yet."""
    if _nothing_stored_between(min(row.time for row in rows), max(row.time for row in rows)):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                _copy(cursor, _EVENTS, rows)
            return len(rows)
        except IntegrityError:
            pass
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {_STAGE} AS SELECT {_COLUMN_LIST} FROM {_EVENTS} WITH NO DATA"
        )
        cursor.execute(f"TRUNCATE {_STAGE}")
        _copy(cursor, _STAGE, rows)
        # Sorted, so two writers meet the same rows in the same order.
        cursor.execute(
            f"INSERT INTO {_EVENTS} ({_COLUMN_LIST}) SELECT {_COLUMN_LIST} FROM {_STAGE} ORDER BY time, event_id "
            "ON CONFLICT (time, event_id) DO NOTHING"
        )
        return cursor.rowcount


def _nothing_stored_between(first: datetime, last: datetime) -> bool:
    return not AppStatusEvent.objects.filter(time__gte=first, time__lte=last).exists()


def _copy(cursor: CursorWrapper, table: str, rows: list[EventRow]) -> None:
    with (
        connection.wrap_database_errors,
        cursor.cursor.copy(f"COPY {table} ({_COLUMN_LIST}) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.set_types(_PG_TYPES)
        for row in rows:
            copy.write_row(row)


def _insert_orm(rows: list[EventRow]) -> int:
    """Look up which events are stored, insert the others (SQLite serialises writers, so the
    look-up holds until commit)."""
    stored = {
        bytes(event_id)
        for event_id in AppStatusEvent.objects.filter(
            time__gte=min(row.time for row in rows),
            time__lte=max(row.time for row in rows),
            event_id__in=[row.event_id for row in rows],
        ).values_list("event_id", flat=True)
    }
    new = [AppStatusEvent(**row._asdict()) for row in rows if row.event_id not in stored]
    AppStatusEvent.objects.bulk_create(new)
    return len(new)


_HOUR_OF_TIME = {
    "postgresql": "date_trunc('hour', time, 'UTC')",
    # Django stores SQLite datetimes as UTC text, 'YYYY-MM-DD HH:MM:SS[.ffffff]'.
    "sqlite": "strftime('%%Y-%%m-%%d %%H:00:00', time)",
}
_RECOUNT = f"""
INSERT INTO {_HOURLY} (hour, client, tool, kind, count)
SELECT {{hour}}, client, tool, kind, count(*) FROM {_EVENTS}
WHERE {{ranges}}
GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
ON CONFLICT (hour, client, tool, kind) DO UPDATE SET count = excluded.count
WHERE {_HOURLY}.count <> excluded.count
"""


def _recount_hours(rows: list[EventRow]) -> None:
    """Count again, from the stored events, every UTC hour in which a row falls.

    Events are only ever added, so a recount can only raise a count or add a row: setting the
    counts it finds is enough, and doing it again changes nothing. A batch of log lines in time
    order touches a few hours; consecutive hours are read as one range."""
    ranges = _hour_ranges({row.time.replace(minute=0, second=0, microsecond=0) for row in rows})
    adapt = connection.ops.adapt_datetimefield_value
    sql = _RECOUNT.format(
        hour=_HOUR_OF_TIME[connection.vendor],
        ranges=" OR ".join(["(time >= %s AND time < %s)"] * len(ranges)),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [adapt(moment) for start_end in ranges for moment in start_end])


def _hour_ranges(hours: set[datetime]) -> list[tuple[datetime, datetime]]:
    """Hour starts as (start, end) ranges of consecutive hours."""
    ranges: list[tuple[datetime, datetime]] = []
    for hour in sorted(hours):
        if ranges and ranges[-1][1] == hour:
            ranges[-1] = (ranges[-1][0], hour + ONE_HOUR)
        else:
            ranges.append((hour, hour + ONE_HOUR))
    return ranges
