"""Raw events by month on PostgreSQL, and retention: old raw events go, rollups stay.

On PostgreSQL the raw event tables (`AppStatusEvent`, `ToolCallEvent`, and `ExchangeEvent` since
migration 0018) are partitioned by range of `time`, one partition per UTC month named
`<table>_pYYYYMM` (migration 0004). Ingestion
creates the partition of a month before writing its first events (`ensure_partitions`).
Retention (`drop_before`) drops every partition that ends before the cutoff, a cheap catalog
operation however many events it held, and deletes the rest of the events before the cutoff
from the partition that holds it. On SQLite the tables are plain and retention deletes rows.

Rollups are never touched: reports over expired days still answer from them. Ingestion refuses
(counts as `expired`) events before the retention horizon: their raw events would be dropped
again, and with nothing left to recognise their lines by, an old log ingested twice would be
added to the rollups twice (analytics/ingest/store.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

from django.conf import settings
from django.db import connection, models, transaction

PARTITION_SUFFIX_LENGTH = len("_p202611")
PARTITION_LOCK = 0x616E616C79746963
"""The advisory lock key (b"analytic") that serialises creating partitions."""


def month_start(moment: datetime | date) -> date:
    return date(moment.year, moment.month, 1)


def next_month(start: date) -> date:
    return date(start.year + start.month // 12, start.month % 12 + 1, 1)


def partition_name(table: str, month: date) -> str:
    return f"{table}_p{month:%Y%m}"


def is_partitioned(table: str) -> bool:
    """Whether `table` is a partitioned table (PostgreSQL after migration 0004)."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass(%s)", [table])
        found = cursor.fetchone()
    return bool(found and found[0])


def ensure_partitions(table: str, times: Iterable[datetime]) -> None:
    """Create the monthly partitions of `table` the given times fall in, when missing."""
    months = sorted({month_start(moment.astimezone(UTC)) for moment in times})
    with connection.cursor() as cursor:
        for month in months:
            name = partition_name(table, month)
            cursor.execute("SELECT to_regclass(%s) IS NULL", [name])
            (missing,) = cursor.fetchone()
            if missing:
                start, end = f"{month:%Y-%m-%d}T00:00:00+00:00", f"{next_month(month):%Y-%m-%d}T00:00:00+00:00"
                with transaction.atomic():
                    # Writers in other processes may create it at the same moment: one at a time,
                    # each seeing the partition the one before committed.
                    cursor.execute("SELECT pg_advisory_xact_lock(%s)", [PARTITION_LOCK])
                    cursor.execute(
                        f"CREATE TABLE IF NOT EXISTS {name} PARTITION OF {table} "
                        f"FOR VALUES FROM ('{start}') TO ('{end}')"
                    )


def partitions(table: str) -> list[tuple[str, date]]:
    """The monthly partitions of `table` as (name, first day of the month), oldest first."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = to_regclass(%s)",
            [table],
        )
        names = [name for (name,) in cursor.fetchall()]
    found = []
    for name in names:
        suffix = name[-PARTITION_SUFFIX_LENGTH:]
        if name == table + suffix and suffix[2:].isdigit():
            found.append((name, date(int(suffix[2:6]), int(suffix[6:8]), 1)))
    return sorted(found, key=lambda pair: pair[1])


def retention_cutoff(days: int | None = None, *, today: date | None = None) -> datetime | None:
    """The first moment kept: midnight UTC `days` days before today; None when events are kept forever."""
    days = settings.ANALYTICS_RETENTION_DAYS if days is None else days
    if days <= 0:
        return None
    today = today or datetime.now(UTC).date()
    return datetime(today.year, today.month, today.day, tzinfo=UTC) - timedelta(days=days)


def drop_before(model: type[models.Model], cutoff: datetime) -> int:
    """Remove the raw events of `model` before `cutoff`; return how many were removed."""
    table = model._meta.db_table
    removed = 0
    if is_partitioned(table):
        with connection.cursor() as cursor:
            for name, month in partitions(table):
                if datetime(next_month(month).year, next_month(month).month, 1, tzinfo=UTC) <= cutoff:
                    cursor.execute(f"SELECT count(*) FROM {name}")
                    removed += cursor.fetchone()[0]
                    cursor.execute(f"DROP TABLE {name}")
    deleted, _ = model._default_manager.filter(time__lt=cutoff).delete()
    return removed + deleted


def mark_kept_from(family: str, cutoff: datetime) -> None:
    """Record that `family`'s raw events before `cutoff` were dropped (its `IngestionMark`), so a
    report over those days says what it cannot list instead of showing nothing."""
    from analytics.models import IngestionMark

    with transaction.atomic():
        mark, _ = IngestionMark.objects.select_for_update().get_or_create(family=family)
        if mark.kept_from is None or mark.kept_from < cutoff:
            mark.kept_from = cutoff
            mark.save(update_fields=["kept_from"])
