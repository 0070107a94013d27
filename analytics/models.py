"""App-status events as logged, and their hourly counts.

`AppStatusEvent` is one row per app-status line (docs/app-status.md), never changed after it is
written: the raw events. `AppStatusHourlyCount` is the rollup the reports read: how many events
of each kind a client caused with a tool in one UTC hour. The two are kept in step by the
ingestion store (analytics/ingest/store.py), in the same transaction that inserts the events.

`ToolCallEvent` and `ToolCallHourly` are the same pair for the per-call `Tool call` line, and
`HostFamily` groups client names into families for every report.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, get_args

from django.core.exceptions import ValidationError
from django.db import models

from analytics.ingest.decode import APP_STATUS, TOOL_CALLS, Family
from core import app_status
from core.app_status import APP_STATUS_EVENTS, UNKNOWN_KIND, StageName
from core.calls import OUTCOMES

DROPPED_KIND = "dropped"
"""The kind a widget report is stored with when it went over a session cap (analytics/ingest/caps.py):
kept, as every event, but counted nowhere but in the funnel's `dropped`."""
KIND_CHOICES = [(event.KIND, event.MESSAGE) for event in APP_STATUS_EVENTS] + [
    (UNKNOWN_KIND, "Unknown app-status message"),
    (DROPPED_KIND, "Widget report over a session cap (not counted)"),
]

FAILING_KINDS: tuple[str, ...] = tuple(event.KIND for event in app_status.FAILING)
"""The kinds the drill-down lists: every event that means a widget did not draw as it should."""

OLD_CALLER_KINDS: tuple[str, ...] = tuple(event.KIND for event in app_status.OLD_CALLERS)
"""Governance answers: calls to a retired tool name, with inputs that changed, to a deprecated
tool, or through an alias."""
OLD_CALLER_LABELS: dict[str, str] = {
    "retired_tool": "retired tool",
    "outdated_call": "outdated input",
    "deprecated_tool": "deprecated tool",
    "alias_call": "alias",
}
"""How the reports name each kind of old caller."""
assert set(OLD_CALLER_LABELS) == set(OLD_CALLER_KINDS), "name every old-caller kind in OLD_CALLER_LABELS"
OLD_CALLER_DIMENSIONS: tuple[str, ...] = ("kind", "client", "tenant", "tool", "replaced_by", "input", "change")
"""What an old caller is reported by: the kind, who called (client name and tenant) what, and
what replaces it or changed."""


class AppStatusEvent(models.Model):
    """One app-status line. `event_id` is its identity (128 bits of the SHA-256 of the line, see
    analytics/ingest/decode.py): the same line ingested twice is one row. Its other columns are the
    fields the app-status events declare (`declared_columns`). `raw` is the line when the columns
    do not hold all of it, else empty."""

    time = models.DateTimeField()
    event_id = models.BinaryField(max_length=16, editable=False)
    kind = models.CharField(max_length=16, choices=KIND_CHOICES)
    raw = models.TextField()
    # And a column per field the app-status events declare (core/app_status.py): `declared_columns`.
    if TYPE_CHECKING:
        tool: str
        client: str
        request_id: str
        stage: str
        error: str
        replica: str

    class Meta:
        constraints = [
            # The identity is unique. `time` leads because it is part of the hashed line anyway,
            # and logs arrive in time order: new entries land at the end of the index, which
            # also serves every time-range query.
            models.UniqueConstraint(fields=["time", "event_id"], name="analytics_event_identity"),
        ]
        indexes = [
            # The drill-down and the old-callers report read these few kinds (about a tenth).
            models.Index(
                fields=["kind", "time"],
                name="analytics_event_notable",
                condition=models.Q(kind__in=FAILING_KINDS + OLD_CALLER_KINDS),
            ),
            # The session timeline reads one client session's events in time order.
            models.Index(fields=["session", "time"], name="analytics_event_session", condition=~models.Q(session="")),
        ]

    def __str__(self) -> str:
        return f"{self.time:%Y-%m-%d %H:%M:%S} {self.kind} {self.client} {self.tool}"


class AppStatusHourlyCount(models.Model):
    """Events of one kind, by one client, with one tool, in the UTC hour starting at `hour`.

    Only rows with a count above zero exist. Daily figures are sums of 24 hours.
    """

    hour = models.DateTimeField()
    client = models.TextField()
    tool = models.TextField()
    kind = models.CharField(max_length=16, choices=KIND_CHOICES)
    count = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["hour", "client", "tool", "kind"], name="analytics_hourly_unique")
        ]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H:00} {self.client} {self.tool} {self.kind}: {self.count}"


class AppStatusDailyCount(models.Model):
    """Events of one kind, by one client, with one tool, on the UTC day starting at `day`: the sum
    of its hours' `AppStatusHourlyCount`s, added to in the same transaction (analytics/ingest/rollups.py).
    Daily and whole-range reports read it."""

    day = models.DateTimeField()
    client = models.TextField()
    tool = models.TextField()
    kind = models.CharField(max_length=16, choices=KIND_CHOICES)
    count = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["day", "client", "tool", "kind"], name="analytics_daily_unique")]

    def __str__(self) -> str:
        return f"{self.day:%Y-%m-%d} {self.client} {self.tool} {self.kind}: {self.count}"


class OldCallerDaily(models.Model):
    """Calls of a retired tool name, with an outdated input, to a deprecated tool or through an
    alias (the app-status kinds in `OLD_CALLER_KINDS`), per UTC day, client name, tenant ("" for
    a caller with an API key), tool and what changed, with when they were first and last seen
    that day: the old-callers' and who-still-calls reports' rollup, added to in the transaction
    that stores the events (analytics/ingest/rollups.py). Like every rollup it outlives the raw
    events."""

    day = models.DateTimeField()
    kind = models.CharField(max_length=16, choices=KIND_CHOICES)
    client = models.TextField()
    tenant = models.TextField(default="")
    tool = models.TextField()
    replaced_by = models.TextField()
    input = models.TextField()
    change = models.TextField()
    calls = models.BigIntegerField()
    """The calls that sent this row's input (for `outdated_call`; one line per outdated input)."""
    tool_calls = models.BigIntegerField(default=0)
    """The calls counted once each: a call with several outdated inputs counts on the row of the
    first of them (by input and change) only. Who-still-calls totals add these up."""
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["day", *OLD_CALLER_DIMENSIONS], name="analytics_oldcaller_daily_unique")
        ]

    def __str__(self) -> str:
        return f"{self.day:%Y-%m-%d} {self.client} {self.tool} {self.kind}: {self.calls}"


FUNNEL_STAGES: tuple[str, ...] = get_args(StageName)
"""The stages a widget reports it failed at, each a column of `WidgetFunnelDaily`."""
FUNNEL_OUTCOMES: tuple[str, ...] = (
    "drawn",
    *(f"failed_{stage}" for stage in FUNNEL_STAGES),
    "failed_other",
    "cancelled",
)
"""The `WidgetFunnelDaily` columns that count reports by outcome (`failed_other`: a stage this
version does not know, a newer widget's)."""
FUNNEL_GUARDS: tuple[str, ...] = ("mismatched", "dropped")
"""The reports the funnel did not take as they came: `mismatched`, reports naming a delivery of
another client session (counted, as unjoined, on their own row); `dropped`, reports over a
session cap (counted on no other figure, on the row of their day and client with the tool
`OVER_CAP`)."""
FUNNEL_FIGURES: tuple[str, ...] = ("delivered", "reported", *FUNNEL_OUTCOMES, *FUNNEL_GUARDS)
SIZE_BUCKETS: tuple[tuple[str, int | None], ...] = (
    ("lt_10kb", 10_000),
    ("10kb_100kb", 100_000),
    ("100kb_1mb", 1_000_000),
    ("ge_1mb", None),
)
"""Answer-size buckets of a delivery's app data (`raw_bytes`): each name with its upper bound
(exclusive); `unknown` when the line has no size, `error` for an error result (`delivery` `error`)."""
ERROR_SIZE = "error"
"""The answer-size bucket of an error result sent to a widget (`App data` with `delivery` `error`)."""
UNJOINED = ""
"""The `size` (and `simplified`) of a `WidgetFunnelDaily` row of reports joined to no delivery."""
OVER_CAP = ""
"""The `tool` of the `WidgetFunnelDaily` row counting a day's and client's `dropped` reports: not
the tools they named, which may be made up (that is what the cap on tool names bounds)."""


class WidgetFunnelDaily(models.Model):
    """The widget funnel of one UTC day, host (client name), tool, answer-size bucket and whether
    the delivery's geometry was simplified: the deliveries (`App data` lines) made that day, how
    many of them a widget reported on (`reported`), and those reports by outcome. A report joins
    the delivery whose request id it carries (`delivery_request_id`) when logged within
    `ANALYTICS_WIDGET_GRACE_SECONDS` of it, and counts on the delivery's row; a report that joins
    none (an old widget's, without the key; a late one; one whose delivery is not stored) counts
    on a row of its own day, client and tool with `size` and `simplified` empty (`UNJOINED`); so
    does a report from another client session than its delivery's, also counted `mismatched`.
    Reports over a session cap count only as `dropped` (`FUNNEL_GUARDS`).
    Added to by the ingestion store in the transaction that stores the events
    (analytics/ingest/rollups.py, `funnel_deltas`); a delivery stored after a report that names it
    moves the report from the unjoined row to the delivery's. `never reported` is `delivered -
    reported`, less the deliveries still within the grace window (analytics/funnel.py)."""

    day = models.DateTimeField()
    client = models.TextField()
    tool = models.TextField()
    size = models.TextField()
    simplified = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["day", "client", "tool", "size", "simplified"], name="analytics_funnel_daily_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.day:%Y-%m-%d} {self.client} {self.tool} {self.size or 'unjoined'}"


for _column in FUNNEL_FIGURES:
    WidgetFunnelDaily.add_to_class(_column, models.IntegerField(default=0))


class WidgetReportSession(models.Model):
    """The widget reports of one client session (`session`, core.events.SessionKey; "" for a
    sessionless client, which is then counted per client name) on one UTC day, as the session caps
    count them (analytics/ingest/caps.py): the reports taken (`reports`), the tool names they
    named (`tools`, a JSON list, at most `ANALYTICS_SESSION_MAX_TOOLS`), and the reports dropped
    for going over a cap. Updated by the ingestion store, under the row's lock, in the
    transaction that stores the reports: the caps hold across replicas and writers."""

    day = models.DateTimeField()
    session = models.TextField()
    client = models.TextField()
    reports = models.IntegerField(default=0)
    tools = models.TextField(default="[]")
    dropped = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["day", "session", "client"], name="analytics_report_session_unique")
        ]

    def __str__(self) -> str:
        session = self.session or "(no session)"
        return f"{self.day:%Y-%m-%d} {self.client} {session}: {self.reports}, {self.dropped} dropped"


def declared_columns(model: type[models.Model], family: Family) -> None:
    """Add to `model` a column for each field its family of events declares: a text "" when
    absent, a number NULL. analytics/checks.py holds the migrated tables against the declarations."""
    for column in family.columns:
        field: models.Field
        if column.kind in ("text", "texts", "records"):
            field = models.TextField() if column.spec.required else models.TextField(blank=True, default="")
        elif column.kind == "whole":
            field = models.BigIntegerField(null=True)
        else:
            field = models.FloatField(null=True)
        model.add_to_class(column.name, field)


declared_columns(AppStatusEvent, APP_STATUS)


LATENCY_BOUNDS_MS: tuple[int, ...] = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 60000)
"""Upper bounds (inclusive, milliseconds) of the latency histograms in `ToolCallHourly`: a 1-2-5
series from 1 ms to a minute. Percentiles are estimated from these buckets (analytics/tool_stats.py)."""


def latency_column(metric: str, bound: int) -> str:
    """The `ToolCallHourly` column counting calls whose `metric` (`total` or `upstream`) took at most `bound` ms."""
    return f"{metric}_le_{bound}"


KNOWN_OUTCOMES: tuple[str, ...] = OUTCOMES
"""The outcomes `ToolCallDaily` counts by name: `ok` and the closed set of error codes (core/calls.py)."""
OUTCOME_COLUMNS: dict[str, str] = {outcome: f"outcome_{outcome}" for outcome in KNOWN_OUTCOMES}
OTHER_OUTCOMES_COLUMN = "outcome_other"
"""Calls that ended with a code this version does not know (a newer server's)."""

LATENCY_COLUMNS: dict[str, tuple[str, ...]] = {
    metric: tuple(latency_column(metric, bound) for bound in LATENCY_BOUNDS_MS) for metric in ("total", "upstream")
}


class ToolCallEvent(models.Model):
    """One `Tool call` line (tools/dispatch.py, `log_calls`): a tool call with its identity,
    outcome, times and size. Identity as for `AppStatusEvent`: 128 bits of the SHA-256 of the line.

    Its other columns are the fields the event declares (`declared_columns`): numbers a line does
    not carry (or carries with an unexpected type) are NULL. `raw` is the line when the columns do
    not hold all of it (a field of a newer server, a value of another type), else empty
    (analytics/ingest/decode.py). The primary key is the identity, `(time, event_id)`."""

    pk = models.CompositePrimaryKey("time", "event_id")
    time = models.DateTimeField()
    event_id = models.BinaryField(max_length=16, editable=False)
    raw = models.TextField()
    # And a column per field the event declares (core/calls.py): `declared_columns`.
    if TYPE_CHECKING:
        tool: str
        client: str
        outcome: str
        error: str
        tenant: str
        backend: str
        request_id: str
        session: str
        total_ms: float | None

    # The identity is the primary key: no surrogate id, one index less to maintain per event.

    class Meta:
        indexes = [
            # The drill-down reads the calls that did not end `ok` (a few in a hundred), by time.
            models.Index(fields=["time"], name="analytics_call_failing", condition=~models.Q(outcome="ok")),
            # The session timeline and the self-correction join read one session's calls by time.
            models.Index(fields=["session", "time"], name="analytics_call_session", condition=~models.Q(session="")),
        ]

    def __str__(self) -> str:
        return f"{self.time:%Y-%m-%d %H:%M:%S} {self.tool} {self.client} {self.outcome}"


declared_columns(ToolCallEvent, TOOL_CALLS)


class ToolCallRollup(models.Model):
    """The figures of the tool calls of one period, per client, tool, backend and tenant.

    Sums (`upstream_calls`, `bytes`, the latency sums) and cumulative latency histograms: a
    `total_le_<ms>` column counts the calls whose total time was at most that many ms, of the
    `total_timed` calls that logged one; `upstream_le_<ms>` the same for the upstream time of the
    `upstream_timed` calls that made at least one upstream request. Only rows with calls exist."""

    client = models.TextField()
    tool = models.TextField()
    backend = models.TextField()
    tenant = models.TextField()
    calls = models.BigIntegerField()
    upstream_calls = models.BigIntegerField()
    bytes = models.BigIntegerField()
    total_timed = models.BigIntegerField()
    total_ms_sum = models.FloatField()
    upstream_timed = models.BigIntegerField()
    upstream_ms_sum = models.FloatField()

    class Meta:
        abstract = True


class ToolCallHourly(ToolCallRollup):
    """Tool calls in the UTC hour starting at `hour`: added to like `AppStatusHourlyCount`
    (analytics/ingest/rollups.py). Reports with hourly buckets read it. Every outcome together, the
    calls by outcome in columns as in `ToolCallDaily`: a row per hour and combination, not one
    per outcome too, which took a third of the rows away and as much of the ingestion's rollup
    work (ADR 18)."""

    hour = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hour", "client", "tool", "backend", "tenant"], name="analytics_toolcall_hourly_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H:00} {self.client} {self.tool}: {self.calls}"


class ToolCallDaily(models.Model):
    """Tool calls on the UTC day starting at `day`, per client, tool, backend and tenant, every
    outcome together: the sums and histograms of its `ToolCallHourly` rows, and the calls by
    outcome, one `outcome_<code>` column per outcome this version knows (`ok` and the error codes
    of core/errors.py) and `outcome_other` for the codes it does not. Daily and whole-range
    reports read it: a 30-day report reads 30 days of rows, not 720 hours of them, and one row
    per day and combination, not one per outcome. Counters are `integer` (a day of one
    combination stays far below 2**31 calls), which PostgreSQL sums as `bigint`, not `numeric`;
    only `bytes` needs 64 bits."""

    day = models.DateTimeField()
    client = models.TextField()
    tool = models.TextField()
    backend = models.TextField()
    tenant = models.TextField()
    calls = models.IntegerField()
    upstream_calls = models.IntegerField()
    bytes = models.BigIntegerField()
    total_timed = models.IntegerField()
    total_ms_sum = models.FloatField()
    upstream_timed = models.IntegerField()
    upstream_ms_sum = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["day", "client", "tool", "backend", "tenant"], name="analytics_toolcall_daily_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.day:%Y-%m-%d} {self.client} {self.tool}: {self.calls}"


for _columns in LATENCY_COLUMNS.values():
    for _column in _columns:
        ToolCallHourly.add_to_class(_column, models.BigIntegerField(default=0))
        ToolCallDaily.add_to_class(_column, models.IntegerField(default=0))
for _column in (*OUTCOME_COLUMNS.values(), OTHER_OUTCOMES_COLUMN):
    ToolCallHourly.add_to_class(_column, models.BigIntegerField(default=0))
    ToolCallDaily.add_to_class(_column, models.IntegerField(default=0))


MAX_PATTERN_LENGTH = 500


class HostFamily(models.Model):
    """A family of hosts: the client names `pattern` matches, reported together as `name`.

    `pattern` is a regular expression (Python syntax) matched case-insensitively against the
    whole client name. Families are tried in `position` order (then name); the first match wins,
    and a client name no family matches is reported as itself (analytics/families.py)."""

    name = models.CharField(max_length=100, unique=True)
    pattern = models.CharField(
        max_length=MAX_PATTERN_LENGTH,
        help_text="A regular expression matched, ignoring case, against the whole client name, e.g. "
        "<code>cursor(-vscode)?</code>.",
    )
    position = models.PositiveIntegerField(default=100, help_text="Families are tried in this order, lowest first.")
    description = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["position", "name"]
        verbose_name_plural = "host families"

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        try:
            re.compile(self.pattern, re.IGNORECASE)
        except re.error as error:
            raise ValidationError({"pattern": f"Not a valid regular expression: {error}."}) from None


class IngestionMark(models.Model):
    """How far the stored events of one family (`AppStatus`, `ToolCall`) reach: the newest event's
    time (`data_up_to`) and when ingestion last stored a batch of them (`last_ingest`), both moved
    forward by the ingestion store in the transaction that stores the batch
    (analytics/ingest/store.py); and `kept_from`, the retention's cutoff (analytics/partitions.py):
    raw events before it were dropped, their rollups stay. The reports say how fresh their figures
    are from it, and the metrics endpoint exposes it for the ingestion-lag alert."""

    family = models.CharField(max_length=32, unique=True)
    data_up_to = models.DateTimeField(null=True)
    last_ingest = models.DateTimeField(null=True)
    kept_from = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return f"{self.family}: up to {self.data_up_to}, last ingest {self.last_ingest}"


# The upstream contract canary's latest findings (issue #44), a module of its own.
from analytics.canary import CanaryResult  # noqa: E402, F401

# The evidence's tables (issue #43), a module of their own, named here like every model of the app.
from analytics.evidence_models import (  # noqa: E402, F401
    CORRECTABLE,
    PROTOCOL_MIX_KINDS,
    ArgumentFailureDaily,
    CorrectionDaily,
    ExchangeEvent,
    ListedToolDaily,
    ProtocolMixDaily,
    RefusedRequestDaily,
    UnknownToolDaily,
)
