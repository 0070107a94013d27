"""The widget funnel: a known mix of deliveries and reports across hosts gives exact figures in
the API, the dashboard and the CSV, whatever order and batches the lines are ingested in, and
ingesting them again changes nothing."""

from __future__ import annotations

import csv
import io
from html import unescape

import pytest

from analytics.models import WidgetFunnelDaily
from core.app_status import AppData, Cancelled, Drawn, Failed, Fetched, Simplification
from tests.analytics.conftest import ingest, line
from tests.analytics.test_dashboard import table_rows

pytestmark = pytest.mark.django_db

DAY = "2026-11-10"
RANGE = f"start={DAY}&end={DAY}"
FUNNEL_API = f"/api/analytics/funnel?{RANGE}"
DASHBOARD = f"/analytics/widgets/?{RANGE}"


def delivery(at: str, key: str, client: str, *, raw_bytes: int = 5_000, simplified: bool = False) -> str:
    reduced = Simplification(original_points=40_000, points=9_000, max_error_m=4.0) if simplified else None
    return line(
        AppData,
        f"{DAY}T{at}",
        client=client,
        request_id=key,
        delivery="inline",
        raw_bytes=raw_bytes,
        result_chars=raw_bytes // 7 + 900,
        simplification=reduced,
    )


def report(outcome: str, at: str, key: str | None, client: str, **fields: object) -> str:
    """A widget's report, logged by its own call (its own request id), naming `key`'s delivery."""
    event = {"drawn": Drawn, "failed": Failed, "cancelled": Cancelled}[outcome]
    defaults: dict[str, object] = {"features": 3} if outcome == "drawn" else {}
    if outcome == "failed":
        defaults["error"] = "x"
    return line(
        event,
        f"{DAY}T{at}",
        client=client,
        request_id=f"report-{at}",
        source="inline",
        delivery_request_id=key,
        **defaults,
        **fields,
    )


CLAUDE, GPT_1, GPT_2, CURSOR = "claude-ai", "ChatGPT/1.2026.1", "ChatGPT/1.2026.2", "cursor-vscode"
DELIVERIES = [
    delivery("10:00:00", "c1", CLAUDE),
    delivery("10:01:00", "c2", CLAUDE, raw_bytes=50_000),
    delivery("10:02:00", "c3", CLAUDE, raw_bytes=50_000),
    delivery("10:03:00", "c4", CLAUDE),
    delivery("10:04:00", "c5", CLAUDE),  # never reported
    delivery("10:05:00", "c6", CLAUDE, raw_bytes=300_000, simplified=True),
    delivery("11:55:00", "p1", CLAUDE),  # pending: within the grace window of the newest event
    delivery("11:56:00", "p2", CLAUDE),
    delivery("10:00:00", "g1", GPT_1),
    delivery("10:01:00", "g2", GPT_1),
    delivery("10:02:00", "g3", GPT_1),  # never reported
    delivery("10:03:00", "g4", GPT_2),
    delivery("10:04:00", "g5", GPT_2),
    delivery("10:00:00", "k1", CURSOR),
    delivery("10:01:00", "k2", CURSOR),
    delivery("10:02:00", "k3", CURSOR),  # never reported
    delivery("10:03:00", "k4", CURSOR),  # its report comes too late: never reported
]
REPORTS = [
    report("drawn", "10:00:05", "c1", CLAUDE),
    report("drawn", "10:01:05", "c2", CLAUDE),
    report("failed", "10:02:05", "c3", CLAUDE, stage="render"),
    report("cancelled", "10:03:05", "c4", CLAUDE, reason="user stopped it"),
    report("drawn", "10:05:09", "c6", CLAUDE),
    report("drawn", "11:56:10", "p2", CLAUDE),
    report("drawn", "10:10:00", None, CLAUDE),  # old-style widgets: no key, unjoined
    report("drawn", "10:10:01", None, CLAUDE),
    report("failed", "10:11:00", None, CLAUDE, stage="init"),
    report("failed", "10:00:05", "g1", GPT_1, stage="init"),
    report("failed", "10:01:05", "g2", GPT_1, stage="decode"),
    report("failed", "10:03:05", "g4", GPT_2, stage="fetch"),
    report("drawn", "10:04:05", "g5", GPT_2),
    report("drawn", "10:04:30", "g5", GPT_2),  # a second report of one delivery: reported once
    report("failed", "10:00:05", "k1", CURSOR, stage="result"),
    report("failed", "10:01:05", "k2", CURSOR, stage="result"),
    report("drawn", "10:30:00", "k4", CURSOR),  # 27 minutes after its delivery: unjoined
]
NEWEST = [line(Fetched, f"{DAY}T12:00:00", client=CLAUDE, tool="tomtom-data-viz", source="data_url")]
EVERYTHING = sorted([*DELIVERIES, *REPORTS, *NEWEST], key=lambda text: text.split('"time":"')[1][:23])

FIGURES = (
    "delivered",
    "drawn",
    "failed",
    "failed_init",
    "failed_result",
    "failed_decode",
    "failed_fetch",
    "failed_render",
    "cancelled",
    "reported",
    "unjoined_reports",
    "pending",
    "never_reported",
)
EXPECTED = {
    # host: delivered, drawn, failed (init, result, decode, fetch, render), cancelled, reported, unjoined,
    #       pending, never reported; then the unreported rate and the failure rate
    CLAUDE: ((8, 6, 2, 1, 0, 0, 0, 1, 1, 6, 3, 1, 1), 1 / 7, 2 / 8),
    GPT_1: ((3, 0, 2, 1, 0, 1, 0, 0, 0, 2, 0, 0, 1), 1 / 3, 1.0),
    GPT_2: ((2, 2, 1, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0), 0.0, 1 / 3),
    CURSOR: ((4, 1, 2, 0, 2, 0, 0, 0, 0, 2, 1, 0, 2), 2 / 4, 2 / 3),
}


def ingested(order: str) -> None:
    if order == "in time order":
        ingest(*EVERYTHING)
    elif order == "reports first, then deliveries":
        ingest(*REPORTS, *NEWEST)
        ingest(*DELIVERIES)
    elif order == "batches of three":
        ingest(*EVERYTHING, batch_size=3)
    elif order == "every other line, then everything again":  # a batch partly stored already
        ingest(*EVERYTHING[::2])
        ingest(*EVERYTHING)
    else:  # half the deliveries, the reports, the other half
        ingest(*DELIVERIES[::2])
        ingest(*REPORTS, *NEWEST)
        ingest(*DELIVERIES[1::2])


ORDERS = [
    "in time order",
    "reports first, then deliveries",
    "batches of three",
    "deliveries around the reports",
    "every other line, then everything again",
]


@pytest.fixture
def staff_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    return client


@pytest.mark.parametrize("order", ORDERS)
def test_the_api_gives_the_exact_funnel_per_host_and_tool(staff_client, settings, order):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    ingested(order)
    rows = staff_client.get(FUNNEL_API).json()["rows"]
    assert [row["client"] for row in rows] == sorted(EXPECTED)
    for row in rows:
        counts, unreported_rate, failure_rate = EXPECTED[row["client"]]
        assert row["tool"] == "tomtom-routing"
        assert tuple(row[name] for name in FIGURES) == counts, row["client"]
        assert row["unreported_rate"] == pytest.approx(unreported_rate)
        assert row["failure_rate"] == pytest.approx(failure_rate)


def test_ingesting_again_changes_nothing(staff_client, settings):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    ingest(*EVERYTHING)
    before = list(WidgetFunnelDaily.objects.order_by("client", "size", "simplified").values())
    again = ingest(*EVERYTHING)
    ingest(*REPORTS[:5], *DELIVERIES[:5])
    assert again.new == 0
    assert list(WidgetFunnelDaily.objects.order_by("client", "size", "simplified").values()) == before


def test_families_sizes_and_simplification(staff_client, settings):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    ingest(*EVERYTHING)
    families = {row["client"]: row for row in staff_client.get(f"{FUNNEL_API}&group=family").json()["rows"]}
    chatgpt = families["ChatGPT"]
    assert (chatgpt["delivered"], chatgpt["reported"], chatgpt["never_reported"]) == (5, 4, 1)
    assert chatgpt["unreported_rate"] == pytest.approx(1 / 5)
    sized = staff_client.get(f"{FUNNEL_API}&client={CLAUDE}&by=size,simplified").json()["rows"]
    assert [
        (
            r["size"],
            r["simplified"],
            r["delivered"],
            r["reported"],
            r["pending"],
            r["never_reported"],
            r["unjoined_reports"],
        )
        for r in sized
    ] == [
        ("100kb_1mb", "yes", 1, 1, 0, 0, 0),
        ("10kb_100kb", "no", 2, 2, 0, 0, 0),
        ("lt_10kb", "no", 5, 3, 1, 1, 0),
        ("unjoined", "unjoined", 0, 0, 0, 0, 3),
    ]


def test_a_longer_grace_window_makes_a_late_report_count(staff_client, settings):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 3600
    ingest(*EVERYTHING)
    cursor = next(row for row in staff_client.get(FUNNEL_API).json()["rows"] if row["client"] == CURSOR)
    assert (cursor["reported"], cursor["unjoined_reports"], cursor["never_reported"]) == (3, 0, 1)


def test_the_dashboard_and_the_csv_show_the_same_figures(staff_client, settings):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    ingest(*EVERYTHING)
    html = staff_client.get(DASHBOARD).content.decode()
    # host, tool, delivered, drawn, failed, init, result, decode, fetch, render, cancelled, never reported,
    # unreported rate, failure rate, pending, unjoined (highest unreported rate first); then mismatched, dropped
    shown = table_rows(html, "funnel-table")
    assert [row[:16] for row in shown] == [
        [CURSOR, "tomtom-routing", "4", "1", "2", "0", "2", "0", "0", "0", "0", "2", "50.0%", "66.7%", "0", "1"],
        [GPT_1, "tomtom-routing", "3", "0", "2", "1", "0", "1", "0", "0", "0", "1", "33.3%", "100.0%", "0", "0"],
        [CLAUDE, "tomtom-routing", "8", "6", "2", "1", "0", "0", "0", "1", "1", "1", "14.3%", "25.0%", "1", "3"],
        [GPT_2, "tomtom-routing", "2", "2", "1", "0", "0", "0", "1", "0", "0", "0", "0.0%", "33.3%", "0", "0"],
    ]
    assert [row[16:] for row in shown] == [["0", "0"]] * 4, "every report taken as sent"
    sizes = [[unescape(cell) for cell in row] for row in table_rows(html, "funnel-by-size")]
    assert [row[:5] for row in sizes] == [
        ["100 kB-1 MB", "yes", "1", "1", "0"],
        ["10-100 kB", "no", "2", "1", "1"],
        ["< 10 kB", "no", "14", "4", "5"],
        ["unjoined reports", "unjoined", "0", "3", "1"],
    ]
    exported = list(csv.DictReader(io.StringIO(staff_client.get(f"{DASHBOARD}&csv=funnel-table").content.decode())))
    by_host = {row["host"]: row for row in exported}
    assert by_host[CURSOR]["never_reported"] == "2" and by_host[CURSOR]["unreported_rate"] == "0.5"
    assert by_host[CLAUDE]["pending"] == "1" and by_host[CLAUDE]["unjoined_reports"] == "3"


def test_the_request_page_shows_the_reports_joined_to_the_delivering_call(staff_client, settings):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    ingest(*EVERYTHING)
    at = f"{DAY}T10:04:00Z"
    events = staff_client.get(f"/api/analytics/requests/g5?at={at}").json()
    assert [(e["message"], e["fields"].get("report_request_id")) for e in events] == [
        ("App data", None),
        ("App drawn", "report-10:04:05"),
        ("App drawn", "report-10:04:30"),
    ]
    assert {e["fields"].get("delivery_request_id") for e in events[1:]} == {"g5"}
    page = staff_client.get(f"/analytics/requests/g5/?at={at}").content.decode()
    assert [row[1] for row in table_rows(page, "request-events")] == ["App data", "App drawn", "App drawn"]
    assert "report-10:04:30" in page
