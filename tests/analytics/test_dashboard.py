"""The staff dashboard (server-rendered): who may see it, its table, its drill-down, its admin link."""

from __future__ import annotations

import csv
import io
import re

import pytest

from core.app_status import Failed, OutdatedCall
from tests.analytics.conftest import D1, call_line, ingest, line

pytestmark = pytest.mark.django_db

DASHBOARD = "/analytics/widgets/?start=2026-11-02&end=2026-11-03"


@pytest.fixture
def staff_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    return client


def table_rows(html: str, table_id: str) -> list[list[str]]:
    """The text of each body row's cells."""
    body = re.search(rf'<table id="{table_id}".*?<tbody>(.*?)</tbody>', html, re.S)
    assert body, f"no table {table_id}"
    rows = re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S)
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
        for row in rows
    ]


@pytest.mark.parametrize("user", [None, "someone"])
def test_only_staff_may_see_it(client, django_user_model, user):
    if user:
        client.force_login(django_user_model.objects.create_user(user))

    for url in (DASHBOARD, "/analytics/events/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")


def test_the_table_shows_counts_and_rates_highest_failure_rate_first(staff_client, known_data):
    html = staff_client.get(DASHBOARD).content.decode()

    assert table_rows(html, "failure-table") == [
        # host, tool, drawn, failed, cancelled, too large, dropped, decode, fetch, unknown, rate, n (the rate's sample)
        ["cursor-vscode", "tomtom-routing", "0", "3", "0", "0", "2", "0", "0", "0", "100.0%", "3"],
        ["ChatGPT", "tomtom-data-viz", "1", "2", "0", "0", "0", "1", "1", "0", "66.7%", "3"],
        ["claude-ai", "tomtom-routing", "3", "1", "0", "0", "0", "0", "0", "1", "25.0%", "4"],
        ["claude-ai", "tomtom-geocode", "1", "0", "0", "0", "0", "0", "0", "0", "0.0%", "1"],
        ["goose", "tomtom-routing", "0", "0", "0", "1", "0", "0", "0", "0", "—", "0"],
    ]
    assert 'class="number small-sample" title="2 of 3 widgets failed">66.7%</td>' in html  # below 20 reports


def test_the_table_sorts_by_any_column(staff_client, known_data):
    by_drawn = staff_client.get(f"{DASHBOARD}&failure-table-sort=-widgets_drawn").content.decode()
    by_rate_ascending = staff_client.get(f"{DASHBOARD}&failure-table-sort=failure_rate").content.decode()

    assert [row[:2] for row in table_rows(by_drawn, "failure-table")] == [
        ["claude-ai", "tomtom-routing"],
        ["ChatGPT", "tomtom-data-viz"],
        ["claude-ai", "tomtom-geocode"],
        ["cursor-vscode", "tomtom-routing"],
        ["goose", "tomtom-routing"],
    ]
    assert [row[-2] for row in table_rows(by_rate_ascending, "failure-table")] == [
        "0.0%",
        "25.0%",
        "66.7%",
        "100.0%",
        "—",
    ]


def test_the_chart_has_a_line_per_host_and_the_old_callers_are_listed(staff_client, known_data):
    html = staff_client.get(DASHBOARD).content.decode()

    assert re.findall(r'<g class="series series-\d" data-host="([^"]+)">', html) == [
        "ChatGPT",
        "claude-ai",
        "cursor-vscode",
    ]
    assert table_rows(html, "old-callers") == [
        [
            "ChatGPT",
            "—",
            "outdated input",
            "tomtom-traffic",
            "language (string_now_list)",
            "1",
            "2026-11-03 09:45",
            "2026-11-03 09:45",
        ],
        [
            "goose",
            "—",
            "retired tool",
            "tomtom-fuzzy-search",
            "tomtom-geocode",
            "2",
            "2026-11-02 12:30",
            "2026-11-03 09:30",
        ],
    ]


def test_filters_narrow_the_table_and_bad_ones_are_explained(staff_client, known_data):
    one_tool = staff_client.get(f"{DASHBOARD}&tool=tomtom-data-viz").content.decode()
    backwards = staff_client.get("/analytics/widgets/?start=2026-11-03&end=2026-11-02").content.decode()

    assert [row[:2] for row in table_rows(one_tool, "failure-table")] == [["ChatGPT", "tomtom-data-viz"]]
    assert "the start date is after the end date" in backwards


def test_an_empty_range_says_so(staff_client):
    html = staff_client.get("/analytics/widgets/?start=2026-12-01&end=2026-12-31").content.decode()

    assert "No widget reported in this range." in html
    assert table_rows(html, "failure-table") == [["No app-status events in this range."]]


def test_a_failure_count_drills_down_to_its_events_with_their_stage(staff_client, known_data):
    html = staff_client.get(DASHBOARD).content.decode()
    link = re.search(r'<a href="(/analytics/events/\?[^"]*client=cursor-vscode[^"]*kind=failed)">3</a>', html)
    assert link, "the failed count of cursor-vscode links to its events"

    events = staff_client.get(link.group(1).replace("&amp;", "&")).content.decode()

    assert [row[:5] for row in table_rows(events, "failing-events")] == [
        ["2026-11-03 09:00:00", "failed", "cursor-vscode", "tomtom-routing", "result"],
        ["2026-11-02 10:40:01", "failed", "cursor-vscode", "tomtom-routing", "result"],
        ["2026-11-02 10:20:01", "failed", "cursor-vscode", "tomtom-routing", "result"],
    ]


def test_the_admin_index_links_to_the_dashboard(staff_client):
    html = staff_client.get("/admin/").content.decode()

    assert '<a href="/analytics/">Overview: is anything broken, where, since when</a>' in html
    assert '<a href="/analytics/widgets/">Widget failures by host</a>' in html


CALLS = "/analytics/tool-calls/?start=2026-11-02&end=2026-11-03"


def test_the_tool_call_page_shows_every_table_by_family(staff_client, known_calls):
    html = staff_client.get(f"{CALLS}&group=family").content.decode()

    header = re.search(r'<table id="calls-by-host".*?</thead>', html, re.S).group(0)
    assert re.findall(r"<a[^>]*>([^<]*)</a>", header) == [
        "Host",
        "Tool",
        "Calls",
        "Errors",
        "By code",
        "Error rate",
        "p50 ms",
        "p95 ms",
        "p95 upstream ms",
        "Upstream calls",
        "Answer bytes",
        "Bytes per call",
    ]
    assert [row[:7] for row in table_rows(html, "calls-by-host")] == [
        # the most errors first; the errors by code in one cell: the table fits the page (the CSV has a column per code)
        ["Claude (desktop, web)", "tomtom-routing", "4", "2", "invalid_arguments 1, unavailable 1", "50.0%", "100.0"],
        ["ChatGPT", "tomtom-geocode", "2", "1", "retry_later 1", "50.0%", "75.0"],
        ["Claude Code", "tomtom-geocode", "1", "0", "—", "0.0%", "35.0"],
        ["fleet-agent", "tomtom-routing", "1", "0", "—", "0.0%", "750.0"],
    ]
    # tool, calls, ..., p50, p95, upstream p95, upstream calls, bytes, bytes per call
    assert [[row[0], row[1], *row[-6:]] for row in table_rows(html, "calls-by-tool")] == [
        ["tomtom-routing", "5", "350.0", "1,750.0", "1,800.0", "5", "8,500", "1,700"],
        ["tomtom-geocode", "3", "62.5", "96.2", "92.5", "3", "3,250", "1,083"],
    ]
    assert [row[:3] for row in table_rows(html, "calls-by-backend")] == [
        ["tomtom-maps", "1", "1"],
        ["tomtom-orbis-maps", "7", "2"],
    ]
    assert 'id="error-rate-chart"' in html
    assert "calls-by-tenant" not in html  # no tenant logged yet


def test_every_table_downloads_as_csv(staff_client, known_data, known_calls):
    failures = staff_client.get(f"{DASHBOARD}&csv=failure-table")
    calls = staff_client.get(f"{CALLS}&group=family&csv=calls-by-backend")

    assert failures["Content-Type"] == "text/csv; charset=utf-8"
    assert failures["Content-Disposition"] == 'attachment; filename="failure-table_2026-11-02_2026-11-03.csv"'
    lines = failures.content.decode().splitlines()
    assert lines[0] == (
        "host,tool,widgets_drawn,widgets_failed,widgets_cancelled,too_large,host_dropped,"
        "decode_failed,fetch_failed,unknown_events,failure_rate"
    )
    assert lines[1:] == [
        "cursor-vscode,tomtom-routing,0,3,0,0,2,0,0,0,1.0",
        "ChatGPT,tomtom-data-viz,1,2,0,0,0,1,1,0,0.6666666666666666",
        "claude-ai,tomtom-routing,3,1,0,0,0,0,0,1,0.25",
        "claude-ai,tomtom-geocode,1,0,0,0,0,0,0,0,0.0",
        "goose,tomtom-routing,0,0,0,1,0,0,0,0,",
    ]
    assert staff_client.get(f"{DASHBOARD}&csv=old-callers").content.decode().splitlines()[1] == (
        "ChatGPT,,outdated_call,tomtom-traffic,,language,string_now_list,1,2026-11-03T09:45:00+00:00,"
        "2026-11-03T09:45:00+00:00"
    )
    assert calls.content.decode().splitlines()[1].startswith("tomtom-maps,1,1,1.0,0,0,0,0,0,1,0,0,0,0,1500.0,")
    assert staff_client.get(f"{DASHBOARD}&csv=nope").status_code == 404


HOSTILE_NAMES = ['=HYPERLINK("https://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\r=1", "a=1"]
NEUTRALISED = ['\'=HYPERLINK("https://evil.example","x")', "'+1+1", "'-2+3", "'@SUM(A1)", "'\tcmd", "'\r=1", "a=1"]


def test_csv_cells_from_clients_never_start_a_formula(staff_client):
    """OWASP's CSV-injection rule on every table: a host name (what its client sent) starting with
    = + - @ tab or CR is written with a leading single quote; other cells as they are."""
    failed = {"source": "inline", "stage": "render"}
    outdated = {"tool": "tomtom-traffic", "input": "language", "change": "string_now_list"}
    ingest(
        *(line(Failed, f"{D1}T10:00:00", client=name, **failed) for name in HOSTILE_NAMES),
        *(call_line(f"{D1}T10:00:00", client=name) for name in HOSTILE_NAMES),
        line(OutdatedCall, f"{D1}T11:00:00", client="@host", **outdated),
    )
    tables = {
        "failure-table": f"{DASHBOARD}&csv=failure-table",
        "old-callers": f"{DASHBOARD}&csv=old-callers",
        "calls-by-host": f"{CALLS}&csv=calls-by-host",
    }
    hosts = {}
    for table, url in tables.items():
        rows = list(csv.reader(io.StringIO(staff_client.get(url).content.decode(), newline="")))
        hosts[table] = sorted(row[0] for row in rows[1:])
    neutralised = sorted(NEUTRALISED)
    assert hosts == {"failure-table": neutralised, "old-callers": ["'@host"], "calls-by-host": neutralised}


def test_the_host_filter_offers_the_families_and_hosts_present(staff_client, known_data):
    html = staff_client.get(f"{DASHBOARD}&client=family:Cursor").content.decode()

    select = re.search(r'<select name="client".*?</select>', html, re.S).group(0)
    assert re.findall(r'<option value="([^"]*)"', select) == [
        "",
        "family:Claude (desktop, web)",
        "family:ChatGPT",
        "family:Cursor",
        "family:Goose",
        "ChatGPT",
        "claude-ai",
        "cursor-vscode",
        "goose",
    ]
    assert 'value="family:Cursor" selected' in select
    assert [row[0] for row in table_rows(html, "failure-table")] == ["cursor-vscode"]
    assert 'name="start" value="2026-11-02"' in html and 'placeholder="YYYY-MM-DD"' in html
