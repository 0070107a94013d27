"""Batch: decoded lines into batches of unique events, each counted and prepared for the store.

`batches` is the stage between decode and store: it decodes every line, counts it in the
report (an app-status event, a tool call, skipped or malformed), keeps each event once per batch
(by identity), drops events before the retention horizon, and hands out a batch once it holds
`size` events or its lines reach `max_bytes` bytes, whichever comes first (a batch ends with the
line that reaches the byte limit). Each batch has a `Part` per family, prepared by the store
(its rollup deltas counted, its rows formatted for loading), so all that work runs where the
lines are parsed, not where they are written.

`chunks` cuts lines the same way for worker processes, which then run this stage and the store
on each chunk themselves (analytics/ingest/workers.py).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from analytics.ingest import sources
from analytics.ingest.decode import (
    APP_STATUS,
    EXCHANGE,
    FAMILIES,
    TOOL_CALLS,
    UNKNOWN_KIND,
    Family,
    Malformed,
    decode,
)
from analytics.ingest.sources import Idle
from analytics.ingest.store import Part, Store

BATCH_SIZE = 25_000
"""Events per batch (one transaction). Each batch has fixed costs in PostgreSQL (the commit's WAL
flush, the partition and overlap checks, its staging tables) and adds to the daily rollup rows
again: in one process, batches of 30,000 spent about a fifth less time writing than batches of
10,000 (docs/adr/0027-ingestion.md)."""
BATCH_BYTES = 16 * 1024 * 1024
"""A batch, or a worker's chunk, also ends once its lines add up to this many bytes: long lines
(up to MAX_LINE_BYTES each) cannot make a batch of `size` lines large. The server's lines are
about 500 bytes, so theirs end at `size` (about 12 MB)."""
MAX_REPORTED_MALFORMED = 1000
"""Malformed lines past this many are counted but their line numbers are not kept."""


@dataclass(slots=True)
class IngestReport:
    """What one ingestion saw. `events = new + duplicates + expired` (app-status events),
    `tool_calls = tool_calls_new + tool_call_duplicates + tool_calls_expired`; every line is
    exactly one of an app-status event, a tool call, skipped or malformed.

    The parse stage updates the line counts batch by batch (a progress report reads them while
    the ingestion runs); they are final when the ingestion returns."""

    lines: int = 0
    events: int = 0
    new: int = 0
    unknown: int = 0
    """App-status events whose message the contract does not know (kept, as kind `unknown`)."""
    tool_calls: int = 0
    tool_calls_new: int = 0
    unknown_fields: int = 0
    """Events whose lines have fields this version does not know (kept with the fields it knows)."""
    expired: int = 0
    """App-status events older than the retention horizon: not stored (analytics/partitions.py)."""
    tool_calls_expired: int = 0
    exchange: int = 0
    """Exchange lines (`Session started`, `Tools listed`, `MCP request refused`: core/exchange.py),
    `exchange = exchange_new + exchange_duplicates + exchange_expired`."""
    exchange_new: int = 0
    exchange_expired: int = 0
    skipped: int = 0
    malformed: int = 0
    malformed_lines: list[tuple[int, str]] = field(default_factory=list)
    """(line number, reason) of the first MAX_REPORTED_MALFORMED malformed lines."""
    batches: int = 0
    """Batches written (one transaction each)."""
    worker_batches: int = 0
    """Of them, written by worker processes."""

    @property
    def duplicates(self) -> int:
        """App-status events already stored."""
        return self.events - self.new - self.expired

    @property
    def tool_call_duplicates(self) -> int:
        return self.tool_calls - self.tool_calls_new - self.tool_calls_expired

    @property
    def exchange_duplicates(self) -> int:
        return self.exchange - self.exchange_new - self.exchange_expired

    def add_malformed(self, line_number: int, reason: str) -> None:
        self.malformed += 1
        if len(self.malformed_lines) < MAX_REPORTED_MALFORMED:
            self.malformed_lines.append((line_number, reason))

    def add_new(self, batch: Batch, new: list[int]) -> None:
        """Count what writing `batch` stored (`new`: per part, as `Store.write` returns)."""
        for part, stored in zip(batch, new, strict=True):
            if part.family is TOOL_CALLS:
                self.tool_calls_new += stored
            elif part.family is EXCHANGE:
                self.exchange_new += stored
            else:
                self.new += stored
        self.batches += 1

    def add(self, other: IngestReport) -> None:
        """Add a chunk's counts (`other.lines` is the number of the chunk's last line)."""
        self.lines = other.lines
        for name in (
            "events",
            "new",
            "unknown",
            "tool_calls",
            "tool_calls_new",
            "unknown_fields",
            "expired",
            "tool_calls_expired",
            "exchange",
            "exchange_new",
            "exchange_expired",
            "skipped",
            "batches",
            "worker_batches",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for number, reason in other.malformed_lines:
            self.add_malformed(number, reason)
        self.malformed += other.malformed - len(other.malformed_lines)


Batch = list[Part]
"""One transaction's events: a part per family, in `FAMILIES` order."""


def batches(
    lines: Iterable[bytes | Idle],
    store: Store,
    report: IngestReport,
    *,
    size: int = BATCH_SIZE,
    max_bytes: int = BATCH_BYTES,
    horizon: datetime | None = None,
) -> Iterator[Batch]:
    """The batches of `lines`, counted in `report` (see the module docstring). A stream that breaks
    off (a truncated or corrupt gzip file) counts as one malformed line where it broke; the lines
    before it are kept. `IDLE` (a growing log that caught up, `sources.follow`) ends a batch."""
    longest = sources.MAX_LINE_BYTES
    too_long = Malformed(f"longer than {longest} bytes")
    pending: dict[Family, dict[bytes, tuple]] = {family: {} for family in FAMILIES}
    seen = dict.fromkeys(FAMILIES, 0)
    number = unknown = unknown_fields = skipped = in_batch = bytes_in_batch = 0

    def counted() -> None:
        report.lines, report.unknown, report.unknown_fields, report.skipped = number, unknown, unknown_fields, skipped
        report.events, report.tool_calls, report.exchange = seen[APP_STATUS], seen[TOOL_CALLS], seen[EXCHANGE]

    def batch() -> Batch:
        parts = []
        for family, rows_by_id in pending.items():
            rows = list(rows_by_id.values())
            if horizon is not None:
                kept = [row for row in rows if row.time >= horizon]  # type: ignore[attr-defined]  # a family's Row
                if family is TOOL_CALLS:
                    report.tool_calls_expired += len(rows) - len(kept)
                elif family is EXCHANGE:
                    report.exchange_expired += len(rows) - len(kept)
                else:
                    report.expired += len(rows) - len(kept)
                rows = kept
            parts.append(store.part(family, rows))
            rows_by_id.clear()
        return parts

    try:
        for line in lines:
            if isinstance(line, Idle):  # a growing log caught up: end the batch instead of waiting
                if in_batch:
                    counted()
                    yield batch()
                    in_batch = bytes_in_batch = 0
                continue
            number += 1
            decoded = decode(line) if len(line) <= longest else too_long
            if type(decoded) is tuple:
                family, row, unknown_fields_here = decoded  # type: ignore[misc]  # the exact type says it is an event
                seen[family] += 1
                unknown_fields += unknown_fields_here
                if family is APP_STATUS:
                    unknown += row[2] == UNKNOWN_KIND
                rows_by_id = pending[family]
                if row[0] not in rows_by_id:
                    in_batch += 1
                rows_by_id[row[0]] = row
            elif type(decoded) is Malformed:
                report.add_malformed(number, decoded.reason)
            else:
                skipped += 1
                continue
            bytes_in_batch += len(line)
            if in_batch >= size or bytes_in_batch >= max_bytes:
                counted()
                yield batch()
                in_batch = bytes_in_batch = 0
    except (EOFError, OSError, zlib.error) as error:
        number += 1
        report.add_malformed(number, f"unreadable, the rest of the input is lost: {error}")
    counted()
    if in_batch:
        yield batch()


Chunk = tuple[int, list[bytes], str | None]
"""A batch of lines for a worker: the number of the line before the first, the lines, and why
the input broke off after them (None when it did not)."""


def chunks(lines: Iterable[bytes | Idle], size: int = BATCH_SIZE, max_bytes: int = BATCH_BYTES) -> Iterator[Chunk]:
    """`lines` in chunks, each ending at `size` lines, with the line that brings it to
    `max_bytes` bytes, or at `IDLE`. When the input breaks off, the last chunk holds every line
    before the break and says why."""
    number, broken, iterator = 0, None, iter(lines)
    while broken is None:
        chunk: list[bytes] = []
        chunk_bytes = 0
        try:
            for line in iterator:
                if isinstance(line, Idle):
                    if chunk:
                        break
                    continue
                chunk.append(line)
                chunk_bytes += len(line)
                if len(chunk) == size or chunk_bytes >= max_bytes:
                    break
        except (EOFError, OSError, zlib.error) as error:
            broken = str(error)
        if not chunk and broken is None:
            return
        yield number, chunk, broken
        number += len(chunk)
