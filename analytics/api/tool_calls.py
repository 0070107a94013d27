"""The tool-call endpoints: calls, errors by code, latency, TomTom requests and answer bytes, per
bucket and host and tool, per bucket and host, or over the whole range by any dimensions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema
from pydantic import create_model

from analytics.api.base import Filters, Report, report_head
from analytics.selectors import ReportQuery
from analytics.tool_stats import ERROR_CODES, OTHER_ERRORS, TOOL_CALL_STATS, CallDimension, tool_call_stats

router = Router()


ERROR_CODE_STATS = frozenset({*ERROR_CODES, OTHER_ERRORS})
_CALL_TYPES = {"calls": int, "errors": int, "upstream_calls": int, "bytes": int}
# Any: create_model's field definitions are (type form, FieldInfo) pairs, which mypy cannot
# tell apart from its own keyword options when they come in a ** mapping.
_TOOL_CALL_FIELDS: dict[str, Any] = {
    "bucket": (datetime | None, Field(description="Start of the UTC hour or day; null when not grouped by it.")),
    "client": (str | None, Field(description="The host (client name or family); null when not grouped by it.")),
    "tool": (str | None, Field(description="Null when not grouped by it.")),
    "backend": (str | None, Field(description="The TomTom backend; null when not grouped by it.")),
    "tenant": (str | None, Field(description="Empty for callers with an API key; null when not grouped by it.")),
    **{
        stat.name: (
            _CALL_TYPES.get(stat.name, int if stat.name in ERROR_CODE_STATS else float | None),
            Field(description=stat.description),
        )
        for stat in TOOL_CALL_STATS
    },
}
ToolCallRow = create_model("ToolCallRow", __base__=Schema, **_TOOL_CALL_FIELDS)


class ToolCallReport(Report):
    by: list[str]
    rows: list[ToolCallRow]


def _call_report(query: ReportQuery, by: tuple[CallDimension, ...]) -> dict[str, object]:
    rows = [row.as_dict() for row in tool_call_stats(query, by=by)]
    return {**report_head(query), "by": list(by), "rows": rows}


@router.get("/tool-calls", response=ToolCallReport, url_name="tool_calls")
def tool_calls(request: HttpRequest, filters: Query[Filters]) -> dict[str, object]:
    """Tool calls per bucket, host and tool."""
    return _call_report(filters.query(), ("bucket", "client", "tool"))


@router.get("/tool-calls/by-host", response=ToolCallReport, url_name="tool_calls_by_host")
def tool_calls_by_host(request: HttpRequest, filters: Query[Filters]) -> dict[str, object]:
    """Tool calls per bucket and host, all tools together: the tool-call page's chart."""
    return _call_report(filters.query(), ("bucket", "client"))


@router.get("/tool-calls/totals", response=ToolCallReport, url_name="tool_call_totals")
def tool_call_totals(
    request: HttpRequest,
    filters: Query[Filters],
    by: Annotated[
        list[Literal["client", "tool", "backend", "tenant"]] | None,
        Query(description="Dimensions to group by; default host and tool."),
    ] = None,
) -> dict[str, object]:
    """Tool calls over the whole range, per host and tool (or the dimensions in `by`): the tool-call page's tables."""
    dimensions = tuple(dict.fromkeys(by or ("client", "tool")))
    return _call_report(filters.query(), dimensions)
