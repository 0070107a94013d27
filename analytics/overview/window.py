"""The overview's window: whole UTC hours `[start, end)`, and the windows it is compared with (the
previous window for the cards, the baseline for the ranking, the trend for the sparklines), kept
apart so every other part of the overview agrees on what those periods are."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from analytics.selectors import HOUR, PRESETS, ReportQuery, preset_range

BASELINE = timedelta(days=7)
"""The shortest baseline period a host's rates are compared with (`Window.baseline`)."""
TREND = timedelta(hours=25)
"""The shortest span the sparklines draw: the 24-hour preset's (24 whole hours and the current one)."""


def floor_hour(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


@dataclass(frozen=True, slots=True)
class Window:
    """Whole UTC hours `[start, end)`."""

    start: datetime
    end: datetime
    label: str

    @classmethod
    def preset(cls, name: str, now: datetime) -> Window:
        """A preset's window at `now`: its whole hours before the current hour, and the current one."""
        start, end = preset_range(name, now)
        return cls(start, end, PRESETS[name][0])

    @classmethod
    def days(cls, query: ReportQuery) -> Window:
        """The whole UTC days of a report query (or its window of hours)."""
        label = f"{query.start:%Y-%m-%d} to {query.end:%Y-%m-%d}" if query.since is None else "Chosen hours"
        return cls(query.start_time, query.end_time, label)

    @property
    def previous(self) -> Window:
        """The window of the same length just before this one."""
        return Window(self.start - (self.end - self.start), self.start, "previous")

    @property
    def baseline(self) -> Window:
        """The period a host's rates are compared with for the ranking: the `BASELINE` (7) whole
        UTC days before the window's first day (read from the daily rollup alone); for a window
        of 7 days or more, the window of the same length before it."""
        if self.end - self.start >= BASELINE:
            return replace(self.previous, label="baseline")
        first_day = self.start.replace(hour=0)
        return Window(first_day - BASELINE, first_day, "baseline")

    @property
    def trend(self) -> Window:
        """What the sparklines draw: the window, or the last `TREND` when the window is shorter
        (an hour's two points say nothing; a day of them shows since when)."""
        return Window(min(self.start, self.end - TREND), self.end, "trend")

    @property
    def hours(self) -> int:
        return (self.end - self.start) // HOUR
