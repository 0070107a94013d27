"""Widget failures by bucket, host and tool, summed from the app-status rollups: the Widgets page's
chart and table, and the API's failure totals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, Sum

from analytics.models import AppStatusDailyCount, AppStatusHourlyCount
from analytics.selectors.query import Dimension, ReportQuery
from analytics.selectors.scope import _host_of, rollups
from analytics.stats import COUNT_STATS, RATE_STATS, REPORT_KINDS


@dataclass(frozen=True, slots=True)
class FailureRow:
    """Counts of the report's stats for one group; dimensions not grouped by are None."""

    bucket: datetime | None
    client: str | None
    tool: str | None
    counts: Mapping[str, int]

    @property
    def rates(self) -> dict[str, float | None]:
        return {stat.name: stat.value(self.counts) for stat in RATE_STATS}

    def as_dict(self) -> dict[str, object]:
        """Dimensions, then every stat by name (the API's and the template's row)."""
        return {"bucket": self.bucket, "client": self.client, "tool": self.tool, **self.counts, **self.rates}


def failure_counts(query: ReportQuery, *, by: Sequence[Dimension]) -> list[FailureRow]:
    """The widget-failure stats per group of `by`, sorted by bucket, client, tool.

    Groups without any counted event are absent (no zero rows). Read from the daily counts for
    the whole days of the range and the hourly ones for its edges and hourly buckets (`rollups`)."""
    sums = {stat.name: Sum("count", filter=Q(kind=stat.kind), default=0) for stat in COUNT_STATS}
    host = _host_of(query) if "client" in by else None
    merged: dict[tuple, dict[str, int]] = {}
    for rows in rollups(query, AppStatusHourlyCount, AppStatusDailyCount, bucketed="bucket" in by):
        for row in rows.filter(kind__in=REPORT_KINDS).values(*by).annotate(**sums).order_by():
            client = row.get("client")
            key = (row.get("bucket"), host(client) if host and client is not None else client, row.get("tool"))
            counts = merged.setdefault(key, dict.fromkeys((stat.name for stat in COUNT_STATS), 0))
            for stat in COUNT_STATS:
                counts[stat.name] += int(row[stat.name])
    result = [FailureRow(bucket, client, tool, counts) for (bucket, client, tool), counts in merged.items()]
    # Sorted here, not in SQL: collations differ between databases, and the rows are few.
    return sorted(result, key=lambda row: (row.bucket or query.start_time, row.client or "", row.tool or ""))
