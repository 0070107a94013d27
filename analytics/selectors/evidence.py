"""Evidence for a product decision, read from the evidence rollups (docs/analytics.md, "Evidence
pages"): which tools a host is listed but never calls, which names agents call that do not exist,
which failing calls the agent corrects, which arguments fail, and which protocol and client
versions each host speaks.

Every figure is summed in SQL from a daily rollup over the whole UTC days the query's range
touches (the rollups are daily only, like the old callers), grouped by exact client name; rows are
then mapped to host families when the query groups by family (analytics/families.py) and summed.
The tool, host and host-family filters apply; the backend filter to the tables that record it
(the listings and the calls); the tenant filter to none (the evidence rollups do not record the
tenant: the pages say so). Lists are bounded: `Bounded` says how many rows there were in all.

Each tool name's state on the tool surface (live, deprecated, an alias, retired, dropped, app-only)
comes from the function the `TOOL_STATUSES` setting names (the project wiring: this app imports
neither the tool catalogue nor governance).
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Max, Min, Model, QuerySet, Sum
from django.utils.module_loading import import_string

from analytics.families import Families
from analytics.models import (
    ArgumentFailureDaily,
    CorrectionDaily,
    ListedToolDaily,
    ProtocolMixDaily,
    RefusedRequestDaily,
    ToolCallDaily,
    UnknownToolDaily,
)
from analytics.selectors.query import ReportQuery

MAX_ROWS = 500
"""The most rows an evidence list returns (the largest first); `Bounded.total` counts them all."""
CLOSEST_CUTOFF = 0.6
"""How alike (difflib's ratio, 0 to 1) a live tool's name must be to an unknown name to be
offered as the tool it meant."""
CORRECTED_OUTCOMES = ("invalid_arguments", "unknown_tool", "retired")
"""The failing outcomes the self-correction figures follow (analytics' `CorrectionDaily`)."""
PROTOCOL_KINDS = ("session", "listed", "call", "refused")
"""What `ProtocolMixDaily` counts per protocol version: sessions started, listings, calls,
refused requests."""


@dataclass(frozen=True, slots=True)
class Bounded[T]:
    """The first rows of a list and how many there were in all."""

    rows: list[T]
    total: int

    @property
    def returned(self) -> int:
        return len(self.rows)

    @property
    def truncated(self) -> bool:
        return self.total > len(self.rows)


def bounded[T](rows: list[T], limit: int | None = None) -> Bounded[T]:
    """The first `limit` (default `MAX_ROWS`) of `rows`, and how many there were."""
    limit = MAX_ROWS if limit is None else limit
    return Bounded(rows[:limit], len(rows))


# --- Scope -----------------------------------------------------------------------------------------


def _days[M: Model](model: type[M], query: ReportQuery, *, tool: bool = True) -> QuerySet[M]:
    """`model`'s rows of the whole UTC days the query touches, its host (or family), tool (with
    `tool`) and backend (where the model records one) filters applied."""
    rows = model.objects.filter(  # type: ignore[attr-defined]
        day__gte=query.whole_days.start_time, day__lt=query.end_time
    )
    fields = {f.name for f in model._meta.get_fields()}
    if tool and query.tool:
        rows = rows.filter(tool=query.tool)
    if query.backend and "backend" in fields:
        rows = rows.filter(backend=query.backend)
    if query.client:
        rows = rows.filter(client=query.client)
    if query.family:
        clients = list(rows.values_list("client", flat=True).distinct().order_by())
        rows = rows.filter(client__in=Families.load().members(query.family, clients))
    return rows


def _host_of(query: ReportQuery) -> Callable[[str], str]:
    """How a row's client is reported: its host family, or the exact name."""
    if query.group == "family":
        return Families.load().family_of
    return lambda client: client


def tool_statuses() -> Mapping[str, str]:
    """Every tool name the server knows, with its state on the tool surface (`live`,
    `deprecated`, `alias`, `retired`, `dropped`, `app-only`), from the function `TOOL_STATUSES`
    names; empty when none is configured."""
    path = getattr(settings, "TOOL_STATUSES", "")
    return import_string(path)() if path else {}


def name_status(name: str, known: Mapping[str, str]) -> str:
    """`name`'s state (`tool_statuses`), or "" for a name no release listed."""
    return known.get(name, "")


def closest_tool(name: str, live: list[str]) -> str:
    """The live tool whose name is most like `name` ("" when none is alike enough)."""
    found = difflib.get_close_matches(name, live, n=1, cutoff=CLOSEST_CUTOFF)
    return found[0] if found else ""


# --- Listed against called -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListedRow:
    """One host's (client name or family) listings of one tool against its calls of it."""

    host: str
    tool: str
    listings: int
    listing_bytes: int
    calls: int

    @property
    def bytes_per_call(self) -> float | None:
        return self.listing_bytes / self.calls if self.calls else None


def listed_against_called(query: ReportQuery) -> Bounded[ListedRow]:
    """Per host and tool, listings against calls (`_listed_rows`), bounded."""
    return bounded(_listed_rows(query))


def _listed_rows(query: ReportQuery) -> list[ListedRow]:
    """Per host and tool: how often the tool was listed (a `tools/list` answered naming it),
    the bytes those listings of it cost, and the calls of it (`ToolCallDaily`, every outcome).
    Tools no host in scope was listed in the range are left out (a call to an unknown name is not
    a tool); a host that calls a tool it was not listed in the range (a listing cached from
    before) has 0 listings. The most listing bytes first."""
    host = _host_of(query)
    listed = (
        _days(ListedToolDaily, query)
        .values("client", "tool")
        .annotate(listings=Sum("listings"), listing_bytes=Sum("bytes"))
        .order_by()
    )
    merged: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in listed:
        figures = merged[(host(row["client"]), row["tool"])]
        figures[0] += row["listings"] or 0
        figures[1] += row["listing_bytes"] or 0
    tools = {tool for _, tool in merged}
    called = (
        _days(ToolCallDaily, query)
        .filter(tool__in=tools)
        .values("client", "tool")
        .annotate(calls=Sum("calls"))
        .order_by()
    )
    for calls in called:
        merged[(host(calls["client"]), calls["tool"])][2] += calls["calls"] or 0
    rows = [ListedRow(key[0], key[1], *figures) for key, figures in merged.items()]
    rows.sort(key=lambda r: (-r.listing_bytes, -r.listings, r.host, r.tool))
    return rows


@dataclass(frozen=True, slots=True)
class NeverCalled:
    """A tool listed in the range that no host in scope called: what listing it cost."""

    tool: str
    listings: int
    listing_bytes: int
    hosts: tuple[str, ...]
    """The hosts it was listed to."""
    status: str = ""
    """Its state (`tool_statuses`): a `live` tool can be deprecated (a deprecated one already is,
    an app-only one is never listed to a model)."""

    @property
    def deprecable(self) -> bool:
        return self.status == "live"


def never_called(query: ReportQuery, known: Mapping[str, str] | None = None) -> Bounded[NeverCalled]:
    """The tools listed in the range and called by no host in scope, the most listing bytes first."""
    known = tool_statuses() if known is None else known
    by_tool: dict[str, list[ListedRow]] = defaultdict(list)
    for row in _listed_rows(query):
        by_tool[row.tool].append(row)
    found = [
        NeverCalled(
            tool,
            sum(r.listings for r in rows),
            sum(r.listing_bytes for r in rows),
            tuple(sorted(r.host for r in rows if r.listings)),
            name_status(tool, known),
        )
        for tool, rows in by_tool.items()
        if not any(r.calls for r in rows)
    ]
    found.sort(key=lambda n: (-n.listing_bytes, n.tool))
    return bounded(found)


# --- Names that do not exist -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UnknownName:
    """A tool name called that no tool answers (outcome `unknown_tool`), as sent."""

    name: str
    calls: int
    hosts: tuple[tuple[str, int], ...]
    """Each host that called it, with its calls, the most first."""
    first_seen: datetime
    last_seen: datetime
    closest: str = ""
    """The live tool listed in the range whose name is most like it ("" when none is alike
    enough, or when the name is a live tool or an alias: it answers as itself or as its target)."""
    status: str = ""
    """Its state (`tool_statuses`), or "" for a name no release listed."""

    @property
    def aliasable(self) -> bool:
        """Whether making it an alias of `closest` is offered: a name no release listed, or one a
        release dropped; never a live tool, an alias already, or a retired name."""
        return bool(self.closest) and self.status in ("", "dropped")


def unknown_names(query: ReportQuery, known: Mapping[str, str] | None = None) -> Bounded[UnknownName]:
    """Every tool name called in the range that no tool answers, with its calls, the hosts that
    called it, when first and last seen, and the live tool it most likely meant (as the server's
    answer to it does: the closest of the tools listed, here those listed in scope in the range,
    else of every live tool); the most calls first."""
    known = tool_statuses() if known is None else known
    live = sorted(name for name, status in known.items() if status == "live")
    listed = set(_days(ListedToolDaily, query, tool=False).values_list("tool", flat=True).distinct().order_by())
    live = [name for name in live if name in listed] or live
    host = _host_of(query)
    grouped = (
        _days(UnknownToolDaily, query)
        .values("tool", "client")
        .annotate(calls=Sum("calls"), first_seen=Min("first_seen"), last_seen=Max("last_seen"))
        .order_by()
    )
    names: dict[str, dict[str, Any]] = {}
    for row in grouped:
        seen = names.setdefault(
            row["tool"], {"hosts": defaultdict(int), "first": row["first_seen"], "last": row["last_seen"]}
        )
        seen["hosts"][host(row["client"])] += row["calls"] or 0
        seen["first"], seen["last"] = min(seen["first"], row["first_seen"]), max(seen["last"], row["last_seen"])
    found = [
        UnknownName(
            name,
            sum(seen["hosts"].values()),
            tuple(sorted(seen["hosts"].items(), key=lambda item: (-item[1], item[0]))),
            seen["first"],
            seen["last"],
            closest_tool(name, live) if name_status(name, known) in ("", "dropped", "retired") else "",
            name_status(name, known),
        )
        for name, seen in names.items()
    ]
    found.sort(key=lambda n: (-n.calls, n.name))
    return bounded(found)


# --- Self-correction -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Correction:
    """One host's failing calls of one tool (`invalid_arguments`, `unknown_tool`, `retired`, in
    a client session) and how many the agent corrected: a successful call of the same tool, or
    of a tool the error pointed to, later in the same session within the correction window."""

    host: str
    tool: str
    failures: int
    corrected: int
    by_outcome: tuple[tuple[str, int, int], ...] = field(default=())
    """(outcome, failures, corrected) per failing outcome, the most failures first."""

    @property
    def rate(self) -> float | None:
        return self.corrected / self.failures if self.failures else None


def corrections(query: ReportQuery) -> Bounded[Correction]:
    """Per host and tool, the failing calls made in a session and the corrected share; the most
    failures first."""
    host = _host_of(query)
    grouped = (
        _days(CorrectionDaily, query)
        .values("client", "tool", "outcome")
        .annotate(failures=Sum("failures"), corrected=Sum("corrected"))
        .order_by()
    )
    merged: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for row in grouped:
        figures = merged[(host(row["client"]), row["tool"])][row["outcome"]]
        figures[0] += row["failures"] or 0
        figures[1] += row["corrected"] or 0
    found = []
    for (name, tool), outcomes in merged.items():
        parts = sorted(((o, f, c) for o, (f, c) in outcomes.items()), key=lambda p: (-p[1], p[0]))
        found.append(Correction(name, tool, sum(p[1] for p in parts), sum(p[2] for p in parts), tuple(parts)))
    found.sort(key=lambda c: (-c.failures, c.host, c.tool))
    return bounded(found)


@dataclass(frozen=True, slots=True)
class ArgumentFailure:
    """An argument path that `invalid_arguments` errors of one tool named, and how often."""

    tool: str
    path: str
    calls: int
    hosts: tuple[tuple[str, int], ...]


def argument_failures(query: ReportQuery) -> Bounded[ArgumentFailure]:
    """Per tool and argument path, the `invalid_arguments` calls whose error named it, with the
    hosts that made them; the most calls first."""
    host = _host_of(query)
    grouped = (
        _days(ArgumentFailureDaily, query).values("tool", "path", "client").annotate(calls=Sum("calls")).order_by()
    )
    merged: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in grouped:
        merged[(row["tool"], row["path"])][host(row["client"])] += row["calls"] or 0
    found = [
        ArgumentFailure(
            tool, path, sum(hosts.values()), tuple(sorted(hosts.items(), key=lambda item: (-item[1], item[0])))
        )
        for (tool, path), hosts in merged.items()
    ]
    found.sort(key=lambda a: (-a.calls, a.tool, a.path))
    return bounded(found)


# --- Protocol and client mix -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProtocolRow:
    """One host's exchanges under one protocol version: sessions started, listings, tool calls
    and refused requests ("" when the version was not known)."""

    host: str
    protocol_version: str
    sessions: int = 0
    listed: int = 0
    calls: int = 0
    refused: int = 0


def protocol_versions(query: ReportQuery) -> Bounded[ProtocolRow]:
    """Per host and protocol version, what was exchanged under it; hosts A to Z, newest version first."""
    host = _host_of(query)
    grouped = (
        _days(ProtocolMixDaily, query, tool=False)
        .values("client", "protocol_version", "kind")
        .annotate(count=Sum("count"))
        .order_by()
    )
    merged: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: dict.fromkeys(PROTOCOL_KINDS, 0))
    for row in grouped:
        if row["kind"] in PROTOCOL_KINDS:
            merged[(host(row["client"]), row["protocol_version"])][row["kind"]] += row["count"] or 0
    found = [
        ProtocolRow(name, version, f["session"], f["listed"], f["call"], f["refused"])
        for (name, version), f in merged.items()
    ]
    found.sort(key=lambda r: r.protocol_version, reverse=True)
    found.sort(key=lambda r: r.host.casefold())
    return bounded(found)


@dataclass(frozen=True, slots=True)
class ClientVersion:
    """Sessions a client (exact name, `clientInfo.name`) started with one version under one
    protocol version; `host` is its family when the report groups by family, else the name."""

    host: str
    client: str
    client_version: str
    protocol_version: str
    sessions: int


def client_versions(query: ReportQuery) -> Bounded[ClientVersion]:
    """Per client name and version (and protocol version agreed), the sessions started; by host,
    the most sessions first."""
    host = _host_of(query)
    grouped = (
        _days(ProtocolMixDaily, query, tool=False)
        .filter(kind="session")
        .values("client", "client_version", "protocol_version")
        .annotate(sessions=Sum("count"))
        .order_by()
    )
    found = [
        ClientVersion(
            host(row["client"]), row["client"], row["client_version"], row["protocol_version"], row["sessions"] or 0
        )
        for row in grouped
    ]
    found.sort(key=lambda r: (r.host.casefold(), -r.sessions, r.client, r.client_version, r.protocol_version))
    return bounded(found)


@dataclass(frozen=True, slots=True)
class Refused:
    """JSON-RPC requests one host sent with one method that were answered with one error code."""

    host: str
    method: str
    code: int
    count: int
    first_seen: datetime
    last_seen: datetime


def refused_requests(query: ReportQuery) -> Bounded[Refused]:
    """Per host, method and JSON-RPC error code, the refused requests; the most first."""
    host = _host_of(query)
    grouped = (
        _days(RefusedRequestDaily, query, tool=False)
        .values("client", "method", "code")
        .annotate(count=Sum("count"), first_seen=Min("first_seen"), last_seen=Max("last_seen"))
        .order_by()
    )
    merged: dict[tuple[str, str, int], Refused] = {}
    for row in grouped:
        key = (host(row["client"]), row["method"], row["code"])
        seen = merged.get(key)
        merged[key] = Refused(
            *key,
            count=(row["count"] or 0) + (seen.count if seen else 0),
            first_seen=min(row["first_seen"], seen.first_seen) if seen else row["first_seen"],
            last_seen=max(row["last_seen"], seen.last_seen) if seen else row["last_seen"],
        )
    found = sorted(merged.values(), key=lambda r: (-r.count, r.host, r.method, r.code))
    return bounded(found)
