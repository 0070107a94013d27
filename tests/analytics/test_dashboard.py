"""The staff dashboard (server-rendered): who may see it, its table, its drill-down, its admin link."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db

DASHBOARD = "/analytics/?start=2026-11-02&end=2026-11-03"


@pytest.fixture
def staff_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    return client


def table_rows(html: str, table_id: str) -> list[list[str]]:
    """The text of each body row's cells."""
    body = re.search(rf'<table id="{table_id}".*?<tbody>(.*?)</tbody>', html, re.S)
    assert body, f"no table {table_id}"
    rows = re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S)
    return [[re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
            for row in rows]  # fmt: skip


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
        ["cursor-vscode", "tomtom-routing", "0", "3", "0", "2", "0", "0", "0", "100.0%"],
        ["ChatGPT", "tomtom-data-viz", "1", "2", "0", "0", "1", "1", "0", "66.7%"],
        ["claude-ai", "tomtom-routing", "3", "1", "0", "0", "0", "0", "1", "25.0%"],
        ["claude-ai", "tomtom-geocode", "1", "0", "0", "0", "0", "0", "0", "0.0%"],
        ["goose", "tomtom-routing", "0", "0", "1", "0", "0", "0", "0", "—"],
    ]


def test_the_table_sorts_by_any_column(staff_client, known_data):
    by_drawn = staff_client.get(f"{DASHBOARD}&sort=-widgets_drawn").content.decode()
    by_rate_ascending = staff_client.get(f"{DASHBOARD}&sort=failure_rate").content.decode()

    assert [row[:2] for row in table_rows(by_drawn, "failure-table")] == [
        ["claude-ai", "tomtom-routing"], ["ChatGPT", "tomtom-data-viz"], ["claude-ai", "tomtom-geocode"],
        ["cursor-vscode", "tomtom-routing"], ["goose", "tomtom-routing"],
    ]  # fmt: skip
    assert [row[-1] for row in table_rows(by_rate_ascending, "failure-table")] == [
        "0.0%", "25.0%", "66.7%", "100.0%", "—"]  # fmt: skip


def test_the_chart_has_a_line_per_host_and_the_old_callers_are_listed(staff_client, known_data):
    html = staff_client.get(DASHBOARD).content.decode()

    assert re.findall(r'<g class="series" data-host="([^"]+)">', html) == ["ChatGPT", "claude-ai", "cursor-vscode"]
    assert table_rows(html, "old-callers") == [
        ["ChatGPT", "outdated input", "tomtom-traffic", "language (string_now_list)", "1",
         "2026-11-03 09:45", "2026-11-03 09:45"],
        ["goose", "retired tool", "tomtom-fuzzy-search", "tomtom-geocode", "2", "2026-11-02 12:30", "2026-11-03 09:30"],
    ]  # fmt: skip


def test_filters_narrow_the_table_and_bad_ones_are_explained(staff_client, known_data):
    one_tool = staff_client.get(f"{DASHBOARD}&tool=tomtom-data-viz").content.decode()
    backwards = staff_client.get("/analytics/?start=2026-11-03&end=2026-11-02").content.decode()

    assert [row[:2] for row in table_rows(one_tool, "failure-table")] == [["ChatGPT", "tomtom-data-viz"]]
    assert "the start date is after the end date" in backwards


def test_an_empty_range_says_so(staff_client):
    html = staff_client.get("/analytics/?start=2026-12-01&end=2026-12-31").content.decode()

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

    assert '<a href="/analytics/">Widget failures by host</a>' in html
