"""Tool-call reports: calls, errors by code, latency percentiles, upstream calls and answer bytes.

Read from the rollups only: the daily one (`ToolCallDaily`, outcomes in columns) for the whole
UTC days of a range, the hourly one for the hours at its edges and for hourly buckets
(`analytics.selectors.rollups`); so a 30-day report costs the same however many calls it covers,
and a window of hours is exact to the hour. A report covers whole UTC days or a window of hours (a
`ReportQuery`, shared with the widget reports) and groups by any of bucket, host (client name or
family), tool, backend and tenant.

Error codes fall in two classes (`CALLER_ERRORS`, `SERVER_ERRORS`): the caller's mistakes, which
only the caller can fix, and the server's and TomTom's failures, which are ours (docs/analytics.md,
"Outcome classes"; the alerts sort them the same way).

Percentiles are estimated from the rollup's cumulative histograms (`LATENCY_BOUNDS_MS`), the way
Prometheus' `histogram_quantile` does: the bucket holding the rank is found and the value
interpolated linearly inside it. A rank beyond the last bound (a minute) is reported as that
bound. Upstream percentiles cover only the calls that made at least one upstream request.
docs/analytics.md describes every stat by name (TOOL_CALL_STATS); a test keeps the two in step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

from django.db.models import QuerySet, Sum

from analytics.models import (
    KNOWN_OUTCOMES,
    LATENCY_BOUNDS_MS,
    LATENCY_COLUMNS,
    OUTCOME_COLUMNS,
    ToolCallDaily,
    ToolCallHourly,
)
from analytics.selectors import ReportQuery, rollups
from analytics.selectors.scope import _host_of
from core.errors import CALLER_MISTAKES, ErrorCode

CallDimension = Literal["bucket", "client", "tool", "backend", "tenant"]
CALL_DIMENSIONS: tuple[str, ...] = get_args(CallDimension)
OK = "ok"
OTHER_ERRORS = "other_errors"
ERROR_CODES: tuple[str, ...] = tuple(code.value for code in ErrorCode)
"""The closed set of error codes (core/errors.py); an outcome outside it counts as `other_errors`."""
CALLER_ERRORS: tuple[str, ...] = tuple(code.value for code in CALLER_MISTAKES)
"""Caller errors: the call's arguments, tool name or backend, or its TomTom key (none given, or
refused). Only the caller can fix them; every other error (`internal`, TomTom's `unavailable`,
`retry_later`, `malformed`, a code this version does not know) is a server or upstream error."""
SERVER_ERRORS: tuple[str, ...] = tuple(code for code in ERROR_CODES if code not in CALLER_ERRORS)
"""Server and upstream errors: ours or TomTom's (and `other_errors`, a newer server's codes)."""
_SUMS = (
    "calls",
    "upstream_calls",
    "bytes",
    "total_timed",
    "total_ms_sum",
    "upstream_timed",
    "upstream_ms_sum",
    *LATENCY_COLUMNS["total"],
    *LATENCY_COLUMNS["upstream"],
)
_BY_OUTCOME = tuple(OUTCOME_COLUMNS[outcome] for outcome in KNOWN_OUTCOMES)
_ALL_SUMS = (*_SUMS, *_BY_OUTCOME)
"""A rollup's figures, then its calls by outcome: `ok` and each error code (the other codes are
errors too: `errors` is every call not `ok`)."""
_COUNTS = ("calls", *_BY_OUTCOME)
"""The same, for `figures="counts"`: the calls, and the calls by outcome."""


@dataclass(frozen=True, slots=True)
class CallStat:
    name: str
    title: str
    description: str


TOOL_CALL_STATS: tuple[CallStat, ...] = (
    CallStat("calls", "Calls", "Tool calls (every outcome)."),
    CallStat("errors", "Errors", "Calls that ended with an error code (any but `ok`)."),
    CallStat("error_rate", "Error rate", "`errors / calls`."),
    *(CallStat(code, code, f"Calls that ended with `{code}`.") for code in ERROR_CODES),
    CallStat(OTHER_ERRORS, "other", "Calls that ended with a code this version does not know (a newer server)."),
    CallStat("p50_total_ms", "p50 ms", "Median total time of a call, in ms (estimated from the histogram)."),
    CallStat("p95_total_ms", "p95 ms", "95th percentile of the total time, in ms."),
    CallStat("p50_upstream_ms", "p50 upstream ms", "Median time spent in TomTom requests, of calls that made one."),
    CallStat("p95_upstream_ms", "p95 upstream ms", "95th percentile of the upstream time, of calls that made one."),
    CallStat("upstream_calls", "Upstream calls", "TomTom requests made, retries included."),
    CallStat("bytes", "Answer bytes", "Bytes of answer text sent to the model: the model-context cost."),
    CallStat("bytes_per_call", "Bytes per call", "`bytes / calls`, rounded."),
)
CALL_STAT_NAMES: tuple[str, ...] = tuple(stat.name for stat in TOOL_CALL_STATS)


@dataclass(frozen=True, slots=True)
class CallRow:
    """One group's tool-call figures; dimensions not grouped by are None."""

    bucket: datetime | None
    client: str | None
    tool: str | None
    backend: str | None
    tenant: str | None
    sums: Mapping[str, float]
    outcomes: Mapping[str, int]

    @property
    def calls(self) -> int:
        """How many tool calls the group has."""
        return int(self.sums["calls"])

    @property
    def errors(self) -> int:
        """How many of its calls ended with an error (any outcome but `ok`)."""
        return self.calls - self.outcomes.get(OK, 0)

    def stats(self) -> dict[str, float | int | None]:
        if "total_timed" not in self.sums:
            raise ValueError("a row of tool_call_stats(figures='counts') holds its calls and outcomes only")
        calls, errors = self.calls, self.errors
        by_code = {code: self.outcomes.get(code, 0) for code in ERROR_CODES}
        return {
            "calls": calls,
            "errors": errors,
            "error_rate": errors / calls if calls else None,
            **by_code,
            OTHER_ERRORS: errors - sum(by_code.values()),
            "p50_total_ms": self._percentile("total", 0.50),
            "p95_total_ms": self._percentile("total", 0.95),
            "p50_upstream_ms": self._percentile("upstream", 0.50),
            "p95_upstream_ms": self._percentile("upstream", 0.95),
            "upstream_calls": int(self.sums["upstream_calls"]),
            "bytes": int(self.sums["bytes"]),
            "bytes_per_call": round(self.sums["bytes"] / calls) if calls else None,
        }

    def as_dict(self) -> dict[str, object]:
        """Dimensions, then every stat by name (the API's and the template's row)."""
        dimensions = {"bucket": self.bucket, "client": self.client, "tool": self.tool}
        return {**dimensions, "backend": self.backend, "tenant": self.tenant, **self.stats()}

    def _percentile(self, metric: str, quantile: float) -> float | None:
        return histogram_quantile(
            quantile, int(self.sums[f"{metric}_timed"]), [int(self.sums[c]) for c in LATENCY_COLUMNS[metric]]
        )


def histogram_quantile(quantile: float, count: int, cumulative: Sequence[int]) -> float | None:
    """The `quantile` of `count` values whose cumulative counts at LATENCY_BOUNDS_MS are
    `cumulative`, interpolated linearly inside its bucket (rounded to 0.1 ms); None without values."""
    if count <= 0:
        return None
    rank = quantile * count
    lower, below = 0.0, 0
    for bound, at_most in zip(LATENCY_BOUNDS_MS, cumulative, strict=True):
        if at_most >= rank:
            inside = at_most - below
            share = (rank - below) / inside if inside else 1.0
            return round(lower + (bound - lower) * share, 1)
        lower, below = float(bound), at_most
    return float(LATENCY_BOUNDS_MS[-1])


_GroupKey = tuple[datetime | None, str | None, str | None, str | None, str | None]
"""A group's dimensions in CallRow's field order; None where not grouped by."""


def tool_call_stats(
    query: ReportQuery, *, by: Sequence[CallDimension], figures: Literal["all", "counts"] = "all"
) -> list[CallRow]:
    """Tool-call figures per group of `by`, sorted by its dimensions; groups without calls are absent.

    Hourly buckets read `ToolCallHourly`; everything else reads `ToolCallDaily` (a row per day
    and combination) for whole days and `ToolCallHourly` for a window's edge hours. Both hold
    every outcome together, the calls by outcome in columns. With `figures="counts"` only the
    calls and their outcomes are summed (what an error-rate chart draws: a sum of 11 columns a
    row instead of 50); such rows have no `stats()`."""
    host = _host_of(query) if "client" in by else None
    columns = _ALL_SUMS if figures == "all" else _COUNTS
    figure_count = len(columns) - len(_BY_OUTCOME)
    sums: dict[_GroupKey, dict[str, float]] = {}
    outcomes: dict[_GroupKey, dict[str, int]] = {}
    positions = [(CALL_DIMENSIONS.index(name), index) for index, name in enumerate(by)]
    width = len(by)
    grouped = (
        _grouped(rows, by, columns) for rows in rollups(query, ToolCallHourly, ToolCallDaily, bucketed="bucket" in by)
    )
    for row in (row for rows in grouped for row in rows):
        dimensions: list = [None] * len(CALL_DIMENSIONS)
        for position, index in positions:
            dimensions[position] = row[index]
        if host and dimensions[1] is not None:
            dimensions[1] = host(dimensions[1])
        key: _GroupKey = tuple(dimensions)
        if (group := sums.get(key)) is None:
            sums[key] = group = dict.fromkeys(columns[:figure_count], 0)
            outcomes[key] = {}
        values = row[width:]
        for name, value in zip(columns[:figure_count], values, strict=False):
            group[name] += value or 0
        by_outcome = outcomes[key]
        for outcome, calls in zip(KNOWN_OUTCOMES, values[figure_count:], strict=True):
            if calls:
                by_outcome[outcome] = by_outcome.get(outcome, 0) + int(calls)
    result = [CallRow(*key, sums=sums[key], outcomes=outcomes[key]) for key in sums]
    # Sorted here, not in SQL: collations differ between databases, and the rows are few.
    return sorted(
        result,
        key=lambda r: (r.bucket or query.start_time, r.client or "", r.tool or "", r.backend or "", r.tenant or ""),
    )


def _grouped(rows: QuerySet, by: Sequence[str], columns: Sequence[str]) -> QuerySet:
    """Rows of `by`'s values, then the sum of each of `columns`, per group of `by`."""
    sums = {f"s_{name}": Sum(name) for name in columns}
    grouped = rows.values(*by).annotate(**sums).order_by()
    return grouped.values_list(*by, *sums)
