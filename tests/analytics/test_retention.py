"""Growth: raw events by month on PostgreSQL, retention drops old raw events and keeps the rollups."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from django.core.management import call_command
from django.db import connection

from analytics.models import AppStatusEvent, ToolCallEvent
from analytics.partitions import drop_before, is_partitioned, partitions, retention_cutoff
from analytics.selectors import ReportQuery, failure_counts, old_callers
from analytics.tool_stats import tool_call_stats
from tests.analytics.conftest import KNOWN_CALLS, KNOWN_DATA, call_line, ingest

pytestmark = pytest.mark.django_db

BOTH_DAYS = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3))


def reports() -> tuple[list, list, list]:
    return (
        [row.as_dict() for row in failure_counts(BOTH_DAYS, by=("bucket", "client", "tool"))],
        [row.as_dict() for row in tool_call_stats(BOTH_DAYS, by=("bucket", "client", "tool", "backend"))],
        old_callers(BOTH_DAYS),
    )


def test_retention_drops_raw_events_and_the_reports_stay(known_data, known_calls, capsys):
    before = reports()
    assert [(caller.client, caller.calls) for caller in before[2]] == [("ChatGPT", 1), ("goose", 2)]

    call_command("analytics_retention", "--days", "1")  # everything in November 2026 is older

    assert (AppStatusEvent.objects.count(), ToolCallEvent.objects.count()) == (0, 0)
    assert reports() == before
    out = capsys.readouterr().out
    assert f"{len(KNOWN_CALLS)} events before" in out and f"{len(KNOWN_DATA)} events before" in out


def test_events_before_the_horizon_are_not_ingested_again(settings, known_calls):
    before = reports()
    call_command("analytics_retention", "--days", "1")
    settings.ANALYTICS_RETENTION_DAYS = 1

    report = ingest(*KNOWN_CALLS[:2])

    assert (report.tool_calls, report.tool_calls_new, report.tool_calls_expired) == (2, 0, 2)
    assert ToolCallEvent.objects.count() == 0
    assert reports() == before  # a recount from the two lines would have lowered the hour's counts


def test_a_cutoff_keeps_the_events_after_it(known_calls):
    removed = drop_before(ToolCallEvent, datetime(2026, 11, 3, tzinfo=UTC))

    assert removed == 6
    assert sorted(ToolCallEvent.objects.values_list("client", flat=True)) == ["ChatGPT/1.2026.2", "fleet-agent"]


def test_the_cutoff_is_midnight_utc_and_off_at_zero():
    assert retention_cutoff(30, today=date(2026, 12, 1)) == datetime(2026, 11, 1, tzinfo=UTC)
    assert retention_cutoff(0) is None


@pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions are PostgreSQL's")
def test_raw_events_are_stored_in_one_partition_per_month():
    ingest(call_line("2026-10-31T23:59:59"), call_line("2026-11-01T00:00:00"), call_line("2027-01-15T12:00:00"))

    table = ToolCallEvent._meta.db_table
    assert is_partitioned(table) and is_partitioned(AppStatusEvent._meta.db_table)
    months = [date(2026, 10, 1), date(2026, 11, 1), date(2026, 12, 1), date(2027, 1, 1)]  # every month of the batch
    assert [month for _, month in partitions(table)] == months
    removed = drop_before(ToolCallEvent, datetime(2026, 11, 1, tzinfo=UTC))
    assert removed == 1
    assert [month for _, month in partitions(table)] == months[1:]
    assert ToolCallEvent.objects.count() == 2
