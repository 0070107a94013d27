"""Issue #42 in a real headless Chromium: from a failing widget event to the call that delivered
its data, and on to the calls of its session, one click each."""

from __future__ import annotations

from typing import Any

import pytest

from tests.analytics.conftest import ingest
from tests.analytics.test_browser import signed_in
from tests.analytics.test_drill_down_links import DAY, SESSION_CALLS, WIDGET_EVENTS
from tests.support.chromium import NEEDS_CHROMIUM, launched

pytestmark = NEEDS_CHROMIUM


@pytest.fixture
def staff_cookies(live_server: Any, client: Any, django_user_model: Any) -> list[dict[str, str]]:
    ingest(*SESSION_CALLS, *WIDGET_EVENTS)
    return signed_in(client, django_user_model.objects.create_user("ops", is_staff=True), live_server)


def test_a_failing_widget_event_lands_on_its_delivering_call_and_its_session(live_server, staff_cookies):
    with launched() as chromium:
        context = chromium.new_context()
        context.add_cookies(staff_cookies)
        page = context.new_page()
        page.goto(f"{live_server.url}/analytics/events/?start={DAY}&end={DAY}")

        row = page.locator("#failing-events tbody tr").first
        assert row.locator("a.request-link").all_inner_texts() == ["deliver-1", "report-1"]
        row.locator("a.request-link", has_text="deliver-1").click()  # 1: the delivering call

        assert "/analytics/requests/deliver-1/" in page.url
        assert page.locator("#request-events tbody tr td:nth-child(2)").all_inner_texts() == [
            "Tool call",
            "App data",
            "App failed",
        ]
        session = page.locator("#session-calls tbody tr td:nth-child(4)").all_inner_texts()
        assert session == ["before-2", "before-1", "deliver-1", "report-1", "after-1"]
        page.locator("#session-calls a.request-link", has_text="after-1").click()  # 2: what the caller did next

        assert "/analytics/requests/after-1/" in page.url
        assert page.locator("#request-events tbody tr td:nth-child(3)").all_inner_texts() == ["invalid_arguments"]
