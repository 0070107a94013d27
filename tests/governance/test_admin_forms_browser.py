"""The lifecycle forms in a real headless Chromium at 1,280 px: a tool's page opens on its summary
(who still calls it, with a total, in the first screen), a confirmation appears as soon as the
picked name needs it, and an alias's argument mapping is picked as pairs from both tools' inputs,
each pair checked as you type with the verdict the server gives on save."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from core.app_status import DeprecatedToolCalled
from governance import services
from tests.analytics.conftest import ingest, line
from tests.governance.test_admin_browser import WIDTH, page_at_1280
from tests.support.chromium import NEEDS_CHROMIUM

pytestmark = NEEDS_CHROMIUM


# The database is filled before the browser starts (Playwright runs an event loop in this thread).
@pytest.fixture
def staff(live_server: Any, client: Any, django_user_model: Any) -> list[dict[str, str]]:
    services.deprecation_create(
        name="tomtom-traffic",
        replaced_by=["tomtom-routing"],
        retire_on=date(2099, 6, 1),
        reason="Incidents now come with routes.",
    )
    at = (datetime.now(UTC) - timedelta(days=1)).replace(microsecond=0).isoformat().replace("+00:00", "")
    ingest(  # who still calls it: 5 calls from Claude, 2 from VS Code
        *(
            line(
                DeprecatedToolCalled,
                at,
                tool="tomtom-traffic",
                client=client,
                request_id=f"req-{number}",
                replaced_by=["tomtom-routing"],
            )
            for number, client in enumerate(["claude-ai"] * 5 + ["Visual Studio Code"] * 2)
        )
    )
    client.force_login(django_user_model.objects.create_superuser("pm", "pm@example.com", "pw"))
    return [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]


def verdicts(page: Any) -> list[str]:
    return page.locator(".mapping-verdict").all_inner_texts()


def test_a_tools_page_opens_on_its_summary(live_server, staff, browser):
    page = page_at_1280(browser, staff)
    page.goto(live_server.url + "/admin/tools/deprecatedtool/")
    page.get_by_role("link", name="tomtom-traffic").click()
    summary = page.locator("#tool-summary")
    summary.wait_for()
    assert page.locator("#summary-state").inner_text() == "scheduled to retire"
    assert page.locator("#summary-replacements").inner_text() == "tomtom-routing"
    assert page.locator("#summary-callers-total").inner_text() == "7 calls"
    assert page.locator("#summary-families tbody td.number").all_inner_texts() == ["5", "2"]  # per host family
    assert page.locator("#summary-csv").is_visible()
    box = page.locator("#summary-callers").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900  # who still calls: in the first screen
    assert page.locator("#tool-summary").bounding_box()["y"] < page.locator("#id_replaced_by").bounding_box()["y"]
    assert page.evaluate("() => document.documentElement.scrollWidth") <= WIDTH
    assert "Django administration" not in page.locator("#header").inner_text()
    assert "TomTom Maps MCP" in page.locator("#header").inner_text()
    if folder := os.environ.get("ANALYTICS_SCREENSHOTS"):
        page.screenshot(path=f"{folder}/tool-summary.png", full_page=True)


def test_the_kill_switch_confirmation_appears_when_a_live_name_is_picked(live_server, staff, browser):
    page = page_at_1280(browser, staff)
    page.goto(live_server.url + "/admin/tools/retiredtool/add/")
    confirm = page.locator("#id_confirm_kill_switch")
    assert not confirm.is_visible()  # nothing picked: nothing to confirm
    page.locator("#id_tool").select_option("tomtom-geocode")
    assert confirm.is_visible()
    page.locator("#id_tool").select_option("tomtom-nearby")  # an alias: retiring it withdraws no code
    assert not confirm.is_visible()


def test_an_unknown_name_becomes_an_alias_with_its_mapping_checked_as_you_type(live_server, staff, browser):
    page = page_at_1280(browser, staff)
    page.goto(live_server.url + "/admin/tools/toolalias/add/?name=tomtom-search-places&target=tomtom-poi-search")
    assert page.locator("#id_name").input_value() == "tomtom-search-places"
    assert not page.locator("#id_arguments").is_visible()  # the pairs replace the text box
    assert page.locator(".mapping-summary").inner_text() == "No argument renamed: every input passes as sent."
    page.get_by_role("button", name="Add a pair").click()
    page.get_by_label("Old input 1").fill("q")  # a name no release registers: its inputs are typed
    assert verdicts(page) == ["Pick what q becomes, or leave it out."]
    page.get_by_label("New input 1").select_option("query")
    assert verdicts(page) == ["OK: q is sent as query."]
    page.get_by_role("button", name="Add a pair").click()
    page.get_by_label("Old input 2").fill("q")
    page.get_by_label("New input 2").select_option("brandSet")
    assert verdicts(page) == ["q is mapped twice.", "q is mapped twice."]
    page.get_by_label("Old input 2").fill("brands")
    assert verdicts(page) == ["OK: q is sent as query.", "OK: brands is sent as brandSet."]
    page.locator("#id_target").select_option("tomtom-fuzzy-search")  # brandSet is not an input of it
    assert verdicts(page) == [
        "OK: q is sent as query.",
        "brandSet (for brands) is not an input of tomtom-fuzzy-search.",
    ]
    assert page.locator(".mapping-summary").inner_text() == "1 of 2 pairs to fix."
    page.locator("input[name=_save]").click()  # the server gives the same verdict
    refused = page.locator(".errorlist", has_text="brandSet (for brands)")
    refused.wait_for()
    assert refused.inner_text() == "brandSet (for brands) is not an input of tomtom-fuzzy-search."
    assert verdicts(page)[1] == "brandSet (for brands) is not an input of tomtom-fuzzy-search."  # pairs kept
    page.locator("#id_target").select_option("tomtom-poi-search")
    assert verdicts(page)[1] == "OK: brands is sent as brandSet."
    page.get_by_role("button", name="Remove pair 2").click()
    assert verdicts(page) == ["OK: q is sent as query."]
    assert page.evaluate("() => document.documentElement.scrollWidth") <= WIDTH
    page.locator("input[name=_save]").click()
    saved = page.locator("ul.messagelist").inner_text().lower()
    assert "tomtom-search-places is an alias of tomtom-poi-search" in saved


def test_the_alias_saved_in_the_browser_is_stored_as_json(live_server, staff, browser):
    page = page_at_1280(browser, staff)
    page.goto(live_server.url + "/admin/tools/toolalias/add/?name=tomtom-find&target=tomtom-fuzzy-search")
    page.get_by_role("button", name="Add a pair").click()
    page.get_by_label("Old input 1").fill("text")
    page.get_by_label("New input 1").select_option("query")
    page.get_by_role("button", name="Add a pair").click()
    page.get_by_label("Old input 2").fill("ui")
    page.get_by_label("New input 2").select_option(label="(leave it out)")
    page.locator("input[name=_save]").click()
    page.locator("ul.messagelist").wait_for()
    row = page.locator("#result_list tr", has_text="tomtom-find")
    assert "text → query, ui → (left out)" in row.inner_text()  # stored as {"text": "query", "ui": null}
