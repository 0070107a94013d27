"""The analytics pages in a real Chromium at 1,280 x 900 with a known data set (tests/analytics/ops_data.py):
nothing overflows the window, tables sort, the preset links change the window, a failure figure leads to
the calls behind it and a request id to every event of that call, and the overview's figures are the
ones the raw events give. With ANALYTICS_SCREENSHOTS=<folder>, each page is saved there.
(tests/analytics/test_browser_incident.py drives the incident of issue #42 at 1,280 x 800.)"""

from __future__ import annotations

import os
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from analytics.overview import Window
from tests.analytics.ops_data import HOSTS, JOINED, ops_lines
from tests.analytics.test_browser import signed_in
from tests.analytics.test_overview import raw
from tests.support.chromium import NEEDS_CHROMIUM

pytestmark = NEEDS_CHROMIUM
VIEWPORT = {"width": 1280, "height": 900}


def pages(now: datetime) -> dict[str, str]:
    days = f"start={(now - timedelta(days=29)).date().isoformat()}&end={now.date().isoformat()}"
    return {
        "overview": "/analytics/",
        "overview-30d": "/analytics/?window=30d",
        "widgets": "/analytics/widgets/?" + days,
        "tool-calls": "/analytics/tool-calls/?" + days + "&group=family",
        "failing-calls": "/analytics/calls/?window=7d",
        "failing-events": "/analytics/events/?window=7d",
        "request": f"/analytics/requests/{JOINED}/?{urlencode({'at': now.isoformat()})}",
        "root": "/",
    }


def current_hour_for_a_while() -> datetime:
    """Now, at least three minutes before the hour ends: the presets end with the current hour, so
    the figures a test expects hold until it is done."""
    now = datetime.now(UTC)
    if now.minute >= 57:
        time.sleep((60 - now.minute) * 60 - now.second + 1)
        now = datetime.now(UTC)
    return now


@pytest.fixture
def expected(live_server: Any) -> dict[str, Any]:
    """The known data set stored, and the figures the raw events give for each preset."""
    import importlib

    from django.apps import apps

    from tests.analytics.conftest import ingest

    now = current_hour_for_a_while()
    importlib.import_module("analytics.migrations.0003_seed_host_families").seed(apps, None)
    ingest(*ops_lines(now))
    return {"now": now, **{preset: raw(Window.preset(preset, now)) for preset in ("1h", "6h", "24h", "7d", "30d")}}


# The database is filled before the browser starts: Playwright runs an event loop in this thread,
# and Django refuses ORM calls while one runs.
@pytest.fixture
def cookies(live_server: Any, client: Any, django_user_model: Any, expected: Any) -> list[dict[str, str]]:
    return signed_in(client, django_user_model.objects.create_user("ops", is_staff=True), live_server)


@pytest.fixture
def page(live_server: Any, expected: Any, cookies: Any, browser: Any) -> Any:
    context = browser.new_context(viewport=VIEWPORT)
    context.add_cookies(cookies)
    page = context.new_page()
    page.base = live_server.url
    page.pages = pages(expected["now"])
    return page


def overflow(page: Any) -> int:
    """How far the page is wider than the window (0: no horizontal scroll bar)."""
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


WIDEST = """[...document.querySelectorAll('#content-main *')].filter(e => e.getBoundingClientRect().right >
  document.documentElement.clientWidth).slice(-3).map(e => e.tagName + '#' + e.id + '.' + e.className).join(', ')"""
"""What sticks out of the window, to say so when a page overflows."""


def screenshot(page: Any, name: str) -> None:
    if folder := os.environ.get("ANALYTICS_SCREENSHOTS"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def card(page: Any, name: str) -> str:
    return page.locator(f"#figure-{name} .card-value").inner_text()


def test_no_analytics_page_is_wider_than_the_window(page):
    for name, path in page.pages.items():
        page.goto(page.base + path)
        assert page.locator("#content-main" if name != "root" else "main").is_visible(), name
        screenshot(page, name)
        assert overflow(page) == 0, f"{name} overflows by {overflow(page)} px: " + page.evaluate(WIDEST)
    page.emulate_media(color_scheme="dark")
    page.goto(page.base + page.pages["overview"])
    assert overflow(page) == 0
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(18, 18, 18)"  # the admin's dark --body-bg
    series = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--analytics-series-1')")
    assert series.strip() == "#6f9fd8"  # the dark shade of the first series colour
    screenshot(page, "overview-dark")


def test_the_overview_figures_are_the_raw_events_and_presets_change_the_window(page, expected):
    page.goto(page.base + "/analytics/")

    assert page.locator(".analytics-presets a.active").get_attribute("data-window") == "24h"
    assert card(page, "calls") == f"{expected['24h']['calls']:,}"
    assert card(page, "server_error_rate") == f"{expected['24h']['server_error_rate']:.1%}"
    assert card(page, "caller_error_rate") == f"{expected['24h']['caller_error_rate']:.1%}"
    assert page.locator("#figure-widget_unreported_rate").is_visible()  # the widget funnel
    assert "Data up to" in page.locator("#freshness").inner_text()

    for preset in ("1h", "6h", "7d", "30d"):
        page.locator(f".analytics-presets a[data-window='{preset}']").click()
        page.wait_for_url(re.compile(f"window={preset}"))
        figures = expected[preset]
        assert page.locator(".analytics-presets a.active").get_attribute("data-window") == preset
        assert card(page, "calls") == f"{figures['calls']:,}"
        assert card(page, "server_error_rate") == (
            "—" if figures["server_error_rate"] is None else f"{figures['server_error_rate']:.1%}"
        )
        assert card(page, "caller_error_rate") == (
            "—" if figures["caller_error_rate"] is None else f"{figures['caller_error_rate']:.1%}"
        )
        if figures["widget_failure_rate"] is not None:
            assert card(page, "widget_failure_rate") == f"{figures['widget_failure_rate']:.1%}"
        assert card(page, "upstream_calls") == f"{figures['upstream_calls']:,}"
        if figures["p95_ms"] is not None:
            assert card(page, "p95_ms") == f"{figures['p95_ms']:,.0f} ms"


def column(page: Any, table: str, title: str) -> int:
    """The 1-based position of the column headed `title` (its text, not as the admin's CSS shows it)."""
    titles = [t.strip(" ▲▼") for t in page.locator(f"#{table} thead th").all_text_contents()]
    return titles.index(title) + 1


def test_the_worst_hosts_sort_by_any_column(page):
    page.goto(page.base + "/analytics/?window=30d")
    hosts = page.locator("#worst-hosts tbody th")
    assert hosts.count() == 8  # the first eight of nine: the rest behind "show all"
    page.locator("#worst-hosts-more a.show-all").click()
    assert hosts.count() == len(HOSTS)
    calls_at = column(page, "worst-hosts", "Calls")

    page.locator("#worst-hosts thead").get_by_role("link", name="Calls", exact=True).click()
    calls = [
        int(t.replace(",", "")) for t in page.locator(f"#worst-hosts tbody td:nth-child({calls_at})").all_inner_texts()
    ]
    assert calls == sorted(calls, reverse=True) and len(calls) == len(HOSTS)  # "show all" kept
    assert page.locator("#worst-hosts thead th[aria-sort=descending]").text_content().startswith("Calls")

    page.locator("#worst-hosts thead").get_by_role("link", name="Calls", exact=True).click()
    calls = [
        int(t.replace(",", "")) for t in page.locator(f"#worst-hosts tbody td:nth-child({calls_at})").all_inner_texts()
    ]
    assert calls == sorted(calls)

    page.locator("#worst-hosts thead").get_by_role("link", name="Host", exact=True).click()
    names = page.locator("#worst-hosts tbody th").all_inner_texts()
    assert names == sorted(names, key=str.casefold) and set(names) <= set(HOSTS)


def test_a_failure_figure_leads_to_its_calls_grouped_by_message_and_a_request_to_its_events(page):
    page.goto(page.base + "/analytics/?window=7d")
    server_at = column(page, "worst-hosts", "Server errors")
    row = page.locator("#worst-hosts tbody tr", has=page.locator("th", has_text="ChatGPT/1.2026.317"))
    row.locator(f"td:nth-child({server_at}) a").click()  # the steady offender's server and upstream errors

    assert page.url.startswith(page.base + "/analytics/calls/")
    assert "class=server" in page.url  # the server and upstream errors only: unavailable and retry_later
    groups = page.locator("#call-groups tbody tr")
    assert 2 <= groups.count() <= 3  # (and invalid_arguments, the caller's, on a page that does not split them)
    listed = int(page.locator("#call-groups tbody tr td:nth-child(3)").first.inner_text())
    assert page.locator("#failing-calls tbody tr td:nth-child(2)").first.inner_text() == "ChatGPT/1.2026.317"
    assert overflow(page) == 0

    message = page.locator("#call-groups tbody tr").first.locator("td:nth-child(2)").inner_text()
    page.locator("#call-groups tbody tr").first.locator("a").click()
    shown = page.locator("#failing-calls tbody tr td:nth-child(5)").all_inner_texts()
    assert shown and set(shown) == {message} and len(shown) == min(listed, 50)

    page.locator("#failing-calls a.request-link").first.click()
    assert page.url.startswith(page.base + "/analytics/requests/")
    assert page.locator("#request-events tbody tr td:nth-child(2)").all_inner_texts() == ["Tool call"]

    page.goto(page.base + page.pages["request"])
    assert page.locator("#request-events tbody tr td:nth-child(2)").all_inner_texts() == [
        "Tool call",
        "App data",
        "App failed",
    ]
    screenshot(page, "request")


def test_a_widget_failure_figure_leads_to_its_events_with_the_calls_tenant(page):
    page.goto(page.base + "/analytics/?window=24h")
    page.locator("#figure-widget_failure_rate a").click()

    assert page.url.startswith(page.base + "/analytics/events/")
    assert page.locator("#event-groups tbody tr").count() >= 1
    rows = page.locator("#failing-events tbody tr")
    assert rows.count() >= 1
    joined = page.locator("#failing-events tbody tr", has_text=JOINED)
    assert joined.locator("td:nth-child(10)").inner_text() == "acme"  # the tenant of the call it reported on
