"""Ingest log lines into the database: the one write path, for log files and the live path.

`events_ingest(lines)` parses lines on a helper thread and writes them in batches on the
caller's thread (and in its database connection and transaction). A line is an app-status
event, a tool-call event (analytics/tool_call_parsing.py), skipped or malformed. Each batch is
one transaction: it inserts the events not stored yet (by identity, see analytics/parsing.py)
and adds the events it inserted, and only those, to the hourly and daily rollups
(analytics/rollups.py). So ingesting the same lines twice, or a file the live path already
wrote, adds nothing, and the rollups match the events after every commit, with concurrent
writers too. Memory is bounded by the batch size, whatever the input's length: a batch ends at
`batch_size` events or `BATCH_BYTES` of lines, whichever comes first, and at most four batches
exist at once (one being parsed, two queued, one being written), or with worker processes, two
chunks per worker.

The parser thread does all the per-line work: it decodes the lines (analytics/server_lines.py),
counts the batch into rollup deltas and, on PostgreSQL, formats the rows as binary COPY data.
The writer sends that data as it is: a batch of new lines is copied straight into the table; a
batch that may hold stored events goes through a temporary table and `INSERT ... ON CONFLICT DO
NOTHING RETURNING`, and only the rows it returns are counted. On SQLite the ORM inserts the events not stored yet.
ADR 15 has the measurements behind this split. With worker processes (`workers`, PostgreSQL,
outside a transaction) each worker parses and writes its own batches in its own connection,
and this process only reads and counts (ADR 17).
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import io
import itertools
import multiprocessing
import queue
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, Protocol

from django.db import IntegrityError, OperationalError, connection, models, transaction
from django.db.backends.utils import CursorWrapper
from psycopg.copy import Copy, FileWriter
from psycopg.errors import DeadlockDetected

from analytics import ingest_workers
from analytics.models import UNKNOWN_KIND, AppStatusEvent, ToolCallEvent
from analytics.parsing import COLUMNS, EventRow, Malformed
from analytics.partitions import ensure_partitions, is_partitioned, retention_cutoff
from analytics.rollups import add_app_status, add_tool_calls, app_status_deltas, tool_call_figures
from analytics.server_lines import parse_log_line
from analytics.tool_call_parsing import TOOL_CALL_COLUMNS, ToolCallRow

BATCH_SIZE = 25_000
"""Events per batch (one transaction). Each batch has fixed costs in PostgreSQL (the commit's WAL
flush, the partition and overlap checks, its staging tables) and adds to the daily rollup rows
again: in one process, batches of 30,000 spent about a fifth less time writing than batches of
10,000 (ADR 20)."""
BATCH_BYTES = 16 * 1024 * 1024
"""A batch, or a worker's chunk, also ends once its lines add up to this many bytes: long lines
(up to MAX_LINE_BYTES each) cannot make a batch of `batch_size` lines large. The server's lines
are about 500 bytes, so theirs end at `batch_size` (about 12 MB)."""
MAX_LINE_BYTES = 1024 * 1024
READ_BYTES = 256 * 1024
"""The most a read of the (decompressed) input hands out at once."""
"""Longer lines are malformed; no app-status line comes near it."""
MAX_REPORTED_MALFORMED = 1000
"""Malformed lines past this many are counted but their line numbers are not kept."""
GZIP_MAGIC = b"\x1f\x8b"
_TOO_LONG = f"longer than {MAX_LINE_BYTES} bytes"


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
def log_open(path: str) -> Iterator[io.BufferedIOBase]:
    """A log file (or stdin for "-") as bytes, decompressed when it starts with gzip's magic bytes.
    Raises OSError when the file cannot be opened; stdin is left open."""
    raw = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115 - closed below
    try:
        # BufferedReader wants a raw stream; typeshed's BinaryIO (stdin's buffer) declares no readinto.
        buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)  # type: ignore[type-var]
        if buffered.peek(len(GZIP_MAGIC)).startswith(GZIP_MAGIC):
            # The GzipFile itself, not a BufferedReader over it: when the stream breaks (garbage
            # or a cut-off member after a complete one), a BufferedReader's read-ahead loses the
            # decoded lines it had gathered; GzipFile's read1 hands out what it decoded first.
            with gzip.GzipFile(fileobj=buffered, mode="rb") as unzipped:
                yield unzipped
        else:
            yield buffered
    finally:
        if path != "-":
            raw.close()


class Readable(Protocol):
    """A binary stream `log_lines` can read: a file, stdin's buffer, a GzipFile, BytesIO."""

    def read1(self, size: int = -1, /) -> bytes: ...


class BrokenLog(OSError):
    """The input broke off (a truncated or corrupt gzip file); says where."""


def log_lines(stream: Readable) -> Iterator[bytes]:
    """The lines of a stream, without their newline, each cut at MAX_LINE_BYTES + 1 bytes (the
    rest of a longer line is read and dropped, so memory stays bounded and the line still counts
    once). A last line without a newline is a line too.

    The stream is read in blocks of at most READ_BYTES with `read1`, which hands out what one
    read of the underlying stream decoded: when the stream breaks off, every complete line
    before the break has been yielded, and `BrokenLog` says after how many lines and bytes of
    (decompressed) log it broke and why."""
    lines = position = unended = 0  # unended: bytes read since the last newline
    pending = b""  # the start of the line not ended yet, at most MAX_LINE_BYTES + 1 bytes of it
    try:
        while block := stream.read1(READ_BYTES):
            position += len(block)
            *complete, rest = block.split(b"\n")
            if complete:
                if pending:
                    complete[0] = pending + complete[0]
                lines += len(complete)
                for line in complete:
                    yield line if len(line) <= MAX_LINE_BYTES else line[: MAX_LINE_BYTES + 1]
                pending, unended = b"", 0
            unended += len(rest)
            if len(pending) <= MAX_LINE_BYTES:
                pending = (pending + rest)[: MAX_LINE_BYTES + 1]
        if pending:
            lines += 1
            yield pending
    except (EOFError, zlib.error, OSError) as error:
        if isinstance(error, BrokenLog):
            raise
        raise BrokenLog(
            f"{error or type(error).__name__} (after line {lines:,}, byte {position - unended:,} of the log)"
        ) from None


Progress = Callable[[IngestReport], object]
Encode = Callable[["_Events", list], bytes]


@dataclass(slots=True)
class _Batch:
    """One transaction's events of one kind (unique identities, none before the retention
    horizon), with what the parser prepared for the writer: how many, their first and last
    times, the rollup deltas of the rows should all of them be new, and on PostgreSQL the rows as
    binary COPY data. `rows` are the parsed rows themselves (None when a worker process parsed
    them: the PostgreSQL writer does not need them)."""

    count: int
    first: datetime | None
    last: datetime | None
    deltas: Any
    """`AppStatusDeltas` for app-status events, the figures per hour and key for tool calls."""
    copy_data: bytes | None
    rows: list | None

    @classmethod
    def of(cls, rows: list, deltas: Any, copy_data: bytes | None) -> _Batch:
        times = [row.time for row in rows]
        return cls(len(rows), min(times, default=None), max(times, default=None), deltas, copy_data, rows)


Batch = tuple[_Batch, _Batch]
"""App-status events, tool calls."""


class Handover(Protocol):
    """Where the parser puts batches (then None at the end, or the error that stopped it): a queue."""

    def put(self, item: Batch | BaseException | None, timeout: float | None = None) -> None: ...


def events_ingest(
    lines: Iterable[bytes],
    *,
    batch_size: int = BATCH_SIZE,
    progress: Progress | None = None,
    progress_every: float = 5.0,
    workers: int = 0,
    batch_bytes: int = BATCH_BYTES,
) -> IngestReport:
    """Parse and store app-status and tool-call lines; see the module docstring for the guarantees.

    `progress`, when given, is called on the caller's thread with the report so far, about every
    `progress_every` seconds (between batches). A batch ends at `batch_size` events or with the
    line that brings its lines to `batch_bytes` bytes. With `workers` > 0, on PostgreSQL and
    outside a transaction, that many worker processes parse and store the batches (see
    `_ingest_in_workers`); the result is the same. Inside a transaction every batch is written
    in it, by this process."""
    if workers > 0 and connection.vendor == "postgresql" and not connection.in_atomic_block:
        return _ingest_in_workers(lines, batch_size, progress, progress_every, workers, batch_bytes=batch_bytes)
    report = IngestReport()
    batches: queue.Queue[Batch | BaseException | None] = queue.Queue(maxsize=2)
    stop = threading.Event()
    parser = threading.Thread(
        target=_parse_batches,
        args=(lines, report, batch_size, batches, stop, retention_cutoff(), _copy_encoder(), batch_bytes),
        name="analytics-parse",
        daemon=True,
    )
    parser.start()
    store = _Store(report, progress, progress_every)
    try:
        while (batch := batches.get()) is not None:
            if isinstance(batch, BaseException):
                raise batch
            store(*batch)
    finally:
        stop.set()
        with contextlib.suppress(queue.Empty):
            batches.get_nowait()  # unblock a parser waiting to put
        parser.join()
    return report


def _copy_encoder() -> Encode | None:
    """On PostgreSQL, a function turning rows into binary COPY data, for the parser thread to
    call (it formats with the connection's adapters and never touches the connection itself);
    None elsewhere."""
    if connection.vendor != "postgresql":
        return None
    connection.ensure_connection()
    cursor = connection.connection.cursor()

    def encode(events: _Events, rows: list) -> bytes:
        buffer = io.BytesIO()
        with Copy(cursor, binary=True, writer=FileWriter(buffer)) as copy:
            copy.set_types(events.pg_types)
            width = len(events.columns)
            for row in rows:
                copy.write_row(row if len(row) == width else row[:width])
        return buffer.getvalue()

    return encode


def _parse_batches(
    lines: Iterable[bytes],
    report: IngestReport,
    batch_size: int,
    batches: Handover,
    stop: threading.Event,
    horizon: datetime | None,
    encode: Encode | None,
    batch_bytes: int,
) -> None:
    """The parser thread: count every line in `report`, hand batches of unique events over, each
    ending at `batch_size` events or with the line that brings its lines to `batch_bytes` bytes.

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

    def prepared() -> Batch:
        rows, call_rows = list(batch.values()), list(call_batch.values())
        if horizon is not None:
            kept, kept_calls = [r for r in rows if r.time >= horizon], [c for c in call_rows if c.time >= horizon]
            report.expired += len(rows) - len(kept)
            report.tool_calls_expired += len(call_rows) - len(kept_calls)
            rows, call_rows = kept, kept_calls
        app_data = encode(APP_STATUS, rows) if encode and rows else None
        call_data = encode(TOOL_CALLS, call_rows) if encode and call_rows else None
        return (
            _Batch.of(rows, app_status_deltas(rows), app_data),
            _Batch.of(call_rows, tool_call_figures(call_rows), call_data),
        )

    number = events = unknown = calls = unknown_fields = skipped = size = 0
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
                size += len(line)
                if len(batch) + len(call_batch) >= batch_size or size >= batch_bytes:
                    counted()
                    if not hand_over(prepared()):
                        return
                    batch, call_batch, size = {}, {}, 0
        except (EOFError, OSError, zlib.error) as error:
            number += 1
            report.add_malformed(number, f"unreadable, the rest of the input is lost: {error}")
        counted()
        if (batch or call_batch) and not hand_over(prepared()):
            return
        hand_over(None)
    except BaseException as error:  # handed to the caller's thread, which raises it
        hand_over(error)


Chunk = tuple[int, list[bytes], str | None]
"""A batch of lines for a worker: the number of the line before the first, the lines, and why
the input broke off after them (None when it did not)."""


@dataclass(slots=True)
class Parsed:
    """What a worker process made of one chunk: the line counts and the batch."""

    report: IngestReport
    app_status: _Batch
    tool_calls: _Batch


def _ingest_in_workers(
    lines: Iterable[bytes],
    batch_size: int,
    progress: Progress | None,
    progress_every: float,
    workers: int,
    *,
    batch_bytes: int,
    store_while_starting: bool = True,
    start_method: str | None = None,
) -> IngestReport:
    """Parse and write in `workers` processes; count in input order on the caller's thread.

    The caller's process reads the lines and cuts them into chunks of `batch_size` lines, or fewer
    that reach `batch_bytes` bytes (on a pool thread); each worker parses a chunk into one batch,
    exactly as the parser thread would (`_parse_batches`), and stores it in its own database
    connection and transaction (`_write`), then sends back the counts. The caller's process does no
    per-event work but reading: parsing, formatting and writing run in the workers, side by side
    (ADR 17). Lines repeated across chunks are two events in two batches, and the second insert
    skips the stored one, as for any rerun; two batches written at once add to the same rollup rows
    one after the other (analytics/rollups.py). At most `2 * workers` chunks are in flight, so
    memory stays bounded. Worker processes are forked from this one when it can be
    (`worker_start_method`): Django is set up already; this process's connection is closed first, so
    each worker opens its own. Otherwise they are started afresh ("spawn") and set Django up on the
    caller's database; until the first has started, this process parses and stores the chunks itself
    (ADR 18; `store_while_starting=False` waits for the workers instead). Each batch commits on its
    own, so the caller is not inside a transaction."""
    report = IngestReport()
    slots = threading.BoundedSemaphore(2 * workers)
    stop = threading.Event()
    context = multiprocessing.get_context(start_method or worker_start_method())
    next_progress = time.monotonic() + progress_every
    horizon = retention_cutoff()
    if context.get_start_method() == "fork":
        connection.close()  # a forked worker must not share this process's connection (nor close it)

    def counted(counts: IngestReport) -> None:
        nonlocal next_progress
        slots.release()
        _add_counts(report, counts)
        if progress is not None and time.monotonic() >= next_progress:
            progress(report)
            next_progress = time.monotonic() + progress_every

    with context.Pool(
        workers, initializer=ingest_workers.start, initargs=(horizon, connection.settings_dict["NAME"])
    ) as pool:
        try:
            chunks = _chunks(lines, batch_size, slots, stop, batch_bytes)
            # A worker takes most of a second to start (it sets Django up): until one has, this
            # process stores the chunks itself, as a worker would, so a small input needs none.
            started = pool.apply_async(ingest_workers.started)
            start_worker(horizon)
            for chunk in chunks:
                if started.ready() or not store_while_starting:
                    chunks = itertools.chain([chunk], chunks)
                    break
                counted(ingest_chunk(chunk))
            for counts in pool.imap(ingest_workers.ingest, chunks):
                counted(counts)
        finally:
            stop.set()
    return report


def worker_start_method() -> str:
    """How worker processes start: "fork" where the platform has it and this process runs no
    other thread (the command's case: a worker then starts in milliseconds, Django already set
    up), else "spawn" (a fresh interpreter, which inherits no lock another thread might hold)."""
    if sys.platform == "linux" and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _chunks(
    lines: Iterable[bytes],
    size: int,
    slots: threading.BoundedSemaphore,
    stop: threading.Event,
    max_bytes: int,
) -> Iterator[Chunk]:
    """`lines` in chunks, each ending at `size` lines or with the line that brings it to
    `max_bytes` bytes, each handed out once a slot is free (none once `stop` is set). When the
    input breaks off, the last chunk holds every line before the break and says why."""
    number, broken, iterator = 0, None, iter(lines)
    while broken is None:
        chunk: list[bytes] = []
        chunk_bytes = 0
        try:
            for line in iterator:
                chunk.append(line)
                chunk_bytes += len(line)
                if len(chunk) == size or chunk_bytes >= max_bytes:
                    break
        except (EOFError, OSError, zlib.error) as error:
            broken = str(error)
        if not chunk and broken is None:
            return
        while not slots.acquire(timeout=0.1):
            if stop.is_set():
                return
        yield number, chunk, broken
        number += len(chunk)


_worker_horizon: datetime | None = None
_worker_encode: Encode | None = None


def start_worker(horizon: datetime | None) -> None:
    """A worker process's state: the retention horizon, and the COPY encoder on its connection
    (analytics/ingest_workers.py sets Django up first, on the caller's database)."""
    global _worker_horizon, _worker_encode
    _worker_horizon, _worker_encode = horizon, _copy_encoder()


WRITE_ATTEMPTS = 3
"""Times a worker writes a batch that PostgreSQL chose as a deadlock's victim."""


def ingest_chunk(chunk: Chunk) -> IngestReport:
    """Parse one chunk and store it, in a worker process (see `_ingest_in_workers`); return its counts.

    Two workers whose batches hold the same lines in another order (an unsorted log ingested
    twice at once) can each wait for a row the other inserted: PostgreSQL then rolls one
    transaction back, and its batch is written again, which is safe (the transaction left nothing)."""
    parsed = parse_chunk(chunk)
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        try:
            parsed.report.new, parsed.report.tool_calls_new = _write(parsed.app_status, parsed.tool_calls)
            break
        except OperationalError as error:
            if attempt == WRITE_ATTEMPTS or not isinstance(error.__cause__, DeadlockDetected):
                raise
    return parsed.report


def parse_chunk(chunk: Chunk) -> Parsed:
    """Parse one chunk into a batch (in a worker process), the cyclic garbage collector paused
    (`_no_cycle_collection`)."""
    before, lines, broken = chunk

    def numbered() -> Iterator[bytes]:
        yield from lines
        if broken is not None:
            raise BrokenLog(broken)

    report, handed = IngestReport(), _Handed()
    with _no_cycle_collection():
        _parse_batches(  # the whole chunk is one batch: the chunk was cut to size already
            numbered(), report, len(lines) + 1, handed, threading.Event(), _worker_horizon, _worker_encode, sys.maxsize
        )
    batches = [item for item in handed.items if item is not None]
    if batches and isinstance(batches[0], BaseException):
        raise batches[0]
    report.malformed_lines = [(before + number, reason) for number, reason in report.malformed_lines]
    report.lines += before
    app_status, tool_calls = batches[0] if batches else (_Batch.of([], {}, None), _Batch.of([], {}, None))
    return Parsed(report, app_status, tool_calls)


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector paused (reference counting still frees every row): parsing a
    chunk keeps thousands of rows alive until it ends, none in a cycle, and the young collections
    that would traverse them again and again took about 8 % of the parse (ADR 19)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Handed:
    """Collects what `_parse_batches` hands over, in a worker (a queue's `put`)."""

    def __init__(self) -> None:
        self.items: list = []

    def put(self, item: Batch | BaseException | None, timeout: float | None = None) -> None:
        self.items.append(item)


def _add_counts(report: IngestReport, chunk: IngestReport) -> None:
    """Add a chunk's counts to the whole input's (`chunk.lines` is the last line's number)."""
    report.lines = chunk.lines
    for name in ("events", "new", "unknown", "tool_calls", "tool_calls_new", "unknown_fields", "expired",
                 "tool_calls_expired", "skipped"):  # fmt: skip
        setattr(report, name, getattr(report, name) + getattr(chunk, name))
    for number, reason in chunk.malformed_lines:
        report.add_malformed(number, reason)
    report.malformed += chunk.malformed - len(chunk.malformed_lines)


class _Store:
    """Stores parsed batches into `report`'s counts, calling `progress` at most every `every` seconds."""

    def __init__(self, report: IngestReport, progress: Progress | None, every: float) -> None:
        self.report, self.progress, self.every = report, progress, every
        self.next_progress = time.monotonic() + every

    def __call__(self, app_status: _Batch, tool_calls: _Batch) -> None:
        new, calls_new = _write(app_status, tool_calls)
        self.report.new += new
        self.report.tool_calls_new += calls_new
        if self.progress is not None and time.monotonic() >= self.next_progress:
            self.progress(self.report)
            self.next_progress = time.monotonic() + self.every


def _write(app_status: _Batch, tool_calls: _Batch) -> tuple[int, int]:
    """Store one batch in one transaction and add the events it stored to the rollups; return how
    many app-status and tool-call events were new."""
    _ensure_partitions(APP_STATUS, app_status)
    _ensure_partitions(TOOL_CALLS, tool_calls)
    with transaction.atomic():
        new, counts = _insert(APP_STATUS, app_status)
        if new:
            add_app_status(app_status.deltas if counts is None else app_status_deltas(counts))
        calls_new, figures = _insert(TOOL_CALLS, tool_calls)
        if calls_new:
            add_tool_calls(tool_calls.deltas if figures is None else tool_call_figures(figures))
    return new, calls_new


_PG_TYPE_NAMES: dict[type, str] = {  # keyed by any type: get_field may also answer a relation
    models.BinaryField: "bytea",
    models.DateTimeField: "timestamptz",
    models.CharField: "text",
    models.TextField: "text",
    models.BigIntegerField: "int8",
    models.FloatField: "float8",
}


class _CountedEvent(NamedTuple):
    time: datetime
    client: str
    tool: str
    kind: str
    replaced_by: str
    input: str
    change: str


class _CountedCall(NamedTuple):
    time: datetime
    client: str
    tool: str
    backend: str
    tenant: str
    outcome: str
    upstream_calls: int | None
    bytes: int | None
    upstream_ms: float | None
    total_ms: float | None


@dataclass(frozen=True, slots=True)
class _Events:
    """One kind of raw events: its model, the columns a parsed row fills, and the row type of
    the columns its rollups count (returned by an insert that skipped stored events)."""

    model: type[models.Model]
    columns: tuple[str, ...]
    counted: type[_CountedEvent] | type[_CountedCall]

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


APP_STATUS = _Events(AppStatusEvent, COLUMNS, _CountedEvent)
TOOL_CALLS = _Events(ToolCallEvent, TOOL_CALL_COLUMNS, _CountedCall)


def _insert(events: _Events, batch: _Batch) -> tuple[int, list | None]:
    """Insert the batch's events not stored yet; return how many, and the rows inserted when not
    all of them were (None when all were: the batch's deltas are theirs)."""
    if not batch.count:
        return 0, None
    if batch.copy_data is not None:
        return _insert_postgresql(events, batch, batch.copy_data)
    assert batch.rows is not None, "a batch without COPY data holds its rows"
    new = _insert_orm(events, batch.rows)
    return len(new), None if len(new) == batch.count else new


def _insert_postgresql(events: _Events, batch: _Batch, data: bytes) -> tuple[int, list | None]:
    """Copy straight into the table when nothing is stored in the batch's time range yet (new
    logs); otherwise, or when a concurrent writer gets in between and the unique constraint
    refuses the copy, copy into a session-private table and insert what is not stored yet,
    returning the counted columns of exactly the rows inserted."""
    first, last = batch.first, batch.last
    assert first is not None and last is not None
    if _nothing_stored_between(first, last, model=events.model):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                _copy(cursor, events, events.table, data)
            return batch.count, None
        except IntegrityError:
            pass
    columns = events.column_list
    with connection.cursor() as cursor:
        cursor.execute(  # one round trip
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {events.stage} AS SELECT {columns} FROM {events.table} "
            f"WITH NO DATA; TRUNCATE {events.stage}"
        )
        _copy(cursor, events, events.stage, data)
        # Sorted, so two writers meet the same rows in the same order.
        cursor.execute(
            f"INSERT INTO {events.table} ({columns}) SELECT {columns} FROM {events.stage} ORDER BY time, event_id "
            f"ON CONFLICT (time, event_id) DO NOTHING RETURNING {', '.join(events.counted._fields)}"
        )
        inserted = [events.counted._make(row) for row in cursor.fetchall()]
    return len(inserted), None if len(inserted) == batch.count else inserted


def _ensure_partitions(events: _Events, batch: _Batch) -> None:
    """Create the monthly partitions the batch's events fall in, when missing: before the batch's
    transaction, which then holds no lock a concurrent writer's DDL would wait for."""
    if batch.count and is_partitioned(events.table):
        assert batch.first is not None and batch.last is not None
        ensure_partitions(events.table, _months_between(batch.first, batch.last))


def _months_between(first: datetime, last: datetime) -> list[datetime]:
    """A moment in every UTC month from `first`'s to `last`'s."""
    months, moment = [], first.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    while moment <= last:
        months.append(moment)
        moment = (moment + timedelta(days=32)).replace(day=1)
    return months


def _nothing_stored_between(first: datetime, last: datetime, *, model: type[models.Model] = AppStatusEvent) -> bool:
    return not model._default_manager.filter(time__gte=first, time__lte=last).exists()


def _copy(cursor: CursorWrapper, events: _Events, table: str, data: bytes) -> None:
    with (
        connection.wrap_database_errors,
        cursor.cursor.copy(f"COPY {table} ({events.column_list}) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.write(data)


def _insert_orm(events: _Events, rows: list) -> list:
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
    new = [row for row in rows if row.event_id not in stored]
    manager.bulk_create([events.model(**dict(zip(events.columns, events.values(row), strict=True))) for row in new])
    return new
