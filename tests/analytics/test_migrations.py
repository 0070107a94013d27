"""Migrations that rewrite rollups keep what the reports read."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from analytics.models import ToolCallHourly
from tests.analytics.conftest import D1, KNOWN_CALLS, call_line, ingest

BEFORE = ("analytics", "0006_split_daily_tool_call_rollup")
FOLDED = ("analytics", "0007_fold_outcomes_into_hourly_tool_call_rollup")


def migrate(target: tuple[str, str]):
    """Migrate analytics to `target`; the models as they were there."""
    executor = MigrationExecutor(connection)
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


@pytest.fixture(autouse=True)
def latest_schema_after():
    """Each test migrates back and forth; the tests after it need every migration applied."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def rows(model) -> list[dict]:
    return sorted(
        ({name: value for name, value in row.items() if name != "id"} for row in model.objects.values()),
        key=lambda row: tuple(str(value) for value in row.values()),
    )


@pytest.mark.django_db(transaction=True)
def test_the_hourly_tool_call_rollup_folds_its_outcomes_into_columns_and_back():
    newer_code = call_line(f"{D1}T10:20:00", client="goose", outcome="quota_exceeded", tenant="acme")
    slow = call_line(f"{D1}T10:40:00", client="goose", outcome="unavailable", tenant="acme", total_ms=90_000)
    ingest(*KNOWN_CALLS, newer_code, slow)
    ingested = rows(ToolCallHourly)

    per_outcome = migrate(BEFORE).get_model("analytics", "ToolCallHourly")
    goose = per_outcome.objects.filter(client="goose").order_by("outcome")
    assert [(row.outcome, row.calls, row.total_le_60000, row.total_timed) for row in goose] == [
        ("quota_exceeded", 1, 1, 1),
        ("unavailable", 1, 0, 1),
    ]
    assert sum(row.calls for row in per_outcome.objects.all()) == len(KNOWN_CALLS) + 2

    folded = migrate(FOLDED).get_model("analytics", "ToolCallHourly")
    assert rows(folded) == ingested


@pytest.mark.django_db(transaction=True)
def test_the_old_caller_rollup_is_counted_from_the_stored_events_when_it_is_created():
    from analytics.models import OldCallerDaily
    from tests.analytics.conftest import KNOWN_DATA

    ingest(*KNOWN_DATA)
    ingested = rows(OldCallerDaily)
    assert [(row["client"], row["calls"]) for row in ingested] == [("goose", 1), ("ChatGPT", 1), ("goose", 1)]

    migrate(FOLDED)  # before the rollup: the table goes
    created = migrate(("analytics", "0008_old_caller_daily_rollup")).get_model("analytics", "OldCallerDaily")

    later = ("tenant", "tool_calls")  # counted by 0011 and 0018
    assert rows(created) == [{k: v for k, v in row.items() if k not in later} for row in ingested]


@pytest.mark.django_db(transaction=True)
def test_who_still_calls_is_recounted_in_calls_from_the_stored_events_when_migrated():
    """Migration 0018: a call that sent two outdated inputs, counted twice before, is one call on
    the row of its first input; the per-input counts stay."""
    from analytics.models import OldCallerDaily
    from core.app_status import OutdatedCall
    from tests.analytics.conftest import line

    inputs = [("units", "removed"), ("avoid", "renamed")]
    ingest(*(line(OutdatedCall, f"{D1}T10:00:00", request_id="r-9", input=i, change=c) for i, c in inputs))
    ingested = rows(OldCallerDaily)
    assert sorted((row["input"], row["calls"], row["tool_calls"]) for row in ingested) == [
        ("avoid", 1, 1),
        ("units", 1, 0),
    ]

    before = migrate(("analytics", "0017_widget_report_sessions")).get_model("analytics", "OldCallerDaily")
    assert sum(row.calls for row in before.objects.all()) == 2  # what who-still-calls summed: two "calls"
    recounted = migrate(("analytics", "0018_evidence_tables")).get_model("analytics", "OldCallerDaily")

    assert rows(recounted) == ingested
