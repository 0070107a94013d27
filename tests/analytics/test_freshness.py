"""How fresh the stored events are: marked by the store in each batch's transaction, by the
retention when it drops raw events, and exposed to Prometheus for the ingestion-lag alert."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from prometheus_client.parser import text_string_to_metric_families

from analytics.ingest.store import Store
from analytics.models import IngestionMark
from core.app_status import Drawn
from tests.analytics.conftest import call_line, ingest, line

pytestmark = pytest.mark.django_db
TOKEN = "metrics-token-9f2"


def marks() -> dict[str, IngestionMark]:
    return {mark.family: mark for mark in IngestionMark.objects.all()}


def test_a_batch_marks_its_newest_event_and_when_it_was_stored():
    before = datetime.now(UTC)
    ingest(
        call_line("2026-11-02T10:00:00"),
        call_line("2026-11-02T12:30:00", tool="tomtom-geocode"),
        line(Drawn, "2026-11-02T11:00:00", source="inline"),
    )

    found = marks()
    assert found["ToolCall"].data_up_to == datetime(2026, 11, 2, 12, 30, tzinfo=UTC)
    assert found["AppStatus"].data_up_to == datetime(2026, 11, 2, 11, tzinfo=UTC)
    assert all(before <= mark.last_ingest <= datetime.now(UTC) for mark in found.values())
    assert found["ToolCall"].kept_from is None


def test_ingesting_old_or_repeated_lines_moves_only_the_last_ingest():
    ingest(call_line("2026-11-02T12:30:00"))
    first = marks()["ToolCall"]

    ingest(call_line("2026-11-02T12:30:00"), call_line("2026-11-01T08:00:00"))

    again = marks()["ToolCall"]
    assert again.data_up_to == first.data_up_to  # an older line does not move it back
    assert again.last_ingest > first.last_ingest


def test_a_batch_that_fails_marks_nothing():
    class Failing(Store):
        def _add(self, batch_deltas):
            raise RuntimeError("rollup refused")

    from analytics.ingest.batches import IngestReport, batches

    store = Failing()
    with pytest.raises(RuntimeError):
        for batch in batches([call_line("2026-11-02T10:00:00").encode()], store, IngestReport()):
            store.write(batch)
    assert marks() == {}


def test_retention_marks_what_it_dropped(settings):
    settings.ANALYTICS_RETENTION_DAYS = 3
    now = datetime.now(UTC)
    ingest(call_line((now - timedelta(days=1)).isoformat(timespec="seconds").replace("+00:00", "")))

    call_command("analytics_retention", stdout=io.StringIO())

    cutoff = datetime.combine(now.date(), datetime.min.time(), tzinfo=UTC) - timedelta(days=3)
    assert {family: mark.kept_from for family, mark in marks().items()} == {"ToolCall": cutoff, "AppStatus": cutoff}


def test_the_metrics_endpoint_exposes_the_marks(client, settings):
    settings.ANALYTICS_METRICS_TOKEN = TOKEN
    ingest(call_line("2026-11-02T12:30:00"))

    response = client.get("/analytics/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")

    samples = {
        (s.name, tuple(s.labels.items())): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }
    up_to = samples[("tomtom_mcp_analytics_data_up_to_timestamp_seconds", (("family", "ToolCall"),))]
    assert up_to == datetime(2026, 11, 2, 12, 30, tzinfo=UTC).timestamp()
    last = samples[("tomtom_mcp_analytics_last_ingest_timestamp_seconds", (("family", "ToolCall"),))]
    assert abs(last - datetime.now(UTC).timestamp()) < 60
