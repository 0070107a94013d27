"""The evidence endpoints: the evidence page's figures (listed against called, names that do not
exist, self-correction, protocol and client mix) and one client session's timeline. The same
selectors as the pages (analytics/selectors/evidence.py, analytics/selectors/timeline.py); every
list bounded, with `total`, `returned` and `truncated`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from analytics.api.base import Filters, Report, report_head
from analytics.selectors.evidence import (
    Bounded,
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
from analytics.selectors.timeline import session_timeline

router = Router()


class Listed(Schema):
    host: str
    tool: str
    listings: int = Field(description="tools/list answers that named the tool.")
    listing_bytes: int = Field(description="What its entries in those listings cost, in UTF-8 bytes.")
    calls: int = Field(description="Tool calls of it, every outcome.")


class NeverCalledRow(Schema):
    tool: str
    listings: int
    listing_bytes: int = Field(description="Listing bytes spent on a tool no host in scope called.")
    hosts: list[str] = Field(description="The hosts it was listed to.")
    status: str = Field(description="`live`, `deprecated` tools included, or the name's other status.")


class HostCalls(Schema):
    host: str
    calls: int


class UnknownNameRow(Schema):
    name: str = Field(description="The tool name as sent (outcome `unknown_tool`).")
    calls: int
    hosts: list[HostCalls]
    first_seen: datetime
    last_seen: datetime
    closest: str = Field(description="The live tool whose name is most like it; empty when none is alike enough.")
    status: str = Field(description="Empty for a name no release listed, else `dropped`, `retired`, `alias`, `live`.")
    aliasable: bool = Field(description="Whether the page offers to make it an alias of `closest`.")


class OutcomeSplit(Schema):
    outcome: str
    failures: int
    corrected: int


class CorrectionRow(Schema):
    host: str
    tool: str
    failures: int = Field(description="Failing calls in a session: invalid_arguments, unknown_tool, retired.")
    corrected: int = Field(description="Those the same session followed with a successful call in the window.")
    rate: float | None
    by_outcome: list[OutcomeSplit]


class ArgumentRow(Schema):
    tool: str
    path: str
    calls: int
    hosts: list[HostCalls]


class ProtocolRowSchema(Schema):
    host: str
    protocol_version: str = Field(description="Empty when the requests did not say.")
    sessions: int
    listed: int
    calls: int
    refused: int


class ClientVersionRow(Schema):
    host: str
    client: str
    client_version: str
    protocol_version: str
    sessions: int


class RefusedRow(Schema):
    host: str
    method: str
    code: int = Field(description="The JSON-RPC error code.")
    count: int
    first_seen: datetime
    last_seen: datetime


def _page(schema: type[Schema]) -> type[Schema]:
    return type(
        f"{schema.__name__}List",
        (Schema,),
        {
            "__annotations__": {"total": int, "returned": int, "truncated": bool, "rows": list[schema]},  # type: ignore[valid-type]
            "__module__": __name__,
        },
    )


class Evidence(Schema):
    report: Report
    listed: _page(Listed)  # type: ignore[valid-type]
    never_called: _page(NeverCalledRow)  # type: ignore[valid-type]
    unknown_names: _page(UnknownNameRow)  # type: ignore[valid-type]
    corrections: _page(CorrectionRow)  # type: ignore[valid-type]
    argument_failures: _page(ArgumentRow)  # type: ignore[valid-type]
    protocol_versions: _page(ProtocolRowSchema)  # type: ignore[valid-type]
    client_versions: _page(ClientVersionRow)  # type: ignore[valid-type]
    refused_requests: _page(RefusedRow)  # type: ignore[valid-type]


def _list(found: Bounded[Any], shaped: Any = None) -> dict[str, Any]:
    rows = [shaped(row) for row in found.rows] if shaped else found.rows
    return {"total": found.total, "returned": found.returned, "truncated": found.truncated, "rows": rows}


def _hosts(pairs: Any) -> list[dict[str, Any]]:
    return [{"host": host, "calls": calls} for host, calls in pairs]


@router.get("/evidence", response=Evidence, url_name="evidence")
def evidence(request: HttpRequest, filters: Query[Filters]) -> dict[str, Any]:
    """The evidence page's figures over the whole UTC days of the range (the tenant filter does not apply)."""
    query = filters.query()
    known = tool_statuses()
    return {
        "report": report_head(query.whole_days),
        "listed": _list(listed_against_called(query)),
        "never_called": _list(never_called(query, known)),
        "unknown_names": _list(
            unknown_names(query, known),
            lambda n: {**{k: getattr(n, k) for k in UnknownNameRow.model_fields}, "hosts": _hosts(n.hosts)},
        ),
        "corrections": _list(
            corrections(query),
            lambda c: {
                "host": c.host,
                "tool": c.tool,
                "failures": c.failures,
                "corrected": c.corrected,
                "rate": c.rate,
                "by_outcome": [{"outcome": o, "failures": f, "corrected": k} for o, f, k in c.by_outcome],
            },
        ),
        "argument_failures": _list(
            argument_failures(query),
            lambda a: {"tool": a.tool, "path": a.path, "calls": a.calls, "hosts": _hosts(a.hosts)},
        ),
        "protocol_versions": _list(protocol_versions(query)),
        "client_versions": _list(client_versions(query)),
        "refused_requests": _list(refused_requests(query)),
    }


class TimelineRow(Schema):
    time: datetime
    source: str = Field(description="`exchange`, `call` or `widget`.")
    message: str
    kind: str = Field(description="The exchange kind, the call's outcome or the widget event's kind.")
    tool: str
    client: str
    request_id: str
    fields: dict[str, str]

    @staticmethod
    def resolve_fields(event: Any) -> dict[str, str]:
        return dict(event.fields)


class Timeline(Schema):
    session: str
    total: int
    returned: int
    truncated: bool
    events: list[TimelineRow]


@router.get("/sessions/{session}", response=Timeline, url_name="session")
def session(request: HttpRequest, session: str) -> dict[str, Any]:
    """Every stored event of one client session, oldest first (at most 500)."""
    found = session_timeline(session[:128])
    return {
        "session": session[:128],
        "total": found.total,
        "returned": found.returned,
        "truncated": found.truncated,
        "events": found.rows,
    }
