"""App-status events as logged, and their hourly counts.

`AppStatusEvent` is one row per app-status line (docs/app-status.md), never changed after it is
written: the raw events. `AppStatusHourlyCount` is the rollup the reports read: how many events
of each kind a client caused with a tool in one UTC hour. The two are kept in step by the
ingestion service (analytics/ingest.py), in the same transaction that inserts the events.
"""

from __future__ import annotations

from django.db import models

from tools.app_status import AppStatus

UNKNOWN_KIND = "unknown"
"""The kind of a line marked `"event": "app_status"` whose message is none of the contract's."""

KIND_CHOICES = [(status.kind, status.message) for status in AppStatus] + [(UNKNOWN_KIND, "Unknown app-status message")]

FAILING_KINDS: tuple[str, ...] = tuple(
    status.kind
    for status in (
        AppStatus.FAILED,
        AppStatus.TOO_LARGE,
        AppStatus.HOST_DROPPED,
        AppStatus.DECODE_FAILED,
        AppStatus.FETCH_FAILED,
    )
)
"""The kinds the drill-down lists: every event that means a widget did not draw as it should."""

OLD_CALLER_KINDS: tuple[str, ...] = (AppStatus.RETIRED_TOOL.kind, AppStatus.OUTDATED_CALL.kind)
"""Governance answers: calls to a retired tool name, or with inputs that changed."""


class AppStatusEvent(models.Model):
    """One app-status line. `event_id` is its identity (128 bits of the SHA-256 of the line, see
    analytics/parsing.py): the same line ingested twice is one row."""

    time = models.DateTimeField()
    event_id = models.BinaryField(max_length=16, editable=False)
    kind = models.CharField(max_length=16, choices=KIND_CHOICES)
    tool = models.TextField()
    client = models.TextField()
    user_agent = models.TextField(blank=True, default="")
    request_id = models.TextField(blank=True, default="")
    replica = models.TextField(blank=True, default="")
    pid = models.BigIntegerField(null=True)
    # App data: how the result carried it, its sizes, and any simplification.
    delivery = models.TextField(blank=True, default="")
    raw_bytes = models.BigIntegerField(null=True)
    encoded_chars = models.BigIntegerField(null=True)
    result_chars = models.BigIntegerField(null=True)
    original_points = models.BigIntegerField(null=True)
    points = models.BigIntegerField(null=True)
    max_error_m = models.FloatField(null=True)
    # What a widget reported, and fetch failures.
    source = models.TextField(blank=True, default="")
    reason = models.TextField(blank=True, default="")
    stage = models.TextField(blank=True, default="")
    duration_ms = models.FloatField(null=True)
    features = models.BigIntegerField(null=True)
    error = models.TextField(blank=True, default="")
    error_code = models.TextField(blank=True, default="")
    # Governance answers: a retired tool name, or an outdated input.
    replaced_by = models.TextField(blank=True, default="")
    input = models.TextField(blank=True, default="")
    change = models.TextField(blank=True, default="")
    raw = models.TextField()

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
