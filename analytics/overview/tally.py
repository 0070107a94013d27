"""What a window holds, per host and per tool, summed from the rollups: calls by outcome, latency
histograms and widget reports. One grouped query per family of events and rollup table (two when
the window has whole days and edge hours), never one per host: the overview's cost does not grow
with the hosts."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.db.models import BigIntegerField, F, Q, Sum
from django.db.models.functions import Cast

from analytics.models import (
    LATENCY_COLUMNS,
    OTHER_OUTCOMES_COLUMN,
    OUTCOME_COLUMNS,
    AppStatusDailyCount,
    AppStatusHourlyCount,
    ToolCallDaily,
    ToolCallHourly,
)
from analytics.overview.window import Window
from analytics.selectors import Bucket, ReportQuery, rollups
from analytics.tool_stats import CALLER_ERRORS, ERROR_CODES, OK, histogram_quantile
from core.app_status import Drawn, Failed

_CODE_COLUMNS = {code: OUTCOME_COLUMNS[code] for code in ERROR_CODES}
_CALL_SUMS = (
    "calls",
    OUTCOME_COLUMNS[OK],
    "upstream_calls",
    "total_timed",
    *LATENCY_COLUMNS["total"],
    *_CODE_COLUMNS.values(),
    OTHER_OUTCOMES_COLUMN,
)
_WIDGET_KINDS = (Drawn.KIND, Failed.KIND)
_LATENCY = LATENCY_COLUMNS["total"]


def _caller_sum() -> Any:
    """The sum of a rollup's caller-error outcome columns."""
    caller: Any = F(OUTCOME_COLUMNS[CALLER_ERRORS[0]])
    for code in CALLER_ERRORS[1:]:
        caller = caller + F(OUTCOME_COLUMNS[code])
    return Sum(caller)


_LIGHT_SUMS = {"calls": Sum("calls"), "ok": Sum(OUTCOME_COLUMNS[OK]), "caller": _caller_sum()}
_FULL_SUMS = {name: Cast(Sum(name), BigIntegerField()) for name in _CALL_SUMS}
"""Cast: PostgreSQL sums a `bigint` column as `numeric`, which reaches Python as a Decimal (slower to
read, and the overview reads 30 of them a row)."""
_CODES = (*_CODE_COLUMNS.items(), ("other", OTHER_OUTCOMES_COLUMN))


def _rows(
    query: ReportQuery,
    window: Window,
    hourly: Any,
    daily: Any,
    by: Sequence[str],
    sums: Mapping[str, Any],
    where: Q | None = None,
    bucket: Bucket | None = None,
) -> list[dict[str, Any]]:
    """`sums` per group of `by` over the window: the daily rollup for its whole days, the hourly
    one for its edges (the query's host, tool, tenant and backend filters applied); with `bucket`,
    per hour or UTC day too (`by` then starts with `bucket`)."""
    merged: dict[tuple, dict[str, Any]] = {}
    sets = rollups(
        replace(query, bucket=bucket or query.bucket),
        hourly,
        daily,
        bucketed=bucket is not None,
        start=window.start,
        end=window.end,
    )
    for rows in sets:
        rows = rows.filter(where) if where is not None else rows
        # No `by`: one row of sums (`values()` without names would group by every column).
        found_rows = rows.values(*by).annotate(**sums).order_by() if by else [rows.aggregate(**sums)]
        for row in found_rows:
            if not by and row[next(iter(sums))] is None:
                continue  # no row at all
            key = tuple(row[name] for name in by)
            found = merged.setdefault(key, {**dict(zip(by, key, strict=True)), **dict.fromkeys(sums, 0)})
            for name in sums:
                found[name] += row[name] or 0
    return list(merged.values())


@dataclass(slots=True)
class Tally:
    """What one window holds for one group (everything, a host or a tool)."""

    calls: int = 0
    ok: int = 0
    caller_errors: int = 0
    upstream_calls: int = 0
    timed: int = 0
    latency: list[int] = field(default_factory=lambda: [0] * len(LATENCY_COLUMNS["total"]))
    drawn: int = 0
    failed: int = 0
    codes: dict[str, int] = field(default_factory=dict)
    """The errors by code (`other` for codes this version does not know)."""

    @property
    def errors(self) -> int:
        return self.calls - self.ok

    @property
    def server_errors(self) -> int:
        """Server and upstream errors: every error that is not the caller's."""
        return self.errors - self.caller_errors

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.calls if self.calls else None

    @property
    def server_error_rate(self) -> float | None:
        return self.server_errors / self.calls if self.calls else None

    @property
    def caller_error_rate(self) -> float | None:
        return self.caller_errors / self.calls if self.calls else None

    @property
    def reported(self) -> int:
        """Widgets that reported back (drawn + failed): the failure rate's sample."""
        return self.drawn + self.failed

    @property
    def failure_rate(self) -> float | None:
        return self.failed / self.reported if self.reported else None

    @property
    def p95_ms(self) -> float | None:
        return histogram_quantile(0.95, self.timed, self.latency)

    def top_code(self, caller: bool) -> str:
        """The most frequent error code of one class (caller's, or server and upstream), or ""."""
        codes = [(n, code) for code, n in self.codes.items() if n and (code in CALLER_ERRORS) == caller]
        return max(codes)[1] if codes else ""

    def add_calls(self, row: Mapping[str, Any]) -> None:
        self.calls += int(row["calls"])
        self.ok += int(row[OUTCOME_COLUMNS[OK]])
        self.upstream_calls += int(row["upstream_calls"])
        self.timed += int(row["total_timed"])
        self.latency = [had + int(row[column]) for had, column in zip(self.latency, _LATENCY, strict=True)]
        for code, column in _CODES:
            if count := row[column]:
                self.codes[code] = self.codes.get(code, 0) + int(count)
                if code in CALLER_ERRORS:
                    self.caller_errors += int(count)

    def add_widgets(self, kind: str, count: int) -> None:
        if kind == Drawn.KIND:
            self.drawn += count
        elif kind == Failed.KIND:
            self.failed += count


@dataclass(slots=True)
class Tallies:
    """A window's tallies: in all, per host (client or family) and per tool."""

    total: Tally = field(default_factory=Tally)
    hosts: dict[str, Tally] = field(default_factory=dict)
    tools: dict[str, Tally] = field(default_factory=dict)
    widgets_counted: bool = True
    """False when a filter widget events do not record (tenant, backend) is on."""


def tallies(
    query: ReportQuery,
    window: Window,
    host: Callable[[str], str] | None = None,
    *,
    light: bool = False,
    by_host: bool = True,
) -> Tallies:
    """The window's tool calls and widget reports, per host and per tool, from the rollups: one
    grouped query per family of events and rollup table. `light`: the calls, caller errors and
    widget reports only (what a baseline needs), not the latency histograms nor each code.
    Without `by_host`: in all only (`hosts` and `tools` empty)."""
    result = Tallies(widgets_counted=not query.call_filters)
    name_of = host or (lambda client: client)
    sums = _LIGHT_SUMS if light else _FULL_SUMS
    by: tuple[str, ...] = ("client", "tool") if by_host else ()
    for row in _rows(query, window, ToolCallHourly, ToolCallDaily, by, sums):
        groups = (_of(result.hosts, name_of(row["client"])), _of(result.tools, row["tool"])) if by_host else ()
        for tally in (result.total, *groups):
            if light:
                tally.calls += int(row["calls"])
                tally.ok += int(row["ok"])
                tally.caller_errors += int(row["caller"])
            else:
                tally.add_calls(row)
    if result.widgets_counted:
        where = Q(kind__in=_WIDGET_KINDS)
        count = {"count": Sum("count")}
        for row in _rows(query, window, AppStatusHourlyCount, AppStatusDailyCount, (*by, "kind"), count, where):
            groups = (_of(result.hosts, name_of(row["client"])), _of(result.tools, row["tool"])) if by_host else ()
            for tally in (result.total, *groups):
                tally.add_widgets(row["kind"], int(row["count"]))
    return result


def _of(tallies: dict[str, Tally], name: str) -> Tally:
    if (found := tallies.get(name)) is None:
        found = tallies[name] = Tally()
    return found
