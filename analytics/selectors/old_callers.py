"""Who still calls retired names, outdated inputs, deprecated tools or aliases, from the old
callers' daily rollup (which outlives the raw events' retention): by caller for the Widgets page,
by tool name for the governance pages."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from django.db.models import Max, Min, Sum

from analytics.families import Families
from analytics.models import OLD_CALLER_DIMENSIONS, OLD_CALLER_LABELS, OldCallerDaily
from analytics.selectors.query import ReportQuery
from analytics.selectors.scope import _filtered, _host_of


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
    so days whose raw events the retention dropped still count. An outdated input's row counts
    the calls that sent that input (the per-input breakdown): a call sending two is on two rows;
    `still_calling` counts it once."""
    days = OldCallerDaily.objects.filter(day__gte=query.whole_days.start_time, day__lt=query.end_time)
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
    the old callers' rollup summed over what replaced the tool or which input changed, each call
    counted once (`tool_calls`: a call sending two outdated inputs is one call, not two). Sorted
    by tool, kind, then most calls first."""
    days = OldCallerDaily.objects.filter(day__gte=query.whole_days.start_time, day__lt=query.end_time)
    grouped = (
        _filtered(days, query)
        .values("tool", "kind", "client", "tenant")
        .annotate(calls=Sum("tool_calls"), first_seen=Min("first_seen"), last_seen=Max("last_seen"))
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
