"""The product evidence's tables (issue #43, docs/analytics.md "Evidence figures"): the exchange
events as logged, and the daily rollups counted from them and from the tool calls.

`ExchangeEvent` is one row per `Session started`, `Tools listed` or `MCP request refused` line
(core/exchange.py), never changed, like `ToolCallEvent`. The rollups are added to by the ingestion
store in the transaction that stores their events (analytics/ingest/evidence.py,
analytics/ingest/corrections.py), per UTC `day` and exact client name (host families apply when a
report reads them, analytics/families.py), and outlive the raw events' retention. Only rows with
a figure above zero exist. Imported by analytics/models.py, where every model of the app is named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import models

from analytics.ingest.decode import EXCHANGE, EXCHANGE_KINDS
from analytics.models import declared_columns
from core.app_status import UNKNOWN_KIND

EXCHANGE_KIND_CHOICES = [(kind, message) for message, kind in EXCHANGE_KINDS.items()] + [
    (UNKNOWN_KIND, "Unknown exchange message")
]
PROTOCOL_MIX_KINDS: tuple[str, ...] = ("session", "listed", "call", "refused")
"""What a `ProtocolMixDaily` row counts: sessions started, listings answered, tool calls, requests refused."""
CORRECTABLE: tuple[str, ...] = ("invalid_arguments", "unknown_tool", "retired")
"""The outcomes of a failing call an agent can correct by calling again (`CorrectionDaily`)."""


def _on_session(name: str) -> models.Index:
    """An index to read one client session's events in time order (the session timeline): only
    the rows that have one."""
    return models.Index(fields=["session", "time"], name=name, condition=~models.Q(session=""))


class ExchangeEvent(models.Model):
    """One exchange line: `kind` `session` (an `initialize` answered), `listed` (a `tools/list`
    answered, `tools` the JSON list of each listed tool's name and bytes) or `refused` (a JSON-RPC
    error answered). Identity and `raw` as for `ToolCallEvent`; its other columns are the fields
    the three events declare (`declared_columns`): a field another kind declares is empty."""

    pk = models.CompositePrimaryKey("time", "event_id")
    time = models.DateTimeField()
    event_id = models.BinaryField(max_length=16, editable=False)
    kind = models.CharField(max_length=16, choices=EXCHANGE_KIND_CHOICES)
    raw = models.TextField()
    if TYPE_CHECKING:
        client: str
        session: str
        tools: str

    class Meta:
        indexes = [_on_session("analytics_exchange_session")]

    def __str__(self) -> str:
        return f"{self.time:%Y-%m-%d %H:%M:%S} {self.kind} {self.client}"


declared_columns(ExchangeEvent, EXCHANGE)


def _unique(*fields: str, name: str) -> list[models.BaseConstraint]:
    return [models.UniqueConstraint(fields=["day", *fields], name=name)]


class ListedToolDaily(models.Model):
    """How often a tool was listed to one client on one UTC day (`listings`: the `tools/list`
    answers naming it) and what those entries cost (`bytes`, the sum of its entry's UTF-8 bytes),
    per backend. Against `ToolCallDaily`: listed and never called."""

    day = models.DateTimeField()
    client = models.TextField()
    tool = models.TextField()
    backend = models.TextField()
    listings = models.BigIntegerField()
    bytes = models.BigIntegerField()

    class Meta:
        constraints = _unique("client", "tool", "backend", name="analytics_listed_daily_unique")

    def __str__(self) -> str:
        return f"{self.day:%Y-%m-%d} {self.client} {self.tool}: listed {self.listings}"


class ProtocolMixDaily(models.Model):
    """The protocol and client versions one client spoke on one UTC day: `count` of `kind`
    (`PROTOCOL_MIX_KINDS`) per client version (a session's only: "" for the other kinds) and
    protocol version ("" when the line names none)."""

    day = models.DateTimeField()
    client = models.TextField()
    client_version = models.TextField()
    protocol_version = models.TextField()
    kind = models.CharField(max_length=16)
    count = models.BigIntegerField()

    class Meta:
        constraints = _unique(
            "client", "client_version", "protocol_version", "kind", name="analytics_protocol_mix_daily_unique"
        )

    def __str__(self) -> str:
        return f"{self.day:%Y-%m-%d} {self.client} {self.protocol_version} {self.kind}: {self.count}"


class RefusedRequestDaily(models.Model):
    """JSON-RPC requests one client had refused on one UTC day, per method and JSON-RPC error
    code, with when they were first and last seen."""

    day = models.DateTimeField()
    client = models.TextField()
    method = models.TextField()
    code = models.BigIntegerField()
    count = models.BigIntegerField()
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    class Meta:
        constraints = _unique("client", "method", "code", name="analytics_refused_daily_unique")

    def __str__(self) -> str:
        return f"{self.day:%Y-%m-%d} {self.client} {self.method} {self.code}: {self.count}"


class UnknownToolDaily(models.Model):
    """Calls of a tool name that does not exist (outcome `unknown_tool`), by one client on one
    UTC day, the name as sent, with when first and last seen."""

    day = models.DateTimeField()
    client = models.TextField()
    tool = models.TextField()
    calls = models.BigIntegerField()
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    class Meta:
        constraints = _unique("client", "tool", name="analytics_unknown_tool_daily_unique")

    def __str__(self) -> str:
        return f"{self.day:%Y-%m-%d} {self.client} {self.tool}: {self.calls}"


class CorrectionDaily(models.Model):
    """Self-correction: the failing calls (`CORRECTABLE` outcomes) made in a client session, by
    the failing call's UTC day, client, tool and outcome, and how many of them the same session
    followed with a successful call of the same tool, or of one the error suggested, within
    `ANALYTICS_CORRECTION_WINDOW_SECONDS` (`corrected`, at most `failures`)."""

    day = models.DateTimeField()
    client = models.TextField()
    tool = models.TextField()
    outcome = models.TextField()
    failures = models.BigIntegerField()
    corrected = models.BigIntegerField()

    class Meta:
        constraints = _unique("client", "tool", "outcome", name="analytics_correction_daily_unique")

    def __str__(self) -> str:
        return f"{self.day:%Y-%m-%d} {self.client} {self.tool} {self.outcome}: {self.corrected}/{self.failures}"


class ArgumentFailureDaily(models.Model):
    """The argument paths `invalid_arguments` answers named (`locations[1].lat`), per client,
    tool and UTC day: `calls` naming the path."""

    day = models.DateTimeField()
    client = models.TextField()
    tool = models.TextField()
    path = models.TextField()
    calls = models.BigIntegerField()

    class Meta:
        constraints = _unique("client", "tool", "path", name="analytics_argument_failure_daily_unique")

    def __str__(self) -> str:
        return f"{self.day:%Y-%m-%d} {self.client} {self.tool} {self.path}: {self.calls}"
