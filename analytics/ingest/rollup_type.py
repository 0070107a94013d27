"""`Rollup`: a table of figures per UTC period and dimensions (analytics/ingest/rollups.py says how
a batch adds to one); a module of its own so that the rollups of every module can be declared
with it (analytics/ingest/evidence.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from django.db import models


@dataclass(frozen=True, eq=False)
class Rollup:
    """A table of figures per UTC `period` and `dimensions`, added to by every batch of new events."""

    model: type[models.Model]
    period: Literal["hour", "day"]
    dimensions: tuple[str, ...]
    figures: tuple[str, ...]
    """Added up."""
    earliest: tuple[str, ...] = ()
    """Kept as the earliest value added."""
    latest: tuple[str, ...] = ()
    """Kept as the latest value added."""
    daily_of: Rollup | None = None
    """The hourly rollup this one sums per day."""
    derived: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Dimensions computed from declared fields rather than declared as dimensions themselves:
    each with the fields it is computed from (the funnel's answer-size bucket, from `raw_bytes`)."""

    @property
    def table(self) -> str:
        return self.model._meta.db_table

    @property
    def key(self) -> tuple[str, ...]:
        return (self.period, *self.dimensions)

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.key, *self.figures, *self.earliest, *self.latest)


Deltas = dict[Rollup, list[tuple]]
"""What a batch adds to each rollup: its rows, `Rollup.columns` in order."""
