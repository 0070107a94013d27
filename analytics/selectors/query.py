"""What a report covers: whole UTC days or a window of whole hours (a preset, or a drill-down's
exact hours), and its filters; and how rollups cover such a range (`spans`). Every report reads
its range through `ReportQuery`, so the pages, the API and the presets agree on it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal, get_args

Bucket = Literal["hour", "day"]
Dimension = Literal["bucket", "client", "tool"]
Group = Literal["client", "family"]
BUCKETS: tuple[str, ...] = get_args(Bucket)
GROUPS: tuple[str, ...] = get_args(Group)
MAX_DAYS = 400
"""The longest range a report may cover."""
DEFAULT_DAYS = 30
"""The range of a report whose dates are not given: 30 days up to and including the end."""
CALL_ONLY_FILTERS = ("tenant", "backend")
NO_TENANT = "-"
"""The tenant filter's value for calls without a tenant (API-key callers)."""
HOUR, DAY = timedelta(hours=1), timedelta(days=1)
PRESETS: dict[str, tuple[str, timedelta]] = {
    "1h": ("Last hour", HOUR),
    "6h": ("Last 6 hours", 6 * HOUR),
    "24h": ("Last 24 hours", 24 * HOUR),
    "7d": ("Last 7 days", 7 * DAY),
    "30d": ("Last 30 days", 30 * DAY),
}
"""The preset windows: the whole UTC hours of the span before the current hour, and the current
hour so far (rollups are hourly: "the last hour" is 12:00 to now at 13:20, not a minute-exact 60)."""
DEFAULT_PRESET = "24h"
HOURLY_UP_TO = timedelta(days=8)
"""Ranges up to this long (the 7-day preset and its current hour, or eight days of dates) are
charted by the hour; longer ones by the UTC day."""


def _hour(moment: datetime) -> datetime:
    """`moment` as the start of its UTC hour."""
    if moment.tzinfo is None:
        raise ValueError("a window's times need a UTC offset")
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def preset_range(name: str, now: datetime) -> tuple[datetime, datetime]:
    """The preset `name`'s window at `now`: the whole hours of its span before the current hour,
    and the current hour (its end is the end of the current hour; the page says it is partial)."""
    _, span = PRESETS[name]
    current = _hour(now)
    return current - span, current + HOUR


def auto_bucket(start: datetime, end: datetime) -> Bucket:
    """The bucket a chart of `[start, end)` uses: hours up to `HOURLY_UP_TO`, else days."""
    return "hour" if end - start <= HOURLY_UP_TO else "day"


def spans(start: datetime, end: datetime) -> tuple[list[tuple[datetime, datetime]], tuple[datetime, datetime] | None]:
    """How rollups cover `[start, end)` (whole hours): the hourly ranges at the edges, and the
    range of whole UTC days between them (None when no whole day fits)."""
    first_day = start.replace(hour=0) + (DAY if start.hour else timedelta())
    last_day = end.replace(hour=0)
    if first_day >= last_day:
        return [(start, end)], None
    edges = [(a, b) for a, b in ((start, first_day), (last_day, end)) if a < b]
    return edges, (first_day, last_day)


@dataclass(frozen=True, slots=True)
class ReportQuery:
    """Whole UTC days `start`..`end` (inclusive); empty `tool`/`client`/`family` means all of
    them. `group`: report hosts by exact client name or by host family."""

    start: date
    end: date
    bucket: Bucket = "day"
    tool: str = ""
    client: str = ""
    family: str = ""
    group: Group = "client"
    tenant: str = ""
    """Only this tenant's calls; `-` for callers with an API key (no tenant)."""
    backend: str = ""
    since: datetime | None = None
    """A window of whole UTC hours inside the days (the overview's presets): its first hour."""
    until: datetime | None = None
    """The first moment after that window."""
    window: str = ""
    """The preset (`PRESETS`) `since` and `until` were made from, kept so that links carry the
    preset (relative to now) rather than its hours; empty for dates or exact hours."""

    def __post_init__(self) -> None:
        if self.start > self.end:
            raise ValueError("the start date is after the end date")
        if (self.since is None) != (self.until is None) or (self.since and self.until and self.since >= self.until):
            raise ValueError("a window needs a first hour before its end")
        if (self.end - self.start).days >= MAX_DAYS:
            raise ValueError(f"a report covers at most {MAX_DAYS} days")
        if self.bucket not in BUCKETS:
            raise ValueError(f"bucket must be one of {', '.join(BUCKETS)}")
        if self.group not in GROUPS:
            raise ValueError(f"group must be one of {', '.join(GROUPS)}")
        if self.window and (self.window not in PRESETS or self.since is None):
            raise ValueError(f"window must be one of {', '.join(PRESETS)}, with its hours")

    @classmethod
    def from_filters(
        cls,
        *,
        start: date | None,
        end: date | None,
        bucket: str | None,
        tool: str | None,
        client: str | None,
        family: str | None = None,
        group: str | None = None,
        tenant: str | None = None,
        backend: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        window: str | None = None,
        now: datetime | None = None,
    ) -> ReportQuery:
        """The query a user's filters describe: `end` defaults to today (UTC), `start` to
        DEFAULT_DAYS days before `end`; a window (`since`, `until`, whole hours) sets both, and a
        preset (`window`, at `now`) sets the window when `since` is not given. `bucket` empty:
        hours or days by the range's length (`auto_bucket`). Raises ValueError for an impossible
        query."""
        window = window or ""
        if window and since is None:
            if window not in PRESETS:
                raise ValueError(f"window must be one of {', '.join(PRESETS)}")
            since, until = preset_range(window, now or datetime.now(UTC))
        elif since is not None:
            window = ""
        if since is not None and until is not None:
            since, until = _hour(since), _hour(until)
            start, end = since.date(), (until - timedelta(microseconds=1)).date()
        end = end or datetime.now(UTC).date()
        start = start or end - timedelta(days=DEFAULT_DAYS - 1)
        if not bucket:
            first = since or datetime.combine(start, time(), tzinfo=UTC)
            bucket = auto_bucket(first, until or datetime.combine(end + timedelta(days=1), time(), tzinfo=UTC))
        return cls(
            start=start,
            end=end,
            bucket=bucket,  # type: ignore[arg-type]  # checked in __post_init__
            tool=(tool or "").strip(),
            client=(client or "").strip(),
            family=(family or "").strip(),
            group=group or "client",  # type: ignore[arg-type]  # checked in __post_init__
            tenant=(tenant or "").strip(),
            backend=(backend or "").strip(),
            since=since,
            until=until,
            window=window,
        )

    @property
    def start_time(self) -> datetime:
        return self.since or datetime.combine(self.start, time(), tzinfo=UTC)

    @property
    def end_time(self) -> datetime:
        """The first moment after the range."""
        return self.until or datetime.combine(self.end + timedelta(days=1), time(), tzinfo=UTC)

    @property
    def call_filters(self) -> tuple[str, ...]:
        """The filters given that only tool calls record (tenant, backend): widget events carry
        neither, so a widget report cannot honour them (the pages and the API say so)."""
        return tuple(name for name in CALL_ONLY_FILTERS if getattr(self, name))

    def buckets(self, now: datetime | None = None) -> list[datetime]:
        """The start of every bucket in the range, in order: its UTC hours, or the UTC days it
        touches (the first and last may be partial days of a window of hours); with `now`, none
        that starts after it (a chart draws no empty future)."""
        step = HOUR if self.bucket == "hour" else DAY
        moment = self.start_time if self.bucket == "hour" else self.start_time.replace(hour=0)
        last = self.end_time if now is None else min(self.end_time, now)
        found = []
        while moment < last:
            found.append(moment)
            moment += step
        return found

    def narrowed_to(self, start: datetime, end: datetime) -> ReportQuery:
        """This query's filters over the window `[start, end)` (whole UTC hours) instead."""
        last = (end - timedelta(microseconds=1)).date()
        return replace(self, start=start.date(), end=last, since=start, until=end, window="")

    @property
    def whole_days(self) -> ReportQuery:
        """The whole UTC days the range touches (what the daily-only reports, the funnel and the
        old callers, can cover)."""
        return replace(self, since=None, until=None, window="")
