"""The rows a report reads: the rollups covering its range exactly, with its filters applied, and
the hosts and tools its filters can choose from. One place for the filters, so a report cannot
forget one (or apply one that widget events do not record)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from django.db.models import F, Model, Q, QuerySet
from django.db.models.functions import TruncDay

from analytics.families import Families
from analytics.models import AppStatusDailyCount, ToolCallDaily
from analytics.selectors.query import NO_TENANT, ReportQuery, spans


def rollups(
    query: ReportQuery,
    hourly: type[Model],
    daily: type[Model],
    *,
    bucketed: bool = False,
    start: datetime | None = None,
    end: datetime | None = None,
) -> list[QuerySet]:
    """The rollup rows covering the query's range (or `[start, end)`) exactly, its filters applied:
    the daily rollup's rows for the whole UTC days, the hourly one's for the hours at the edges
    (`spans`); for hourly buckets the hourly rows alone. With `bucketed`, each row is annotated
    with its `bucket`: its hour, or its UTC day (an edge hour's day). At most two querysets, so a
    report is at most two SQL queries, whatever its length and however many hosts."""
    start, end = start or query.start_time, end or query.end_time
    if bucketed and query.bucket == "hour":
        rows = hourly.objects.filter(hour__gte=start, hour__lt=end).annotate(bucket=F("hour"))  # type: ignore[attr-defined]
        return [_filtered(rows, query)]
    edges, days = spans(start, end)
    sets: list[QuerySet] = []
    if edges:
        covered = Q()
        for a, b in edges:
            covered |= Q(hour__gte=a, hour__lt=b)
        rows = hourly.objects.filter(covered)  # type: ignore[attr-defined]
        sets.append(rows.annotate(bucket=TruncDay("hour", tzinfo=UTC)) if bucketed else rows)
    if days is not None:
        rows = daily.objects.filter(day__gte=days[0], day__lt=days[1])  # type: ignore[attr-defined]
        sets.append(rows.annotate(bucket=F("day")) if bucketed else rows)
    return [_filtered(rows, query) for rows in sets]


def hosts_and_tools(query: ReportQuery) -> tuple[list[str], list[str]]:
    """Every host (client) and every tool with an app-status or tool-call event in the query's
    range, whatever its tool and host filters: the filters' choices."""
    clients, tools = set(), set()
    for model, moment in ((AppStatusDailyCount, "day"), (ToolCallDaily, "day")):
        pairs = (
            model.objects.filter(**{f"{moment}__gte": query.whole_days.start_time, f"{moment}__lt": query.end_time})
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
