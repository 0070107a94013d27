"""Issue #42: a widget report joins a delivery of its own client session only, and one client
session counts a bounded number of reports naming a bounded number of tools; what the funnel
did not take as sent is counted (`mismatched`, `dropped`) and shown."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.db import connection

from analytics.funnel import GUARD_HELP
from analytics.models import (
    DROPPED_KIND,
    AppStatusDailyCount,
    AppStatusEvent,
    AppStatusHourlyCount,
    WidgetFunnelDaily,
    WidgetReportSession,
)
from core.app_status import AppData, Drawn, Failed
from tests.analytics.conftest import ingest, ingest_concurrently, line
from tests.analytics.test_dashboard import table_rows

pytestmark = pytest.mark.django_db

DAY = "2026-11-12"
FUNNEL = f"/api/analytics/funnel?start={DAY}&end={DAY}"
VICTIM, OTHER = "claude-ai", "intruder"
ORDERS = ["in time order", "reports first", "deliveries first, reports later", "one batch each line"]


def delivery(at: str, key: str, *, client: str = VICTIM, session: str | None = "victim-s", **fields: object) -> str:
    fields.setdefault("raw_bytes", 5_000)
    return line(
        AppData,
        f"{DAY}T{at}",
        client=client,
        request_id=key,
        session=session,
        delivery=fields.pop("delivery", "inline"),
        **fields,
    )


def report(
    outcome: str, at: str, key: str | None, *, client: str = VICTIM, session: str | None = "victim-s", **fields: object
) -> str:
    event = {"drawn": Drawn, "failed": Failed}[outcome]
    extra: dict[str, object] = {"features": 1} if outcome == "drawn" else {"stage": "render", "error": "x"}
    return line(
        event,
        f"{DAY}T{at}",
        client=client,
        request_id=f"report-{at}-{client}",
        session=session,
        source="inline",
        delivery_request_id=key,
        **{**extra, **fields},
    )


def ingested(order: str, deliveries: list[str], reports: list[str]) -> None:
    everything = sorted([*deliveries, *reports], key=lambda text: text.split('"time":"')[1][:23])
    if order == "in time order":
        ingest(*everything)
    elif order == "reports first":
        ingest(*reports)
        ingest(*deliveries)
    elif order == "deliveries first, reports later":
        ingest(*deliveries)
        ingest(*reports)
    else:
        ingest(*everything, batch_size=1)


@pytest.fixture
def staff_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    return client


def rows(staff_client, query: str = "") -> dict[tuple[str, str], dict]:
    return {(r["client"], r["tool"]): r for r in staff_client.get(f"{FUNNEL}{query}").json()["rows"]}


@pytest.mark.parametrize("order", ORDERS)
def test_a_report_from_another_session_is_not_joined_but_counted_a_mismatch(staff_client, settings, order):
    """The finding: 50 `failed` reports naming another client's delivery moved that client's
    failure rate from 0 to 0.83. From another session (another client, or the same client name in
    another session) a report joins nothing and counts on the reporter's own row."""
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    deliveries = [delivery("10:00:00", "d1"), delivery("10:01:00", "d2")]
    honest = [report("drawn", "10:00:05", "d1")]
    forged = [report("failed", f"10:00:{10 + i:02d}", "d2", client=OTHER, session="intruder-s") for i in range(50)]
    replayed = [report("failed", "10:01:30", "d2", session="another-s")]  # the same client name, another session
    ingested(order, deliveries, honest + forged + replayed)

    found = rows(staff_client)
    victim = found[(VICTIM, "tomtom-routing")]
    assert (victim["delivered"], victim["reported"], victim["drawn"], victim["failed"]) == (2, 1, 1, 1)
    assert victim["failure_rate"] == pytest.approx(0.5), "only its own session's reports"
    assert (victim["mismatched"], victim["unjoined_reports"]) == (1, 1)
    intruder = found[(OTHER, "tomtom-routing")]
    assert (intruder["delivered"], intruder["reported"], intruder["failed"]) == (0, 0, 50)
    assert (intruder["mismatched"], intruder["unjoined_reports"], intruder["dropped"]) == (50, 50, 0)
    joined = WidgetFunnelDaily.objects.get(client=VICTIM, size="lt_10kb")
    assert (joined.reported, joined.drawn, joined.failed_render, joined.mismatched) == (1, 1, 0, 0)


def test_ingesting_again_adds_no_mismatch(staff_client, settings):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    lines = [delivery("10:00:00", "d1"), report("failed", "10:00:05", "d1", client=OTHER, session="x")]
    ingest(*lines)
    before = list(WidgetFunnelDaily.objects.order_by("client", "tool", "size").values())
    ingest(*lines)
    ingest(lines[1])
    assert list(WidgetFunnelDaily.objects.order_by("client", "tool", "size").values()) == before


def test_a_sessionless_report_joins_a_sessionless_delivery_of_the_same_client_only(staff_client, settings):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    ingest(
        delivery("10:00:00", "g1", client="ChatGPT", session=None),
        delivery("10:00:01", "g2", client="ChatGPT", session=None),
        report("drawn", "10:00:05", "g1", client="ChatGPT", session=None),
        report("drawn", "10:00:06", "g2", client="ChatGPT", session="some-session"),
    )
    chatgpt = rows(staff_client)[("ChatGPT", "tomtom-routing")]
    assert (chatgpt["delivered"], chatgpt["reported"], chatgpt["mismatched"], chatgpt["pending"]) == (2, 1, 1, 1)


def test_an_error_result_is_a_delivery_its_failed_report_joins(staff_client, settings):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    ingest(
        delivery("10:00:00", "e1", delivery="error", raw_bytes=None),
        report("failed", "10:00:01", "e1", stage="result"),
        delivery("10:05:00", "e2", delivery="error", raw_bytes=None),  # never reported
        line(Drawn, f"{DAY}T10:30:00", request_id="newest", source="inline"),
    )
    (errors,) = [r for r in staff_client.get(f"{FUNNEL}&by=size").json()["rows"] if r["size"] == "error"]
    assert (errors["delivered"], errors["reported"], errors["failed_result"], errors["never_reported"]) == (2, 1, 1, 1)


def test_300_made_up_tool_names_from_one_session_make_at_most_the_caps_rows(staff_client, settings):
    """The finding: 300 made-up tool names made 300 rows per rollup table."""
    settings.ANALYTICS_SESSION_MAX_TOOLS = 32
    made_up = [
        line(
            Failed,
            f"{DAY}T11:{i // 60:02d}:{i % 60:02d}",
            tool=f"tomtom-fake-{i:03d}",
            client=OTHER,
            request_id=f"r{i}",
            session="flood",
            source="none",
            stage="init",
            error="x",
        )
        for i in range(300)
    ]
    honest = [report("drawn", "12:00:00", None), delivery("12:00:10", "d1")]
    ingest(*made_up[:100])
    ingest(*made_up[100:], *honest, batch_size=70)

    for rollup in (AppStatusHourlyCount, AppStatusDailyCount):
        assert rollup.objects.filter(client=OTHER).count() <= 32, rollup
        assert sum(rollup.objects.filter(client=OTHER).values_list("count", flat=True)) == 32
    assert WidgetFunnelDaily.objects.filter(client=OTHER).count() <= 32 + 1  # the tools taken, and the dropped
    session = WidgetReportSession.objects.get(session="flood")
    assert (session.reports, session.dropped, session.client) == (32, 268, OTHER)
    assert AppStatusEvent.objects.filter(client=OTHER, kind=DROPPED_KIND).count() == 268, "stored, marked"
    dropped = rows(staff_client)[(OTHER, "(over a session cap)")]
    assert (dropped["dropped"], dropped["failed"], dropped["delivered"]) == (268, 0, 0)
    assert rows(staff_client)[(VICTIM, "tomtom-routing")]["dropped"] == 0, "another session's caps are its own"
    again = ingest(*made_up)
    assert again.new == 0 and WidgetReportSession.objects.get(session="flood").dropped == 268


def test_a_session_counts_at_most_the_report_cap_a_day_and_a_sessionless_client_the_tool_cap_only(
    staff_client, settings
):
    settings.ANALYTICS_SESSION_MAX_REPORTS = 5
    settings.ANALYTICS_SESSION_MAX_TOOLS = 2
    session = [report("drawn", f"10:00:{i:02d}", None, session="busy") for i in range(8)]
    sessionless = [report("drawn", f"10:01:{i:02d}", None, client="ChatGPT", session=None) for i in range(8)]
    other_tool = [
        report("drawn", f"10:02:{i:02d}", None, client="ChatGPT", session=None, tool=f"tomtom-t{i}") for i in range(3)
    ]
    ingest(*session, *sessionless, *other_tool)
    busy = WidgetReportSession.objects.get(session="busy")
    assert (busy.reports, busy.dropped) == (5, 3)
    chatgpt = WidgetReportSession.objects.get(session="", client="ChatGPT")
    assert (chatgpt.reports, chatgpt.dropped) == (9, 2), "every report of its one tool, one more tool"
    found = rows(staff_client)
    assert found[(VICTIM, "tomtom-routing")]["drawn"] == 5
    assert found[(VICTIM, "(over a session cap)")]["dropped"] == 3
    assert found[("ChatGPT", "(over a session cap)")]["dropped"] == 2


def test_a_dropped_report_stored_before_its_delivery_stays_dropped(staff_client, settings):
    settings.ANALYTICS_SESSION_MAX_REPORTS = 1
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    ingest(report("drawn", "10:00:05", "d0"), report("drawn", "10:00:06", "d1"))  # the second one is over
    ingest(delivery("10:00:00", "d0"), delivery("10:00:01", "d1"))
    victim = rows(staff_client)[(VICTIM, "tomtom-routing")]
    assert (victim["delivered"], victim["reported"], victim["drawn"], victim["unjoined_reports"]) == (2, 1, 1, 0)
    assert min(WidgetFunnelDaily.objects.values_list("drawn", flat=True)) >= 0


def test_the_widgets_page_shows_the_mismatched_and_dropped_reports(staff_client, settings):
    """The funnel table's `(over a session cap)` row counts nothing but `dropped`: without that
    column it is a row of zeros."""
    settings.ANALYTICS_SESSION_MAX_REPORTS = 2
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    ingest(
        delivery("10:00:00", "d1"),
        report("failed", "10:00:05", "d1", client=OTHER, session="intruder-s"),
        *(report("drawn", f"10:01:{i:02d}", None) for i in range(5)),
    )
    html = staff_client.get(f"/analytics/widgets/?start={DAY}&end={DAY}").content.decode()
    head = re.search(r'<table id="funnel-table".*?<thead>(.*?)</thead>', html, re.S)
    assert head, "no funnel table"
    headings = [
        (unescape(title), name)
        for title, name in re.findall(r'<th scope="col" title="([^"]*)"[^>]*><a [^>]*>([^<]*)</a>', head.group(1))
    ]
    assert headings[-2:] == [(GUARD_HELP["mismatched"], "Mismatched"), (GUARD_HELP["dropped"], "Dropped")]
    found = {(row[0], row[1]): row[-2:] for row in table_rows(html, "funnel-table")}
    assert found[(OTHER, "tomtom-routing")] == ["1", "0"]
    assert found[(VICTIM, "(over a session cap)")] == ["0", "3"], "not a row of zeros"


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_two_writers_on_one_session_count_it_once(settings):
    """The caps hold where the reports land: two writers (replicas, workers) storing reports of
    one session at the same moment count them against one row, under its lock."""
    if connection.vendor != "postgresql":
        pytest.skip("concurrent writers need PostgreSQL (DATABASE_URL=postgres://...)")
    settings.ANALYTICS_SESSION_MAX_REPORTS = 30
    reports = [report("drawn", f"10:{i // 60:02d}:{i % 60:02d}", None, session="shared") for i in range(80)]
    ingest_concurrently(reports[::2], reports[1::2], batch_size=10)
    shared = WidgetReportSession.objects.get(session="shared")
    assert (shared.reports, shared.dropped) == (30, 50)
    assert AppStatusEvent.objects.filter(kind="drawn").count() == 30
    assert AppStatusEvent.objects.filter(kind=DROPPED_KIND).count() == 50
    assert sum(AppStatusHourlyCount.objects.values_list("count", flat=True)) == 30


def test_the_retention_drops_the_session_counts_with_the_raw_events(settings):
    from django.core.management import call_command

    ingest(report("drawn", "10:00:00", None, session="old"))
    assert WidgetReportSession.objects.filter(session="old").exists()
    call_command("analytics_retention", "--days", "1")  # everything in November 2026 is older
    assert not WidgetReportSession.objects.exists()
