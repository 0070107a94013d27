"""The evidence behind a product decision, and the action it leads to, one click away: the tools a
host is listed but never calls (deprecate one), the names agents call that do not exist (alias one
to the tool it meant), the failing calls agents correct (see the arguments that fail), the
protocol and client versions each host speaks; and one client session's timeline.

Every figure comes from analytics/selectors/evidence.py and analytics/selectors/timeline.py. The
actions are links to the governance admin's add forms, pre-filled through their GET parameters:
the admin's services make the change and record it in the governance history."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse

from analytics.selectors import ReportQuery
from analytics.selectors.evidence import (
    MAX_ROWS,
    argument_failures,
    client_versions,
    corrections,
    listed_against_called,
    never_called,
    protocol_versions,
    refused_requests,
    tool_statuses,
    unknown_names,
)
from analytics.selectors.timeline import MAX_EVENTS, session_timeline
from analytics.tables import Col, Table, as_count, as_number, as_rate
from analytics.views.base import csv_export, form_and_query, link, narrowed, render_page, shown_table

SHOWN_ROWS = 10
"""Rows a table shows before its "show all" link."""
ALIAS_ADD = "admin:tools_toolalias_add"
DEPRECATION_ADD = "admin:tools_deprecatedtool_add"
"""The governance admin's add forms the actions open (their GET parameters pre-fill them)."""
LISTINGS = "The tools/list answers that named the tool."
LISTING_BYTES = "What naming it in those listings cost: its entries' UTF-8 bytes."
FAILURES = "Failing calls made in a session: invalid_arguments, unknown_tool, retired."
CORRECTED = "Those the same session followed with a successful call of the tool, or of one the error named."


def admin_form(route: str, **initial: str) -> str:
    """The URL of the admin add form `route`, pre-filled with `initial`; "" when the governance
    admin is not installed."""
    try:
        return f"{reverse(route)}?{urlencode(initial)}"
    except NoReverseMatch:
        return ""


def alias_url(name: str, target: str, *, listed: bool = False) -> str:
    """The alias form, pre-filled to make `name` an alias of `target`: a name a release listed is
    picked from the ledger (`tool`), one no release listed is typed (`name`: saving adds it to the
    ledger)."""
    return admin_form(ALIAS_ADD, **{"tool" if listed else "name": name, "target": target})


def deprecation_url(tool: str) -> str:
    """The deprecation form, pre-filled with `tool`."""
    return admin_form(DEPRECATION_ADD, tool=tool)


def session_url(session: str) -> str:
    """The timeline page of the client session `session` ("" without one)."""
    return reverse("analytics:session", args=[session[:128]]) if session else ""


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if isinstance(value, datetime) else "—"


def _hosts(value: Any) -> str:
    return ", ".join(f"{host} ({calls:,})" for host, calls in value or ()) or "—"


def _text(value: Any) -> str:
    return str(value) if value not in (None, "") else "—"


def _tables(query: ReportQuery) -> dict[str, Callable[[], Table]]:
    """Every table of the evidence page, made when asked for (a CSV download makes one)."""
    known = tool_statuses()
    days = query.whole_days

    def listed() -> Table:
        found = listed_against_called(query)
        rows = [
            {
                "host": r.host,
                "tool": r.tool,
                "listings": r.listings,
                "listing_bytes": r.listing_bytes,
                "calls": r.calls,
                "bytes_per_call": r.bytes_per_call,
                "never": "never called" if not r.calls else "",
            }
            for r in found.rows
        ]
        return Table(
            "listed-called",
            "Listed against called, by host and tool",
            [
                Col("host", "Host", header=True, wrap=True),
                Col("tool", "Tool"),
                Col("listings", "Listings", "tools/list answers that named the tool", numeric=True, show=as_count),
                Col(
                    "listing_bytes",
                    "Listing bytes",
                    "what naming it in those listings cost",
                    numeric=True,
                    show=as_count,
                ),
                Col("calls", "Calls", "tool calls of it, every outcome", numeric=True, show=as_count),
                Col("bytes_per_call", "Listing bytes per call", numeric=True, show=as_number),
                Col("never", "", show=str),
            ],
            rows,
            default_sort="-listing_bytes",
            empty="No tools/list answered in this range.",
        )

    def unused() -> Table:
        rows = [
            {
                "tool": n.tool,
                "hosts": ", ".join(n.hosts),
                "listings": n.listings,
                "listing_bytes": n.listing_bytes,
                "status": n.status or "not in the ledger",
                "action": "Deprecate…" if n.deprecable and deprecation_url(n.tool) else "",
                "action_link": deprecation_url(n.tool) if n.deprecable else "",
            }
            for n in never_called(query, known).rows
        ]
        return Table(
            "never-called",
            "Listed, never called",
            [
                Col("tool", "Tool", header=True),
                Col("hosts", "Listed to", wrap=True, show=_text),
                Col("listings", "Listings", numeric=True, show=as_count),
                Col("listing_bytes", "Listing bytes spent", numeric=True, show=as_count),
                Col("status", "Status"),
                Col("action", "Action", show=str, link=lambda r: r["action_link"]),
            ],
            rows,
            default_sort="-listing_bytes",
            empty="Every tool listed in this range was called.",
            csv_columns=["tool", "hosts", "listings", "listing_bytes", "status"],
        )

    def unknown() -> Table:
        rows = []
        for n in unknown_names(query, known).rows:
            offered = alias_url(n.name, n.closest, listed=bool(n.status)) if n.aliasable else ""
            rows.append(
                {
                    "name": n.name,
                    "calls": n.calls,
                    "hosts": n.hosts,
                    "first_seen": n.first_seen,
                    "last_seen": n.last_seen,
                    "closest": n.closest,
                    "status": n.status or "no such tool",
                    "action": f"Alias this name to {n.closest}…" if offered else "",
                    "action_link": offered,
                }
            )
        return Table(
            "unknown-names",
            "Each name called, the most calls first",
            [
                Col("name", "Name called", header=True, wrap=True),
                Col("calls", "Calls", numeric=True, show=as_count),
                Col("hosts", "Hosts", wrap=True, show=_hosts, sort_key="calls"),
                Col("first_seen", "First seen (UTC)", show=_when),
                Col("last_seen", "Last seen (UTC)", show=_when),
                Col("closest", "Closest tool", show=_text),
                Col("status", "Status"),
                Col("action", "Action", show=str, link=lambda r: r["action_link"]),
            ],
            rows,
            default_sort="-calls",
            empty="No call named a tool that does not exist in this range.",
            csv_columns=["name", "calls", "first_seen", "last_seen", "closest", "status"],
        )

    def corrected() -> Table:
        rows = []
        for c in corrections(query).rows:
            own = narrowed(days, host=c.host, tool=c.tool)
            rows.append(
                {
                    "host": c.host,
                    "tool": c.tool,
                    "failures": c.failures,
                    "corrected": c.corrected,
                    "rate": c.rate,
                    "by_outcome": ", ".join(f"{o} {f:,} ({k:,} corrected)" for o, f, k in c.by_outcome),
                    "arguments_link": f"{link('analytics:evidence', own)}#failing-arguments-title",
                    "calls_link": link("analytics:failing_calls", own, **{"class": "caller"}),
                }
            )
        return Table(
            "self-correction",
            "Corrected share, by host and tool",
            [
                Col("host", "Host", header=True, wrap=True),
                Col("tool", "Tool"),
                Col(
                    "failures",
                    "Failing calls",
                    "in a session: invalid_arguments, unknown_tool, retired",
                    numeric=True,
                    show=as_count,
                ),
                Col(
                    "corrected",
                    "Corrected",
                    "followed by a successful call in the same session",
                    numeric=True,
                    show=as_count,
                ),
                Col("rate", "Corrected share", numeric=True, show=as_rate),
                Col("by_outcome", "By outcome", wrap=True, sort_key="failures"),
                Col(
                    "arguments",
                    "Arguments",
                    show=lambda v: "See the failing arguments",
                    link=lambda r: r["arguments_link"],
                ),
                Col("calls", "Calls", show=lambda _: "See the failing calls", link=lambda r: r["calls_link"]),
            ],
            rows,
            default_sort="-failures",
            empty="No failing call in a session in this range.",
            csv_columns=["host", "tool", "failures", "corrected", "rate", "by_outcome"],
        )

    def arguments() -> Table:
        rows = [
            {"tool": a.tool, "path": a.path, "calls": a.calls, "hosts": a.hosts} for a in argument_failures(query).rows
        ]
        return Table(
            "failing-arguments",
            "Failing arguments, by tool and path",
            [
                Col("tool", "Tool", header=True),
                Col("path", "Argument path", wrap=True),
                Col("calls", "Calls", "invalid_arguments calls whose error named it", numeric=True, show=as_count),
                Col("hosts", "Hosts", wrap=True, show=_hosts, sort_key="calls"),
            ],
            rows,
            default_sort="-calls",
            empty="No invalid_arguments call named an argument in this range.",
            csv_columns=["tool", "path", "calls"],
        )

    def protocols() -> Table:
        rows = [
            {
                "host": r.host,
                "protocol_version": r.protocol_version,
                "sessions": r.sessions,
                "listed": r.listed,
                "calls": r.calls,
                "refused": r.refused,
            }
            for r in protocol_versions(query).rows
        ]
        return Table(
            "protocol-versions",
            "Protocol versions, by host",
            [
                Col("host", "Host", header=True, wrap=True),
                Col("protocol_version", "Protocol version", show=lambda v: v or "(not known)"),
                Col("sessions", "Sessions started", numeric=True, show=as_count),
                Col("listed", "Listings", numeric=True, show=as_count),
                Col("calls", "Tool calls", numeric=True, show=as_count),
                Col("refused", "Refused requests", numeric=True, show=as_count),
            ],
            rows,
            empty="No session, listing, call or refused request in this range.",
        )

    def clients() -> Table:
        rows = [
            {
                "host": r.host,
                "client": r.client,
                "client_version": r.client_version,
                "protocol_version": r.protocol_version,
                "sessions": r.sessions,
            }
            for r in client_versions(query).rows
        ]
        return Table(
            "client-versions",
            "Client names and versions",
            [
                Col("host", "Host", header=True, wrap=True),
                Col("client", "Client name", wrap=True),
                Col("client_version", "Client version", show=lambda v: v or "(none sent)"),
                Col("protocol_version", "Protocol version", show=lambda v: v or "(not known)"),
                Col("sessions", "Sessions started", numeric=True, show=as_count),
            ],
            rows,
            empty="No session started in this range.",
        )

    def refused() -> Table:
        rows = [
            {
                "host": r.host,
                "method": r.method,
                "code": r.code,
                "count": r.count,
                "first_seen": r.first_seen,
                "last_seen": r.last_seen,
            }
            for r in refused_requests(query).rows
        ]
        return Table(
            "refused-requests",
            "Refused JSON-RPC requests",
            [
                Col("host", "Host", header=True, wrap=True),
                Col("method", "Method", wrap=True),
                Col("code", "Error code", numeric=True, show=str),
                Col("count", "Requests", numeric=True, show=as_count),
                Col("first_seen", "First seen (UTC)", show=_when),
                Col("last_seen", "Last seen (UTC)", show=_when),
            ],
            rows,
            default_sort="-count",
            empty="No request was refused in this range.",
        )

    return {
        "listed-called": listed,
        "never-called": unused,
        "unknown-names": unknown,
        "self-correction": corrected,
        "failing-arguments": arguments,
        "protocol-versions": protocols,
        "client-versions": clients,
        "refused-requests": refused,
    }


SECTIONS = (
    ("listed", "Listed against called", ("listed-called", "never-called")),
    ("unknown", "Names that do not exist", ("unknown-names",)),
    ("correction", "Self-correction", ("self-correction", "failing-arguments")),
    ("protocol", "Protocol and client mix", ("protocol-versions", "client-versions", "refused-requests")),
)
"""The page's sections, in order: (anchor, title, its tables)."""


@staff_member_required
def evidence_page(request: HttpRequest) -> HttpResponse:
    """The four kinds of evidence, each with what it counts and cannot see, and its action."""
    form, query = form_and_query(request)
    tables = _tables(query)
    if (response := csv_export(request, query, tables)) is not None:
        return response
    shown = {table_id: shown_table(request, make(), limit=SHOWN_ROWS) for table_id, make in tables.items()}
    return render_page(
        request,
        "analytics/evidence.html",
        "Evidence",
        form,
        query,
        active="evidence",
        sections=[
            {"id": anchor, "title": title, "tables": [shown[table_id] for table_id in ids]}
            for anchor, title, ids in SECTIONS
        ],
        days=query.whole_days,
        widened=query.since is not None,
        unfiltered=("tenant",) if query.tenant else (),
        max_rows=MAX_ROWS,
    )


@staff_member_required
def session_page(request: HttpRequest, session: str) -> HttpResponse:
    """Every stored event of one client session in time order: the session's start, its listings,
    calls, refused requests and widget events, at most `MAX_EVENTS` of them."""
    form, query = form_and_query(request)
    key = session[:128]
    found = session_timeline(key)
    return render_page(
        request,
        "analytics/session.html",
        f"Session {key}",
        form,
        query,
        active="",
        session=key,
        timeline=found,
        events=found.rows,
        max_events=MAX_EVENTS,
    )
