"""The overview's ranking rule (analytics/overview/ranking.py, `rank`): by the rise of a rate over
the host's own baseline, from a minimum sample, the fleet's baseline for a host too new to have
one; since when a rate is up; which buckets a range is drawn in (none after now); and the rule at
work on the incident of issue #42 (tests/analytics/incident_data.py): the host that broke three
hours ago leads the default view, the steady offender does not, the tiny host cannot, the silent
host is named."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from analytics.overview import BASELINE, RISE, Tally, Window, leading_change, overview, rank, since_when
from analytics.selectors import HOURLY_UP_TO, PRESETS, ReportQuery, auto_bucket, preset_range
from tests.analytics.conftest import ingest
from tests.analytics.incident_data import BROKEN, CALLER, HOSTS, SILENT, STEADY, TINY, incident_lines

NOW = datetime(2026, 12, 7, 13, 20, tzinfo=UTC)


def calls(total: int, server: int = 0, caller: int = 0) -> Tally:
    tally = Tally(calls=total, ok=total - server - caller, caller_errors=caller)
    return tally


def widgets(drawn: int, failed: int) -> Tally:
    return Tally(drawn=drawn, failed=failed)


# -- The rule ---------------------------------------------------------------------------------------


def test_a_host_that_rose_over_its_baseline_leads_a_steady_one_with_a_higher_rate():
    now = {"steady": calls(100, server=30), "broke": calls(100, server=12), "fine": calls(100, server=2)}
    baseline = {"steady": calls(1000, server=300), "broke": calls(1000, server=20), "fine": calls(1000, server=20)}

    ranked = rank(now, baseline, calls(3000, server=340), min_events=20)

    assert [name for name, _ in ranked] == ["broke", "steady", "fine"]
    change = ranked[0][1]
    assert change is not None and change.signal == "server_errors" and change.own_baseline
    assert (change.rate, change.baseline) == (0.12, 0.02) and change.delta == pytest.approx(0.10)
    assert ranked[1][1].delta == pytest.approx(0.0)  # 30 % against 30 %: nothing changed


def test_a_rate_from_fewer_events_than_the_minimum_cannot_lead():
    now = {"tiny": calls(3, server=3), "broke": calls(40, server=10)}
    baseline = {"tiny": calls(10), "broke": calls(400, server=4)}

    ranked = rank(now, baseline, calls(410, server=4), min_events=20)

    assert [name for name, _ in ranked] == ["broke", "tiny"]
    assert ranked[1][1] is None  # no rate from enough events: last, however high
    assert leading_change(now["tiny"], baseline["tiny"], calls(410), 3) is not None  # with a lower minimum it has one


def test_a_host_without_enough_events_in_its_baseline_is_compared_with_every_hosts():
    fleet = calls(1000, server=50)  # 5 % over the baseline period
    change = leading_change(calls(100, server=25), calls(5), fleet, min_events=20)

    assert change is not None and not change.own_baseline
    assert (change.baseline, change.baseline_sample) == (0.05, 1000)
    assert change.delta == pytest.approx(0.20)
    assert leading_change(calls(100, server=25), None, Tally(), min_events=20).baseline == 0.0  # no baseline at all


def test_the_leading_signal_is_the_one_that_rose_most_caller_errors_and_widgets_apart():
    now = Tally(calls=100, ok=80, caller_errors=15, drawn=30, failed=10)  # 5 % server, 15 % caller, 25 % widgets
    baseline = Tally(calls=1000, ok=800, caller_errors=150, drawn=390, failed=10)  # 5 %, 15 %, 2.5 %

    change = leading_change(now, baseline, baseline, min_events=20)

    assert change is not None and change.signal == "widget_failures"
    assert change.delta == pytest.approx(0.225)
    assert now.server_errors == 5 and now.caller_errors == 15 and now.errors == 20


def test_ties_go_to_the_higher_rate_then_the_name():
    now = {"b": calls(100, server=20), "a": calls(100, server=20), "c": calls(100, server=40)}
    baseline = {"b": calls(100, server=10), "a": calls(100, server=10), "c": calls(100, server=30)}

    assert [name for name, _ in rank(now, baseline, calls(300), min_events=20)] == ["c", "a", "b"]


def test_since_is_the_start_of_the_trailing_run_above_the_baseline():
    hours = [NOW.replace(minute=0) - timedelta(hours=5 - i) for i in range(6)]
    points = list(zip(hours, [1, 0, 9, 0, 22, 20], [30, 30, 30, 0, 30, 28], strict=True))

    assert since_when(points, baseline=0.02) == (hours[2], False)  # the empty hour neither breaks nor starts it
    assert since_when(points[:2], baseline=0.02) == (None, False)  # the newest hour with events is not up
    assert since_when(points[2:], baseline=0.02) == (hours[2], True)  # up from the first point: maybe earlier
    assert since_when([(hours[0], 2, 30)], baseline=0.02) == (None, False)  # 6.7 %: not RISE above 2 %
    assert RISE == 0.05


# -- Windows and buckets ----------------------------------------------------------------------------


def test_presets_are_the_whole_hours_before_the_current_one_and_the_current_hour():
    assert list(PRESETS) == ["1h", "6h", "24h", "7d", "30d"]
    assert preset_range("1h", NOW) == (datetime(2026, 12, 7, 12, tzinfo=UTC), datetime(2026, 12, 7, 14, tzinfo=UTC))
    assert preset_range("24h", NOW)[0] == datetime(2026, 12, 6, 13, tzinfo=UTC)
    window = Window.preset("24h", NOW)
    assert window.previous.start == window.start - (window.end - window.start)
    # The baseline: the 7 whole UTC days before the window's first day (2026-12-06), from the daily rollup.
    assert (window.baseline.start, window.baseline.end) == (
        datetime(2026, 11, 29, tzinfo=UTC),
        datetime(2026, 12, 6, tzinfo=UTC),
    )
    assert window.baseline.end - window.baseline.start == BASELINE
    assert Window.preset("1h", NOW).baseline.end == datetime(2026, 12, 7, tzinfo=UTC)
    month = Window.preset("30d", NOW)  # 7 days or more: the window of the same length before it
    assert (month.baseline.start, month.baseline.end) == (month.previous.start, month.start)


def test_short_ranges_are_bucketed_by_the_hour_long_ones_by_the_day():
    start = datetime(2026, 12, 1, tzinfo=UTC)
    assert auto_bucket(start, start + timedelta(hours=2)) == "hour"
    assert auto_bucket(start, start + timedelta(days=7, hours=1)) == "hour"  # the 7-day preset
    assert auto_bucket(start, start + HOURLY_UP_TO) == "hour"
    assert auto_bucket(start, start + HOURLY_UP_TO + timedelta(hours=1)) == "day"
    assert auto_bucket(start, start + timedelta(days=30)) == "day"
    for preset, bucket in (("1h", "hour"), ("6h", "hour"), ("24h", "hour"), ("7d", "hour"), ("30d", "day")):
        query = ReportQuery.from_filters(
            start=None, end=None, bucket=None, tool=None, client=None, window=preset, now=NOW
        )
        assert (query.bucket, query.window) == (bucket, preset)
    dates = ReportQuery.from_filters(
        start=date(2026, 11, 1), end=date(2026, 11, 30), bucket=None, tool=None, client=None
    )
    assert dates.bucket == "day"


def test_no_bucket_starts_after_now():
    today = ReportQuery.from_filters(
        start=date(2026, 12, 7), end=date(2026, 12, 7), bucket="hour", tool=None, client=None
    )
    assert today.buckets()[-1] == datetime(2026, 12, 7, 23, tzinfo=UTC)  # without `now`: the whole range
    assert today.buckets(NOW)[-1] == datetime(2026, 12, 7, 13, tzinfo=UTC)  # the current hour, none after
    assert len(today.buckets(NOW)) == 14
    month = ReportQuery.from_filters(
        start=date(2026, 12, 1), end=date(2026, 12, 31), bucket=None, tool=None, client=None
    )
    assert month.buckets(NOW)[-1] == datetime(2026, 12, 7, tzinfo=UTC)
    week = ReportQuery.from_filters(start=None, end=None, bucket=None, tool=None, client=None, window="7d", now=NOW)
    assert week.buckets(NOW)[0] == datetime(2026, 11, 30, 13, tzinfo=UTC) and len(week.buckets(NOW)) == 7 * 24 + 1
    days = ReportQuery.from_filters(start=None, end=None, bucket="day", tool=None, client=None, window="7d", now=NOW)
    assert days.buckets(NOW) == [
        datetime(2026, 11, 30 + i, tzinfo=UTC) if i < 1 else datetime(2026, 12, i, tzinfo=UTC) for i in range(8)
    ]


# -- The incident of issue #42 ----------------------------------------------------------------------


@pytest.fixture
def incident(db) -> None:
    ingest(*incident_lines(NOW))


def preset(name: str) -> tuple[ReportQuery, Window]:
    query = ReportQuery.from_filters(start=None, end=None, bucket=None, tool=None, client=None, window=name, now=NOW)
    return query, Window(query.start_time, query.end_time, PRESETS[name][0])


@pytest.mark.parametrize("name", ["1h", "6h", "24h"])
def test_the_host_that_broke_three_hours_ago_leads_every_view_with_a_baseline(incident, name):
    query, window = preset(name)

    found = overview(query, window, now=NOW)

    hosts = found.worst_hosts
    assert hosts[0].name == BROKEN
    change = hosts[0].change
    assert change is not None and change.signal == "server_errors" and change.own_baseline and change.up
    assert hosts[0].top_code == "internal"
    assert hosts[0].since == datetime(2026, 12, 7, 10, tzinfo=UTC)  # it broke at 10:20
    assert hosts[-1].name == TINY and hosts[-1].small_sample  # two calls cannot lead
    assert {rank.name for rank in hosts} == set(HOSTS)


def test_by_level_the_steady_host_leads_and_the_broken_one_is_third(incident):
    query, window = preset("24h")

    hosts = {rank.name: rank for rank in overview(query, window, now=NOW).worst_hosts}

    by_level = sorted(
        (name for name in hosts if not hosts[name].small_sample),
        key=lambda name: -(hosts[name].now.error_rate or 0),
    )
    assert by_level[:3] == [STEADY, CALLER, BROKEN]
    assert 0.09 < hosts[BROKEN].now.error_rate < 0.13  # about 10 % over 24 hours, 75 % in the last hour
    assert hosts[STEADY].change.delta == pytest.approx(0, abs=0.01)  # steady: it did not change
    assert hosts[CALLER].change.signal in ("caller_errors", "server_errors")
    assert hosts[CALLER].now.caller_error_rate == pytest.approx(1 / 8, abs=0.01)
    assert hosts[CALLER].now.server_error_rate < 0.03


def test_the_silent_host_is_named_with_its_deliveries_never_reported(incident):
    query, window = preset("24h")

    found = overview(query, window, now=NOW)

    assert [row.client for row in found.silent_hosts] == [SILENT]
    silent = next(rank for rank in found.worst_hosts if rank.name == SILENT)
    assert silent.funnel is not None and silent.funnel.never_reported > 300 and silent.funnel.unreported_rate == 1.0
    steady = next(rank for rank in found.worst_hosts if rank.name == STEADY)
    assert steady.funnel is not None and steady.funnel.never_reported == 0
    figure = found.figure["widget_unreported_rate"]
    assert figure.value is not None and figure.note == "Whole UTC days 2026-12-06 to 2026-12-07."


def test_the_sparklines_are_one_point_per_hour_up_to_now(incident):
    query, window = preset("6h")

    found = overview(query, window, now=NOW)

    broken = found.worst_hosts[0]
    assert found.bucket == "hour" and len(broken.trend) == 25  # the last 25 hours at least, none after now
    assert broken.trend[0][0] == datetime(2026, 12, 6, 13, tzinfo=UTC)
    assert broken.trend[-1][0] == datetime(2026, 12, 7, 13, tzinfo=UTC)
    rates = [failures / sample for _, failures, sample in broken.trend]
    assert max(rates[:21]) < 0.1 and min(rates[22:]) > 0.6  # fine until 10:00, then three calls in four fail
    assert (broken.since, broken.since_earlier) == (datetime(2026, 12, 7, 10, tzinfo=UTC), False)


def test_the_overview_makes_as_many_queries_for_eight_hosts_as_for_one(db):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.analytics.incident_data import incident_lines as lines

    query, window = preset("24h")

    def queries() -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            overview(query, window, now=NOW)
        return [q["sql"] for q in captured.captured_queries]

    ingest(*(line for line in lines(NOW, days=2) if '"client":"zed"' in line))
    one = queries()
    ingest(*lines(NOW, days=2))
    eight = queries()

    assert len(eight) == len(one) <= 24  # grouped queries only: none per host
