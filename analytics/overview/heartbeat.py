"""The ingestion heartbeat: how far each family of stored events reaches, so live figures cannot
stop silently (a stalled ingestion looks like a quiet hour otherwise)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings

from analytics.models import IngestionMark


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """How far one family of stored events reaches (its `IngestionMark`)."""

    family: str
    label: str
    data_up_to: datetime | None
    last_ingest: datetime | None
    lag: timedelta | None
    """How old its newest stored event is."""
    stale: bool
    """Its newest stored event is older than ANALYTICS_INGEST_LAG_SECONDS."""


FAMILY_LABELS = {"ToolCall": "tool calls", "AppStatus": "widget events"}
"""The families of events, as the heartbeat names them."""


@dataclass(frozen=True, slots=True)
class Freshness:
    """How far the stored events reach and when ingestion last ran (IngestionMark): in all, and
    per family of events (the heartbeat)."""

    data_up_to: datetime | None
    last_ingest: datetime | None
    kept_from: datetime | None
    lag: timedelta | None
    lagging: bool
    threshold: timedelta
    families: tuple[Heartbeat, ...] = ()

    @property
    def stale(self) -> tuple[Heartbeat, ...]:
        return tuple(beat for beat in self.families if beat.stale)


def freshness(now: datetime | None = None, marks: Iterable[IngestionMark] | None = None) -> Freshness:
    """The newest event stored and the last ingest, over every family and per family (the
    heartbeat); lagging (or a family stale) when its newest event is older than
    ANALYTICS_INGEST_LAG_SECONDS."""
    now = now or datetime.now(UTC)
    found = list(IngestionMark.objects.all() if marks is None else marks)
    data_up_to = max((m.data_up_to for m in found if m.data_up_to), default=None)
    last_ingest = max((m.last_ingest for m in found if m.last_ingest), default=None)
    kept_from = max((m.kept_from for m in found if m.kept_from), default=None)
    threshold = timedelta(seconds=settings.ANALYTICS_INGEST_LAG_SECONDS)
    lag = now - data_up_to if data_up_to else None
    by_family = {mark.family: mark for mark in found}
    beats = []
    for family in (*FAMILY_LABELS, *sorted(set(by_family) - set(FAMILY_LABELS))):
        mark = by_family.get(family)
        if mark is None:
            continue
        age = now - mark.data_up_to if mark.data_up_to else None
        beats.append(
            Heartbeat(
                family,
                FAMILY_LABELS.get(family, family),
                mark.data_up_to,
                mark.last_ingest,
                age,
                age is None or age > threshold,
            )
        )
    return Freshness(data_up_to, last_ingest, kept_from, lag, lag is None or lag > threshold, threshold, tuple(beats))
