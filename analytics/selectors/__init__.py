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

from django.db.models import Count, F, Max, Min, Q, QuerySet, Sum

from analytics.families import Families
from analytics.models import (
    FAILING_KINDS,
    OLD_CALLER_DIMENSIONS,
    OLD_CALLER_LABELS,
    AppStatusDailyCount,
    AppStatusEvent,
    AppStatusHourlyCount,
    OldCallerDaily,
    ToolCallDaily,
    ToolCallEvent,
    ToolCallHourly,
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
CALL_ONLY_FILTERS = ("tenant", "backend")
NO_TENANT = "-"
"""The tenant filter's value for calls without a tenant (API-key callers)."""


def _hour(moment: datetime) -> datetime:
    """`moment` as the start of its UTC hour."""
    if moment.tzinfo is None:
        raise ValueError("a window's times need a UTC offset")
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


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
    tenant: str = ""
    """Only this tenant's calls; `-` for callers with an API key (no tenant)."""
    backend: str = ""
    since: datetime | None = None
    """A window of whole UTC hours inside the days (the overview's presets): its first hour."""
    until: datetime | None = None
    """The first moment after that window."""

    def __post_init__(self) -> None:
        if self.start > self.end:
            raise ValueError("the start date is after the end date")
        if (self.since is None) != (self.until is None) or (self.since and self.until and self.since >= self.until):
            raise ValueError("a window needs a first hour before its end")
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
        tenant: str | None = None,
        backend: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> ReportQuery:
        """The query a user's filters describe: `end` defaults to today (UTC), `start` to
        DEFAULT_DAYS days before `end`; a window (`since`, `until`, whole hours) sets both.
        Raises ValueError for an impossible query."""
        if since is not None and until is not None:
            since, until = _hour(since), _hour(until)
            start, end = since.date(), (until - timedelta(microseconds=1)).date()
        end = end or datetime.now(UTC).date()
        return cls(
            start=start or end - timedelta(days=DEFAULT_DAYS - 1),
            end=end,
            bucket=bucket or "day",  # type: ignore[arg-type]  # checked in __post_init__
            tool=(tool or "").strip(),
            client=(client or "").strip(),
            family=(family or "").strip(),
            group=group or "client",  # type: ignore[arg-type]  # checked in __post_init__
            tenant=(tenant or "").strip(),
            backend=(backend or "").strip(),
            since=since,
            until=until,
        )

    @property
    def start_time(self) -> datetime:
        return self.since or datetime.combine(self.start, time(), tzinfo=UTC)

    @property
    def end_time(self) -> datetime:
        """The first moment after the range."""
        return self.until or datetime.combine(self.end + timedelta(days=1), time(), tzinfo=UTC)

    @property
    def call_filters(self) -> tuple[str, ...]:
        """The filters given that only tool calls record (tenant, backend): widget events carry
        neither, so a widget report cannot honour them (the pages and the API say so)."""
        return tuple(name for name in CALL_ONLY_FILTERS if getattr(self, name))

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
    """A client that called a retired tool name, a tool with an outdated input, a deprecated
    tool or an alias; `tenant` is "" for callers with an API key."""

    kind: str
    client: str
    tenant: str
    tool: str
    replaced_by: str
    input: str
    change: str
    calls: int
    first_seen: datetime
    last_seen: datetime

    @property
    def how(self) -> str:
        """The kind in words: retired tool, outdated input, deprecated tool, alias."""
        return OLD_CALLER_LABELS.get(self.kind, self.kind)

    @property
    def what(self) -> str:
        """What replaces the tool, or which input changed and how."""
        return f"{self.input} ({self.change})" if self.kind == "outdated_call" else self.replaced_by


def old_callers(query: ReportQuery) -> list[OldCaller]:
    """Who still calls retired names, outdated inputs, deprecated tools or aliases, with counts
    and first and last seen; sorted by kind, then most calls first. Read from the daily rollup,
    so days whose raw events the retention dropped still count."""
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
        key = (caller.kind, caller.client, caller.tenant, caller.tool, caller.replaced_by, caller.input, caller.change)
        if (seen := merged.get(key)) is not None:
            caller = OldCaller(
                *key,
                calls=seen.calls + caller.calls,
                first_seen=min(seen.first_seen, caller.first_seen),
                last_seen=max(seen.last_seen, caller.last_seen),
            )
        merged[key] = caller
    return sorted(merged.values(), key=lambda c: (c.kind, -c.calls, c.client, c.tenant, c.tool, c.input, c.change))


@dataclass(frozen=True, slots=True)
class StillCalling:
    """Who still calls one tool name the old way: one kind of call (`deprecated_tool`,
    `alias_call`, `retired_tool`, `outdated_call`) by one host and tenant, with how many calls
    and when they were first and last seen in the report's range. `client` is the client name,
    or the host family when the report groups by family; `family` is always the host family."""

    tool: str
    kind: str
    client: str
    family: str
    tenant: str
    calls: int
    first_seen: datetime
    last_seen: datetime

    @property
    def how(self) -> str:
        return OLD_CALLER_LABELS.get(self.kind, self.kind)


def still_calling(query: ReportQuery) -> list[StillCalling]:
    """Who still calls each tool name the old way, by host (client name or family) and tenant:
    the old callers' rollup summed over what replaced the tool or which input changed. Sorted
    by tool, kind, then most calls first."""
    days = OldCallerDaily.objects.filter(day__gte=query.start_time, day__lt=query.end_time)
    grouped = (
        _filtered(days, query)
        .values("tool", "kind", "client", "tenant")
        .annotate(calls=Sum("calls"), first_seen=Min("first_seen"), last_seen=Max("last_seen"))
        .order_by()
    )
    families = Families.load()
    merged: dict[tuple[str, str, str, str], StillCalling] = {}
    for row in grouped:
        family = families.family_of(row["client"])
        client = family if query.group == "family" else row["client"]
        key = (row["tool"], row["kind"], client, row["tenant"])
        seen = merged.get(key)
        merged[key] = StillCalling(
            *key[:3],
            family,
            row["tenant"],
            calls=row["calls"] + (seen.calls if seen else 0),
            first_seen=min(row["first_seen"], seen.first_seen) if seen else row["first_seen"],
            last_seen=max(row["last_seen"], seen.last_seen) if seen else row["last_seen"],
        )
    return sorted(merged.values(), key=lambda c: (c.tool, c.kind, -c.calls, c.client, c.tenant))


def _host_of(query: ReportQuery) -> Callable[[str], str] | None:
    """How a row's client is reported: None for the exact name, else its family."""
    return Families.load().family_of if query.group == "family" else None


class UnsupportedFilter(ValueError):
    """A widget report was asked for with a filter widget events do not record (tenant, backend)."""


def _filtered[Q_: QuerySet](rows: Q_, query: ReportQuery) -> Q_:
    if query.call_filters and not hasattr(rows.model, "tenant"):
        raise UnsupportedFilter(
            f"widget events record no {' or '.join(query.call_filters)}: widget figures cannot be filtered by it"
        )
    if query.tenant:
        rows = rows.filter(tenant="" if query.tenant == NO_TENANT else query.tenant)
    if query.backend:
        rows = rows.filter(backend=query.backend)
    if query.tool:
        rows = rows.filter(tool=query.tool)
    if query.client:
        rows = rows.filter(client=query.client)
    if query.family:
        clients, _ = hosts_and_tools(query)
        rows = rows.filter(client__in=Families.load().members(query.family, clients))
    return rows


# -- Drill-down: the calls and events behind a figure, from the raw events ---------------------------

MAX_GROUPS = 50
"""The most message groups a drill-down lists (the largest first); the rest are counted."""


@dataclass(frozen=True, slots=True)
class MessageGroup:
    """Failing calls (or widget events) with one code and message: how many, first and last seen."""

    code: str
    message: str
    count: int
    first: datetime
    last: datetime
    detail: str = ""
    """For widget events: the stage (or source) the failure happened at."""


def failing_calls(query: ReportQuery, *, code: str = "", message: str | None = None) -> QuerySet[ToolCallEvent]:
    """The calls in the range that did not end `ok` (or ended with `code`), newest first; with
    `message`, only those with that error message. Reads the index of failing calls."""
    calls = ToolCallEvent.objects.filter(time__gte=query.start_time, time__lt=query.end_time).exclude(outcome="ok")
    if code:
        calls = calls.filter(outcome=code)
    if message is not None:
        calls = calls.filter(error=message)
    return _filtered(calls, query).order_by("-time", "-event_id")


def failing_call_groups(query: ReportQuery, *, code: str = "") -> tuple[list[MessageGroup], int]:
    """The failing calls grouped by code and message, the largest groups first (at most
    MAX_GROUPS), and how many groups there are."""
    grouped = (
        failing_calls(query, code=code)
        .order_by()
        .values("outcome", "error")
        .annotate(count=Count("*"), first=Min("time"), last=Max("time"))
    )
    groups = [MessageGroup(row["outcome"], row["error"], row["count"], row["first"], row["last"]) for row in grouped]
    groups.sort(key=lambda g: (-g.count, g.code, g.message))
    return groups[:MAX_GROUPS], len(groups)


def failing_event_groups(query: ReportQuery, *, kinds: Iterable[str] = FAILING_KINDS) -> tuple[list[MessageGroup], int]:
    """The failing widget events grouped by kind, stage and error, the largest groups first."""
    grouped = (
        failing_events(query, kinds=kinds)
        .order_by()
        .values("kind", "stage", "error_code", "error")
        .annotate(count=Count("*"), first=Min("time"), last=Max("time"))
    )
    groups = [
        MessageGroup(
            row["kind"],
            " ".join(filter(None, (row["error_code"], row["error"]))),
            row["count"],
            row["first"],
            row["last"],
            detail=row["stage"],
        )
        for row in grouped
    ]
    groups.sort(key=lambda g: (-g.count, g.code, g.message))
    return groups[:MAX_GROUPS], len(groups)


def call_details(request_ids: Iterable[str], start: datetime, end: datetime) -> dict[str, tuple[str, str]]:
    """The tenant and backend of the calls with these request ids logged from `start` to `end`
    (a widget event names the call that reported it: its tenant and backend are that call's)."""
    ids = [request_id for request_id in set(request_ids) if request_id]
    if not ids:
        return {}
    rows = ToolCallEvent.objects.filter(request_id__in=ids, time__gte=start, time__lt=end)
    return {
        request_id: (tenant, backend)
        for request_id, tenant, backend in rows.values_list("request_id", "tenant", "backend").order_by()
    }


REQUEST_WINDOW = timedelta(days=1)
"""How far around a given time a request id is looked for: raw events have no index by request id
(it would slow every insert), so the look-up reads the time index of a bounded range."""


@dataclass(frozen=True, slots=True)
class RequestEvent:
    """One event of a call, tool call or app status, in time order."""

    time: datetime
    message: str
    kind: str
    tool: str
    client: str
    fields: dict[str, object]


def request_events(request_id: str, start: datetime, end: datetime, *, limit: int = 200) -> list[RequestEvent]:
    """Every stored event with `request_id` from `start` to `end`: its tool call and the app-status
    events logged for it (app data, widget reports), and the widget reports that name it as the
    call that delivered their data (`delivery_request_id`: each report is its own call, whose
    request id its fields give as `report_request_id`), oldest first."""
    from core.app_status import BY_KIND

    found: list[RequestEvent] = []
    calls = ToolCallEvent.objects.filter(request_id=request_id, time__gte=start, time__lt=end).order_by("time")
    for call in calls[:limit]:
        fields = {name: getattr(call, name, None) for name in CALL_DETAIL_FIELDS}
        found.append(
            RequestEvent(
                call.time,
                "Tool call",
                call.outcome,
                call.tool,
                call.client,
                {k: v for k, v in fields.items() if v not in (None, "")},
            )
        )
    own_or_named = Q(request_id=request_id) | Q(delivery_request_id=request_id)
    events = AppStatusEvent.objects.filter(own_or_named, time__gte=start, time__lt=end).order_by("time")
    for event in events[:limit]:
        kind = BY_KIND.get(event.kind)
        names = [n for n in (kind.__struct_fields__ if kind else ()) if n not in ("tool", "client", "request_id")]
        fields = {name: getattr(event, name, None) for name in names if hasattr(event, name)}
        if event.request_id != request_id:  # a widget's report of the data this call delivered
            fields["report_request_id"] = event.request_id
        fields["replica"] = getattr(event, "replica", "")
        message = kind.MESSAGE if kind else "Unknown app-status message"
        found.append(
            RequestEvent(
                event.time,
                message,
                event.kind,
                event.tool,
                event.client,
                {k: v for k, v in fields.items() if v not in (None, "")},
            )
        )
    return sorted(found, key=lambda e: e.time)


CALL_DETAIL_FIELDS = (
    "outcome",
    "error",
    "tenant",
    "backend",
    "transport",
    "user_agent",
    "upstream_calls",
    "upstream_rate_limited",
    "upstream_ms",
    "total_ms",
    "bytes",
    "replica",
)


@dataclass(frozen=True, slots=True)
class RetentionGap:
    """Raw events before `kept_from` were dropped by the retention; `counted` of them (from the
    rollups, which stay) fall in the range and cannot be listed."""

    kept_from: datetime
    counted: int


def retention_gap(query: ReportQuery, family: str) -> RetentionGap | None:
    """What the retention removed from the range's drill-down: None when nothing was."""
    from analytics.models import IngestionMark

    mark = IngestionMark.objects.filter(family=family).first()
    if mark is None or mark.kept_from is None or query.start_time >= mark.kept_from:
        return None
    cut = min(mark.kept_from, query.end_time)
    if family == "ToolCall":
        counted = _filtered(ToolCallHourly.objects.filter(hour__gte=query.start_time, hour__lt=cut), query).aggregate(
            n=Sum(F("calls") - F("outcome_ok"), default=0)
        )["n"]
    else:
        counted = _filtered(
            AppStatusHourlyCount.objects.filter(hour__gte=query.start_time, hour__lt=cut, kind__in=FAILING_KINDS),
            query,
        ).aggregate(n=Sum("count", default=0))["n"]
    return RetentionGap(mark.kept_from, int(counted or 0))
