"""Reports on app-status events, shared by the dashboard and the JSON API.

A report covers whole UTC days, `start` to `end` inclusive, optionally one tool and one host
(client name) or host family (analytics/families.py). Counts are summed in SQL from the daily
counts (the hourly ones for hourly buckets), grouped by any of bucket (the UTC hour or day),
client and tool; rates are computed from the summed counts when read. With `group="family"`
the client of every row is its host family and rows of one family are summed. Drill-down and
old-caller reports read the raw events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal, get_args

from django.db.models import F, Max, Min, Q, QuerySet, Sum

from analytics.families import Families
from analytics.models import (
    FAILING_KINDS,
    OLD_CALLER_DIMENSIONS,
    AppStatusDailyCount,
    AppStatusEvent,
    AppStatusHourlyCount,
    OldCallerDaily,
    ToolCallDaily,
)
from analytics.stats import COUNT_STATS, RATE_STATS, REPORT_KINDS

Bucket = Literal["hour", "day"]
Dimension = Literal["bucket", "client", "tool"]
Group = Literal["client", "family"]
BUCKETS: tuple[str, ...] = get_args(Bucket)
GROUPS: tuple[str, ...] = get_args(Group)
MAX_DAYS = 400
"""The longest range a report may cover."""
DEFAULT_DAYS = 30
"""The range of a report whose dates are not given: 30 days up to and including the end."""


@dataclass(frozen=True, slots=True)
class ReportQuery:
    """Whole UTC days `start`..`end` (inclusive); empty `tool`/`client`/`family` means all of
    them. `group`: report hosts by exact client name or by host family."""

    start: date
    end: date
    bucket: Bucket = "day"
    tool: str = ""
    client: str = ""
    family: str = ""
    group: Group = "client"

    def __post_init__(self) -> None:
        if self.start > self.end:
            raise ValueError("the start date is after the end date")
        if (self.end - self.start).days >= MAX_DAYS:
            raise ValueError(f"a report covers at most {MAX_DAYS} days")
        if self.bucket not in BUCKETS:
            raise ValueError(f"bucket must be one of {', '.join(BUCKETS)}")
        if self.group not in GROUPS:
            raise ValueError(f"group must be one of {', '.join(GROUPS)}")

    @classmethod
    def from_filters(
        cls,
        *,
        start: date | None,
        end: date | None,
        bucket: str | None,
        tool: str | None,
        client: str | None,
        family: str | None = None,
        group: str | None = None,
    ) -> ReportQuery:
        """The query a user's filters describe: `end` defaults to today (UTC), `start` to
        DEFAULT_DAYS days before `end`. Raises ValueError for an impossible query."""
        end = end or datetime.now(UTC).date()
        return cls(
            start=start or end - timedelta(days=DEFAULT_DAYS - 1),
            end=end,
            bucket=bucket or "day",  # type: ignore[arg-type]  # checked in __post_init__
            tool=(tool or "").strip(),
            client=(client or "").strip(),
            family=(family or "").strip(),
            group=group or "client",  # type: ignore[arg-type]  # checked in __post_init__
        )

    @property
    def start_time(self) -> datetime:
        return datetime.combine(self.start, time(), tzinfo=UTC)

    @property
    def end_time(self) -> datetime:
        """The first moment after the range."""
        return datetime.combine(self.end + timedelta(days=1), time(), tzinfo=UTC)

    def buckets(self) -> list[datetime]:
        """The start of every bucket in the range, in order."""
        step = timedelta(hours=1) if self.bucket == "hour" else timedelta(days=1)
        count = (self.end_time - self.start_time) // step
        return [self.start_time + step * index for index in range(count)]


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

    Groups without any counted event are absent (no zero rows)."""
    rows: QuerySet[AppStatusHourlyCount] | QuerySet[AppStatusDailyCount]
    if query.bucket == "hour" and "bucket" in by:
        rows = AppStatusHourlyCount.objects.filter(hour__gte=query.start_time, hour__lt=query.end_time)
        rows = rows.annotate(bucket=F("hour"))
    else:  # daily buckets and whole-range tables: 24 times fewer rows
        rows = AppStatusDailyCount.objects.filter(day__gte=query.start_time, day__lt=query.end_time)
        if "bucket" in by:
            rows = rows.annotate(bucket=F("day"))
    rows = _filtered(rows.filter(kind__in=REPORT_KINDS), query)
    grouped = rows.values(*by).annotate(
        **{stat.name: Sum("count", filter=Q(kind=stat.kind), default=0) for stat in COUNT_STATS}
    )
    host = _host_of(query) if "client" in by else None
    merged: dict[tuple, dict[str, int]] = {}
    for row in grouped.order_by():
        client = row.get("client")
        key = (row.get("bucket"), host(client) if host and client is not None else client, row.get("tool"))
        counts = merged.setdefault(key, dict.fromkeys((stat.name for stat in COUNT_STATS), 0))
        for stat in COUNT_STATS:
            counts[stat.name] += int(row[stat.name])
    result = [FailureRow(bucket, client, tool, counts) for (bucket, client, tool), counts in merged.items()]
    # Sorted here, not in SQL: collations differ between databases, and the rows are few.
    return sorted(result, key=lambda row: (row.bucket or query.start_time, row.client or "", row.tool or ""))


def hosts_and_tools(query: ReportQuery) -> tuple[list[str], list[str]]:
    """Every host (client) and every tool with an app-status or tool-call event in the query's
    range, whatever its tool and host filters: the filters' choices."""
    clients, tools = set(), set()
    for model, moment in ((AppStatusDailyCount, "day"), (ToolCallDaily, "day")):
        pairs = (
            model.objects.filter(**{f"{moment}__gte": query.start_time, f"{moment}__lt": query.end_time})
            .values_list("client", "tool")
            .distinct()
            .order_by()
        )
        for client, tool in pairs:
            clients.add(client)
            tools.add(tool)
    return sorted(clients), sorted(tools)


def families_present(clients: Iterable[str], families: Families | None = None) -> list[str]:
    """The host families (in their order) that at least one of `clients` belongs to."""
    families = families or Families.load()
    present = {families.family_of(client) for client in clients}
    return [name for name in families.names if name in present]


def failing_events(query: ReportQuery, *, kinds: Iterable[str] = FAILING_KINDS) -> QuerySet[AppStatusEvent]:
    """Events that mean a widget did not draw as it should, newest first."""
    events = AppStatusEvent.objects.filter(kind__in=list(kinds), time__gte=query.start_time, time__lt=query.end_time)
    return _filtered(events, query).order_by("-time", "-id")


@dataclass(frozen=True, slots=True)
class OldCaller:
    """A client that called a retired tool name, or a tool with an outdated input."""

    kind: str
    client: str
    tool: str
    replaced_by: str
    input: str
    change: str
    calls: int
    first_seen: datetime
    last_seen: datetime


def old_callers(query: ReportQuery) -> list[OldCaller]:
    """Who still calls retired names or outdated inputs, with counts and first and last seen;
    sorted by kind, then most calls first. Read from the daily rollup, so days whose raw events
    the retention dropped still count."""
    days = OldCallerDaily.objects.filter(day__gte=query.start_time, day__lt=query.end_time)
    grouped = (
        _filtered(days, query)
        .values(*OLD_CALLER_DIMENSIONS)
        .annotate(calls=Sum("calls"), first_seen=Min("first_seen"), last_seen=Max("last_seen"))
        .order_by()
    )
    host = _host_of(query)
    merged: dict[tuple, OldCaller] = {}
    for row in grouped:
        caller = OldCaller(**row)
        if host:
            caller = replace(caller, client=host(caller.client))
        key = (caller.kind, caller.client, caller.tool, caller.replaced_by, caller.input, caller.change)
        if (seen := merged.get(key)) is not None:
            caller = OldCaller(
                *key,
                calls=seen.calls + caller.calls,
                first_seen=min(seen.first_seen, caller.first_seen),
                last_seen=max(seen.last_seen, caller.last_seen),
            )
        merged[key] = caller
    return sorted(merged.values(), key=lambda c: (c.kind, -c.calls, c.client, c.tool, c.input, c.change))


def _host_of(query: ReportQuery) -> Callable[[str], str] | None:
    """How a row's client is reported: None for the exact name, else its family."""
    return Families.load().family_of if query.group == "family" else None


def _filtered[Q_: QuerySet](rows: Q_, query: ReportQuery) -> Q_:
    if query.tool:
        rows = rows.filter(tool=query.tool)
    if query.client:
        rows = rows.filter(client=query.client)
    if query.family:
        clients, _ = hosts_and_tools(query)
        rows = rows.filter(client__in=Families.load().members(query.family, clients))
    return rows
