"""The dashboard in a real headless Chromium: the chart and the table render; non-staff are refused."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.analytics.conftest import KNOWN_DATA, ingest
from tests.support.chromium import NEEDS_CHROMIUM

DASHBOARD = "/analytics/widgets/?start=2026-11-02&end=2026-11-03"

pytestmark = NEEDS_CHROMIUM


def signed_in(client: Any, user: Any, live_server: Any) -> list[dict[str, str]]:
    """The session cookie of `user`, for the browser."""
    client.force_login(user)
    return [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]


# The database is filled before the browser starts: Playwright runs an event loop in this
# thread, and Django refuses ORM calls while one runs.
@pytest.fixture
def staff_cookies(live_server: Any, client: Any, django_user_model: Any) -> list[dict[str, str]]:
    ingest(*KNOWN_DATA)
    return signed_in(client, django_user_model.objects.create_user("ops", is_staff=True), live_server)


@pytest.fixture
def other_cookies(live_server: Any, client: Any, django_user_model: Any) -> list[dict[str, str]]:
    ingest(*KNOWN_DATA)
    return signed_in(client, django_user_model.objects.create_user("someone"), live_server)


def test_staff_see_the_chart_and_the_table(live_server, staff_cookies, browser):
    context = browser.new_context()
    context.add_cookies(staff_cookies)
    page = context.new_page()

    page.goto(live_server.url + DASHBOARD)

    chart = page.locator("#failure-rate-chart")
    assert chart.is_visible()
    assert chart.bounding_box()["width"] > 300
    assert page.locator("#failure-rate-chart g.series").evaluate_all("gs => gs.map(g => g.dataset.host)") == [
        "ChatGPT",
        "claude-ai",
        "cursor-vscode",
    ]
    assert page.locator("#failure-rate-chart path").count() == 3
    assert page.locator("#failure-table tbody tr").count() == 5
    first = page.locator("#failure-table tbody tr").first.locator("th, td").all_inner_texts()
    assert first == ["cursor-vscode", "tomtom-routing", "0", "3", "0", "0", "2", "0", "0", "0", "100.0%", "3"]
    if os.environ.get("ANALYTICS_SCREENSHOT"):
        page.screenshot(path=os.environ["ANALYTICS_SCREENSHOT"], full_page=True)

    page.locator("#failure-table").get_by_role("link", name="Drawn").click()  # sort by a column
    assert page.locator("#failure-table tbody tr th").first.inner_text() == "claude-ai"

    page.locator("#failure-table a", has_text="3").first.click()  # drill down to cursor-vscode's failures
    assert page.locator("#failing-events tbody tr").count() == 3
    assert page.locator("#failing-events tbody tr td:nth-child(5)").all_inner_texts() == ["result"] * 3


def test_a_user_who_is_not_staff_gets_the_login_page(live_server, other_cookies, browser):
    context = browser.new_context()
    context.add_cookies(other_cookies)
    page = context.new_page()

    page.goto(live_server.url + DASHBOARD)

    assert page.url.startswith(live_server.url + "/admin/login/")
    assert page.locator("#failure-rate-chart").count() == 0
    assert page.locator("#failure-table").count() == 0


@pytest.fixture
def staff_cookies_with_calls(live_server: Any, client: Any, django_user_model: Any) -> list[dict[str, str]]:
    import importlib

    from django.apps import apps

    from tests.analytics.conftest import KNOWN_CALLS

    # A live server's database is flushed between tests, seeded families included: seed them again.
    importlib.import_module("analytics.migrations.0003_seed_host_families").seed(apps, None)
    ingest(*KNOWN_DATA, *KNOWN_CALLS)
    return signed_in(client, django_user_model.objects.create_user("ops", is_staff=True), live_server)


def test_the_tool_call_page_by_family_with_hollow_points_and_a_host_select(
    live_server, staff_cookies_with_calls, browser
):
    context = browser.new_context()
    context.add_cookies(staff_cookies_with_calls)
    page = context.new_page()

    # Two days are charted by the hour unless asked otherwise: ask for days.
    page.goto(
        live_server.url + "/analytics/tool-calls/?start=2026-11-02&end=2026-11-03&group=family&zoom=on&bucket=day"
    )

    assert page.locator("#error-rate-chart").is_visible()
    assert page.locator("#error-rate-chart g.series").evaluate_all("gs => gs.map(g => g.dataset.host)") == [
        "ChatGPT",
        "Claude (desktop, web)",
        "Claude Code",
        "fleet-agent",
    ]
    assert page.locator("#error-rate-chart circle.hollow").count() == 5  # every point is below 20 calls
    titles = page.locator("#error-rate-chart circle title").evaluate_all("ts => ts.map(t => t.textContent)")
    assert titles[2] == "Claude (desktop, web), 2026-11-02: 50.0% (2 of 4 calls failed; n = 4)"
    assert page.locator("#calls-by-host tbody tr th").all_inner_texts() == [  # the most errors first
        "Claude (desktop, web)",
        "ChatGPT",
        "Claude Code",
        "fleet-agent",
    ]
    assert page.locator("select[name=client] optgroup").evaluate_all("gs => gs.map(g => g.label)") == [
        "Host families",
        "Hosts",
    ]
    assert page.locator("input[name=start]").input_value() == "2026-11-02"
    if os.environ.get("ANALYTICS_SCREENSHOT"):
        page.screenshot(path=os.environ["ANALYTICS_SCREENSHOT"].replace(".png", "-calls.png"), full_page=True)

    with page.expect_download() as download:
        page.locator(".csv-link").first.click()
    assert download.value.suggested_filename == "calls-by-host_2026-11-02_2026-11-03.csv"
