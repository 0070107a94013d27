"""What the upstream contract canary last found, per backend and tool (`CanaryResult`).

The canary (tools/canary.py, run by `manage.py tomtom_canary`) calls every tool once per
backend; `record` keeps its latest finding per (backend, tool), and /analytics/metrics exports
them as gauges (analytics/metrics.py, `canary_metrics`) for the `CanaryDrift` and
`CanaryNotRun` alerts. The same rows on every replica: they live in the database.

A run that learns nothing about a tool (TomTom unreachable, the key refused) updates its status
and detail but keeps its last verdict (`drifted`) and when it was reached (`answered_at`), so an
outage neither clears a drift alert nor looks like a fresh check. This app never imports the
tool catalogue (import-linter): a check arrives as any object with the fields of `Checked`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

from django.db import models, transaction
from django.utils import timezone

DETAIL_LENGTH = 500


class Checked(Protocol):
    """One check as the canary made it (tools.canary.Check)."""

    @property
    def tool(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def detail(self) -> str: ...
    @property
    def requests(self) -> tuple[str, ...]: ...
    @property
    def version(self) -> str: ...
    @property
    def latency_ms(self) -> float | None: ...
    @property
    def drifted(self) -> bool | None: ...


class CanaryResult(models.Model):
    """The canary's latest check of one tool on one backend."""

    backend = models.CharField(max_length=32)
    tool = models.CharField(max_length=100)
    status = models.CharField(max_length=16)
    """ok, drift, key, unreachable or skipped (tools.canary.Status)."""
    drifted = models.BooleanField(null=True)
    """The last verdict TomTom's answer gave: True drift, False ok, None never answered."""
    detail = models.TextField(blank=True, default="")
    requests = models.JSONField(default=list)
    """Each request the check sent, `METHOD /path` (never the key or the query)."""
    version = models.CharField(max_length=64, blank=True, default="")
    latency_ms = models.FloatField(null=True)
    checked_at = models.DateTimeField()
    """When the canary last ran this check."""
    answered_at = models.DateTimeField(null=True)
    """When a run last reached a verdict on it (ok or drift)."""

    class Meta:
        constraints = [models.UniqueConstraint(fields=["backend", "tool"], name="canary_result_per_backend_tool")]

    def __str__(self) -> str:
        return f"{self.tool} on {self.backend}: {self.status}"


def record(checks: Iterable[Checked], backends: Iterable[str], now: datetime | None = None) -> None:
    """Store one run's checks of `backends`, in one transaction; rows of those backends for
    tools the run no longer checks (a tool removed, or no longer listed there) are dropped."""
    now = now or timezone.now()
    done: dict[str, set[str]] = {backend: set() for backend in backends}
    with transaction.atomic():
        for check in checks:
            done.setdefault(check.backend, set()).add(check.tool)
            values: dict[str, Any] = {
                "status": str(check.status),
                "detail": check.detail[:DETAIL_LENGTH],
                "requests": list(check.requests),
                "version": check.version[:64],
                "latency_ms": check.latency_ms,
                "checked_at": now,
            }
            if check.drifted is not None:
                values |= {"drifted": check.drifted, "answered_at": now}
            CanaryResult.objects.update_or_create(backend=check.backend, tool=check.tool, defaults=values)
        for backend, tools in done.items():
            CanaryResult.objects.filter(backend=backend).exclude(tool__in=tools).delete()
