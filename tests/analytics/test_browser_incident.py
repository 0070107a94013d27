"""The incident of issue #42 in a real Chromium at 1,280 x 800 (tests/analytics/incident_data.py:
eight hosts, four days; one broke three hours ago, one fails steadily at a higher level, one never
reports its widgets): the overview's default view puts the broken host first and two clicks reach
one of its failing calls; the silent host is named in the never-reported card and column; every
page fits about three screens; no chart draws a bucket after now; one time range survives moving
across the tabs. With ANALYTICS_SCREENSHOTS=<folder>, the overview is saved there as
overview-*.png (the report of issue #42 describes them)."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.analytics.incident_data import BROKEN, SILENT, STEADY, TINY, incident_lines
from tests.analytics.test_browser import signed_in
from tests.analytics.test_browser_overview import current_hour_for_a_while, overflow, screenshot
from tests.support.chromium import NEEDS_CHROMIUM

pytestmark = NEEDS_CHROMIUM
VIEWPORT = {"width": 1280, "height": 800}
SCREENS = 3
"""A page fits in this many screens of the viewport's height."""
PAGES = {
    "overview": "/analytics/",
    "widgets": "/analytics/widgets/",
    "tool-calls": "/analytics/tool-calls/",
    "failing-calls": "/analytics/calls/",
    "failing-events": "/analytics/events/",
}
OURS = ("overview", "widgets", "tool-calls")
"""The pages this change makes summary-first (the drill-down lists page through their rows)."""


@pytest.fixture
def now(live_server: Any) -> datetime:
    """The incident stored, relative to now (the presets end with the current hour)."""
    import importlib

    from django.apps import apps

    from tests.analytics.conftest import ingest

    moment = current_hour_for_a_while()
    importlib.import_module("analytics.migrations.0003_seed_host_families").seed(apps, None)
    ingest(*incident_lines(moment))
    return moment


# The database is filled before the browser starts: Playwright runs an event loop in this thread,
# and Django refuses ORM calls while one runs.
@pytest.fixture
def cookies(live_server: Any, client: Any, django_user_model: Any, now: datetime) -> list[dict[str, str]]:
    return signed_in(client, django_user_model.objects.create_user("oncall", is_staff=True), live_server)


@pytest.fixture
def page(live_server: Any, now: datetime, cookies: Any, browser: Any) -> Any:
    context = browser.new_context(viewport=VIEWPORT)
    context.add_cookies(cookies)
    page = context.new_page()
    page.base = live_server.url
    return page


def height(page: Any) -> int:
    return page.evaluate("document.documentElement.scrollHeight")


def first_host(page: Any) -> str:
    return page.locator("#worst-hosts tbody tr").first.locator("th").inner_text()


def column(page: Any, table: str, title: str) -> int:
    """The 1-based position of the column headed `title`."""
    titles = [t.strip(" ▲▼") for t in page.locator(f"#{table} thead th").all_text_contents()]
    return titles.index(title) + 1


def test_the_broken_host_leads_the_default_view_and_two_clicks_reach_a_failing_call_of_it(page):
    page.goto(page.base + "/analytics/")

    assert page.locator(".analytics-presets a.active").get_attribute("data-window") == "24h"  # the default
    assert first_host(page) == BROKEN
    hosts = page.locator("#worst-hosts tbody tr th").all_inner_texts()
    assert hosts.index(STEADY) > 0 and hosts[-1] == TINY  # the steady offender does not lead; two calls cannot
    assert "server & upstream errors" in page.locator("#worst-hosts tbody tr").first.inner_text()
    headline = page.locator("#headline-host").inner_text()
    assert BROKEN in headline and "since" in headline and "internal" in headline
    assert page.locator("#worst-hosts tbody tr").first.locator("svg.sparkline").count() == 1
    screenshot(page, "overview-24h")

    clicks = 0
    page.locator("#worst-hosts tbody tr").first.locator("th a").click()  # the host: its failing calls
    clicks += 1
    page.wait_for_url(re.compile(r"/analytics/calls/"))
    assert f"client={BROKEN}" in page.url
    listed = page.locator("#failing-calls tbody tr")
    assert listed.count() > 0 and BROKEN in listed.first.inner_text()
    page.locator("#failing-calls a[href*='/analytics/requests/']").first.click()  # one failing call
    clicks += 1
    page.wait_for_url(re.compile(r"/analytics/requests/"))

    assert clicks == 2
    events = page.locator("#request-events tbody").inner_text()
    assert "Tool call" in events and BROKEN in events and "internal" in events


def test_the_silent_host_is_named_in_the_never_reported_card_and_column(page):
    page.goto(page.base + "/analytics/")

    card = page.locator("#silent-hosts")
    assert card.locator("a").all_inner_texts() == [SILENT]
    never = column(page, "worst-hosts", "Never reported")
    row = page.locator("#worst-hosts tbody tr", has=page.locator("th", has_text=SILENT))
    assert int(row.locator(f"td:nth-child({never})").inner_text().replace(",", "")) > 300
    assert row.locator(f"td:nth-child({never})").get_attribute("title").endswith("(100.0%)")
    steady = page.locator("#worst-hosts tbody tr", has=page.locator("th", has_text=STEADY))
    assert steady.locator(f"td:nth-child({never})").inner_text() == "0"

    card.locator("a").click()  # its hosts: the widget funnel, filtered to it
    page.wait_for_url(re.compile(r"/analytics/widgets/"))
    rows = page.locator("#funnel-table tbody tr")
    assert rows.count() == 1 and rows.first.locator("th").inner_text() == SILENT
    assert "100.0%" in rows.first.inner_text()


def test_every_page_fits_about_three_screens_and_none_is_wider_than_the_window(page, now):
    heights = {}
    for name, path in PAGES.items():
        page.goto(page.base + path)
        heights[name] = height(page)
        screenshot(page, f"incident-{name}")
        assert overflow(page) == 0, f"{name} overflows by {overflow(page)} px"
    page.goto(page.base + "/analytics/calls/")
    page.locator("#failing-calls a[href*='/analytics/requests/']").first.click()
    heights["request"] = height(page)
    print("page heights at 1,280 x 800:", heights)
    for name in OURS:
        assert heights[name] <= SCREENS * VIEWPORT["height"], f"{name} is {heights[name]} px high"
    for preset in ("1h", "7d", "30d"):
        page.goto(page.base + f"/analytics/?window={preset}")
        assert height(page) <= SCREENS * VIEWPORT["height"], preset
        screenshot(page, f"overview-{preset}")
    if folder := os.environ.get("ANALYTICS_SCREENSHOTS"):
        page.goto(page.base + "/analytics/?window=24h")  # the default (the session now holds 30 days)
        page.screenshot(path=str(Path(folder) / "overview-first-screen.png"))  # what the engineer sees first


def test_no_chart_draws_a_bucket_after_now(page, now):
    month = f"start={now:%Y-%m}-01&end={now:%Y-%m}-28"
    for path in ("/analytics/widgets/", "/analytics/tool-calls/"):
        for query in ("", "?window=1h", "?window=7d", "?window=30d", f"?{month}&bucket=hour", f"?{month}"):
            page.goto(page.base + path + query)
            chart = page.locator("svg.analytics-chart")
            assert chart.count() == 1, path + query
            last = datetime.fromisoformat(chart.get_attribute("data-last-bucket"))
            assert last <= datetime.now(UTC), path + query
            titles = chart.locator("circle title").all_text_contents()
            stamps = [re.search(r"\d{4}-\d{2}-\d{2}( \d{2}:00)?", title).group(0) for title in titles]
            assert all(datetime.fromisoformat(stamp).replace(tzinfo=UTC) <= datetime.now(UTC) for stamp in stamps), (
                path + query
            )
    page.goto(page.base + "/analytics/?window=6h")
    spark = page.locator("#worst-hosts svg.sparkline title").first.text_content()
    assert f"to {now:%Y-%m-%d %H}:00 UTC" in spark  # the newest point is the current hour


def test_one_time_range_survives_moving_across_the_tabs(page):
    page.goto(page.base + "/analytics/")
    page.locator(".analytics-presets a[data-window='6h']").click()
    page.wait_for_url(re.compile(r"window=6h"))
    assert first_host(page) == BROKEN

    for tab in ("Widgets", "Tool calls", "Failing calls", "Failing widget events", "Overview"):
        page.locator(".analytics-tabs a", has_text=re.compile(f"^{tab}$")).click()
        page.wait_for_load_state()
        assert "window=6h" in page.url, tab
        assert page.locator(".analytics-presets a.active").get_attribute("data-window") == "6h", tab
        assert all(
            "window=6h" in href
            for href in page.locator(".analytics-tabs a").evaluate_all(
                "links => links.map(a => a.getAttribute('href'))"
            )
        ), tab

    page.locator(".analytics-tabs a", has_text="Failing calls").click()
    page.locator("#failing-calls a[href*='/analytics/requests/']").first.click()
    page.wait_for_url(re.compile(r"/analytics/requests/"))
    assert page.locator(".analytics-presets a.active").get_attribute("data-window") == "6h"  # from the session
    page.locator(".analytics-tabs a", has_text="Overview").click()
    assert "window=6h" in page.url

    page.locator("select[name=client]").select_option(BROKEN)  # the form keeps the range
    page.locator("#filters input[type=submit]").click()
    page.wait_for_load_state()
    assert "window=6h" in page.url and f"client={BROKEN}" in page.url
    assert page.locator("#worst-hosts tbody tr th").all_inner_texts() == [BROKEN]
