"""Issue #43 in a real headless Chromium at 1,280 px: from the evidence to the action in two
clicks. A product manager opens the evidence page, clicks "Alias this name to …" on a name agents
call that does not exist, finds the alias form filled in, saves it, and the name is an alias.
With ANALYTICS_SCREENSHOTS=<folder>, each page is saved there."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.analytics.conftest import ingest
from tests.analytics.test_browser import signed_in
from tests.analytics.test_dashboard import table_rows
from tests.analytics.test_evidence_pages import D1, D2, RECORDED, evidence  # noqa: F401  (a fixture)
from tests.support.chromium import NEEDS_CHROMIUM, launched

pytestmark = NEEDS_CHROMIUM
WIDTH = 1280


def shoot(target: Any, name: str, *, full_page: bool = False) -> None:
    """Save a page (or one element of it) as `<name>.png` in ANALYTICS_SCREENSHOTS, when set."""
    if folder := os.environ.get("ANALYTICS_SCREENSHOTS"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        options = {"full_page": True} if full_page else {}
        target.screenshot(path=str(Path(folder) / f"{name}.png"), **options)


@pytest.fixture
def product_manager(live_server: Any, client: Any, django_user_model: Any) -> list[dict[str, str]]:
    """A staff member who may add aliases (and read what the admin shows of them)."""
    import importlib

    from django.apps import apps
    from django.contrib.auth.models import Permission

    # A live server's database is flushed between tests, seeded families included: seed them again.
    importlib.import_module("analytics.migrations.0003_seed_host_families").seed(apps, None)

    user = django_user_model.objects.create_user("pm", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="tools", codename__in=["add_toolalias", "view_toolalias"])
    )
    return signed_in(client, user, live_server)


@pytest.mark.usefixtures("evidence")
def test_an_unknown_name_becomes_an_alias_in_two_clicks(live_server, product_manager):
    with launched() as chromium:
        context = chromium.new_context(viewport={"width": WIDTH, "height": 900})
        context.add_cookies(product_manager)
        page = context.new_page()
        page.goto(f"{live_server.url}/analytics/evidence/?start={D1}&end={D2}&group=family")
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH  # nothing wider than the window
        shoot(page, "evidence", full_page=True)
        shoot(page.locator("#unknown"), "evidence-unknown-names")

        row = page.locator("#unknown-names tbody tr", has_text="tomtom-geocoder")
        row.get_by_role("link", name="Alias this name to tomtom-geocode…").click()  # 1: the action

        assert "/admin/tools/toolalias/add/" in page.url
        assert page.locator("#id_name").input_value() == "tomtom-geocoder"
        assert page.locator("#id_target").input_value() == "tomtom-geocode"
        shoot(page, "alias-form-prefilled", full_page=True)
        page.locator("input[name=_save]").click()  # 2: save
        if page.locator("#id_confirm_redirect").count() and page.locator(".errorlist").count():
            page.locator("#id_confirm_redirect").check()  # the form asks to confirm: confirm and save
            page.locator("input[name=_save]").click()

        assert "Saved: tomtom-geocoder is an alias of tomtom-geocode." in page.locator(".messagelist").inner_text()
        shoot(page, "alias-saved", full_page=True)
        page.goto(f"{live_server.url}/analytics/evidence/?start={D1}&end={D2}&group=family")
        after = table_rows(page.content(), "unknown-names")
        shoot(page.locator("#unknown"), "evidence-after-alias")

    from governance.models import ToolAlias

    alias = ToolAlias.objects.get(tool_id="tomtom-geocoder")
    assert alias.target_id == "tomtom-geocode"
    geocoder = next(cells for cells in after if cells[0] == "tomtom-geocoder")
    assert geocoder[-2:] == ["alias", ""]  # now an alias: no longer offered


@pytest.fixture
def recorded(live_server: Any) -> list[dict[str, Any]]:
    """The recorded sessions (tests/data/evidence_sessions.jsonl), ingested; their lines."""
    ingest(*RECORDED)
    return [json.loads(line) for line in RECORDED]


def test_the_recorded_sessions_from_the_evidence_to_a_sessions_timeline(live_server, recorded, product_manager):
    in_session = [line for line in recorded if line.get("session") == "s00"]
    call = next(line for line in in_session if line["message"] == "Tool call")
    with launched() as chromium:
        context = chromium.new_context(viewport={"width": WIDTH, "height": 900})
        context.add_cookies(product_manager)
        page = context.new_page()
        page.goto(f"{live_server.url}/analytics/evidence/?start=2026-11-23&end=2026-11-24&group=family")
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
        shoot(page, "evidence-recorded-sessions", full_page=True)

        page.goto(f"{live_server.url}/analytics/requests/{call['request_id']}/?{urlencode({'at': call['time']})}")
        page.locator("#session-timeline-link").click()  # the request's whole session

        assert "/analytics/sessions/s00/" in page.url
        messages = page.locator("#session-timeline tbody tr td:nth-child(2)").all_inner_texts()
        assert messages == [line["message"] for line in sorted(in_session, key=lambda line: line["time"])]
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
        shoot(page, "session-timeline", full_page=True)
