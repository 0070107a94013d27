"""The pipeline: source -> decode -> batch -> store, in one process or in worker processes.

`ingest(lines)` runs the stages on any iterable of lines (a log file's, stdin's, a growing log's,
the live path's) and returns what it saw. In one process (`workers=0`, or inside a transaction), a parser thread
decodes and batches (analytics/ingest/batches.py) while the caller's thread stores each batch in
its own transaction (analytics/ingest/store.py), on the caller's connection. With worker
processes, the caller's process only reads and cuts the lines into chunks; each worker runs the
decode, batch and store stages on a chunk in its own connection (analytics/ingest/workers.py),
and the counts come back in input order. Either way the events and rollups stored are the same.

Memory is bounded by the batch size whatever the input's length: at most four batches exist at
once (one being parsed, two queued, one being written), or with worker processes, two chunks
per worker. Ingesting the same lines twice, or a file the live path already wrote, adds nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from django.db import connection

from analytics.ingest import workers
from analytics.ingest.batches import BATCH_BYTES, BATCH_SIZE, Batch, Chunk, IngestReport, batches, chunks
from analytics.ingest.sources import Idle
from analytics.ingest.store import Store
from analytics.partitions import retention_cutoff

Progress = Callable[[IngestReport], object]


def ingest(
    lines: Iterable[bytes | Idle],
    *,
    batch_size: int = BATCH_SIZE,
    batch_bytes: int = BATCH_BYTES,
    progress: Progress | None = None,
    progress_every: float = 5.0,
    workers: int = 0,
    start_method: str | None = None,
    store_while_starting: bool = True,
) -> IngestReport:
    """Decode, batch and store `lines`; see the module docstring.

    A batch ends at `batch_size` events or with the line that brings its lines to `batch_bytes`
    bytes. `progress`, when given, is called on the caller's thread with the report so far, about
    every `progress_every` seconds (between batches). With `workers` > 0, on PostgreSQL and
    outside a transaction, that many worker processes decode and store the batches (SQLite has
    one writer at a time, and a test's database lives in this process's memory): forked from this process when it can
    be (`worker_start_method`, or `start_method`), else started afresh; until the first has
    started, this process stores the chunks itself, so a small input needs none
    (`store_while_starting=False` waits for them). Inside a transaction every batch is written in
    it, by this process."""
    if workers > 0 and connection.vendor == "postgresql" and not connection.in_atomic_block:
        return _in_workers(
            lines, batch_size, batch_bytes, progress, progress_every, workers, start_method, store_while_starting
        )
    report = IngestReport()
    store = Store()
    handed: queue.Queue[Batch | BaseException | None] = queue.Queue(maxsize=2)
    stop = threading.Event()
    parser = threading.Thread(
        target=_parse,
        args=(lines, store, report, batch_size, batch_bytes, retention_cutoff(), handed, stop),
        name="analytics-parse",
        daemon=True,
    )
    parser.start()
    pace = _Pace(progress, progress_every)
    try:
        while (batch := handed.get()) is not None:
            if isinstance(batch, BaseException):
                raise batch
            report.add_new(batch, store.write(batch))
            pace(report)
    finally:
        stop.set()
        with contextlib.suppress(queue.Empty):
            handed.get_nowait()  # unblock a parser waiting to put
        parser.join()
    return report


def _parse(
    lines: Iterable[bytes | Idle],
    store: Store,
    report: IngestReport,
    size: int,
    max_bytes: int,
    horizon: datetime | None,
    handed: queue.Queue[Batch | BaseException | None],
    stop: threading.Event,
) -> None:
    """The parser thread: batches handed over through `handed`, then None (or the error that stopped it)."""

    def hand_over(item: Batch | BaseException | None) -> bool:
        while not stop.is_set():
            with contextlib.suppress(queue.Full):
                handed.put(item, timeout=0.1)
                return True
        return False

    try:
        for batch in batches(lines, store, report, size=size, max_bytes=max_bytes, horizon=horizon):
            if not hand_over(batch):
                return
        hand_over(None)
    except BaseException as error:  # handed to the caller's thread, which raises it
        hand_over(error)


class _Pace:
    """Calls `progress` at most every `every` seconds."""

    def __init__(self, progress: Progress | None, every: float) -> None:
        self.progress, self.every = progress, every
        self.next = time.monotonic() + every

    def __call__(self, report: IngestReport) -> None:
        if self.progress is not None and time.monotonic() >= self.next:
            self.progress(report)
            self.next = time.monotonic() + self.every


def _in_workers(
    lines: Iterable[bytes | Idle],
    batch_size: int,
    batch_bytes: int,
    progress: Progress | None,
    progress_every: float,
    count: int,
    start_method: str | None,
    store_while_starting: bool,
) -> IngestReport:
    """Read and cut `lines` here; decode, batch and store in `count` worker processes; count here,
    in input order. At most `2 * count` chunks are in flight. Lines repeated across chunks are two
    events in two batches, and the second insert skips the stored one, as for any rerun; two
    batches written at once add to the same rollup rows one after the other. Each batch commits on
    its own, so the caller is not inside a transaction."""
    report = IngestReport()
    slots = threading.BoundedSemaphore(2 * count)
    stop = threading.Event()
    context = multiprocessing.get_context(start_method or worker_start_method())
    pace = _Pace(progress, progress_every)
    horizon = retention_cutoff()
    database = connection.settings_dict["NAME"]
    if context.get_start_method() == "fork":
        connection.close()  # a forked worker must not share this process's connection (nor close it)

    def counted(counts: IngestReport) -> None:
        slots.release()
        report.add(counts)
        pace(report)

    def handed_out(all_chunks: Iterator[Chunk]) -> Iterator[Chunk]:
        for chunk in all_chunks:
            while not slots.acquire(timeout=0.1):
                if stop.is_set():
                    return
            yield chunk

    with context.Pool(count, initializer=workers.start, initargs=(horizon, database)) as pool:
        try:
            pending = handed_out(chunks(lines, batch_size, batch_bytes))
            # A worker takes most of a second to start afresh (it sets Django up): until one has,
            # this process stores the chunks itself, as a worker would.
            started = pool.apply_async(workers.started)
            store = Store()
            for chunk in pending:
                if started.ready() or not store_while_starting:
                    pending = itertools.chain([chunk], pending)
                    break
                counted(workers.store_chunk(chunk, store, horizon))
            for counts in pool.imap(workers.ingest, pending):
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
