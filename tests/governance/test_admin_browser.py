"""The governance admin in a real headless Chromium at 1,280 px: the lists fit beside the
navigation and the filters (no column off-screen), and a product manager numbers replacements
and saves a deprecation with the browser's own form."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from governance import services
from tests.support.chromium import NEEDS_CHROMIUM

WIDTH = 1280

pytestmark = NEEDS_CHROMIUM


# The database is filled before the browser starts: Playwright runs an event loop in this
# thread, and Django refuses ORM calls while one runs.
@pytest.fixture
def product_manager(live_server: Any, client: Any, django_user_model: Any) -> list[dict[str, str]]:
    services.deprecation_create(
        name="tomtom-traffic",
        replaced_by=["tomtom-routing", "tomtom-geocode"],
        retire_on=date(2099, 6, 1),
        reason="Incidents now come with routes: ask tomtom-routing for the route and its traffic, or "
        "tomtom-geocode for a place first; a long reason, as product staff write them.",
    )
    services.ledger_add(name="tomtom-search", first_seen=date(2025, 6, 30))
    services.alias_create(name="tomtom-search", target="tomtom-fuzzy-search", arguments={"q": "query"})
    client.force_login(django_user_model.objects.create_superuser("pm", "pm@example.com", "pw"))
    return [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]


def page_at_1280(browser: Any, cookies: list[dict[str, str]]) -> Any:
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    context.add_cookies(cookies)
    return context.new_page()


def columns_on_screen(page: Any) -> dict[str, tuple[float, float]]:
    """Each column header's left and right edge, and the table's horizontal overflow."""
    headers = page.locator("#result_list thead th").evaluate_all(
        "ths => ths.map(th => [(th.querySelector('.text') || th).innerText.trim(), "
        "th.getBoundingClientRect().left, th.getBoundingClientRect().right])"
    )
    return {name: (left, right) for name, left, right in headers if name}


@pytest.mark.parametrize(
    ("path", "columns"),
    [
        ("/admin/tools/contractchange/", ["TOOL", "INPUT AND CHANGE", "SINCE", "INSTEAD"]),
        ("/admin/tools/deprecatedtool/", ["TOOL", "REPLACED BY", "RETIRE ON", "SINCE", "REASON"]),
        ("/admin/tools/toolalias/", ["TOOL", "TARGET", "ARGUMENTS RENAMED", "RETIRE ON", "SINCE", "REASON"]),
        ("/admin/tools/retiredtool/", ["TOOL", "REPLACED BY", "SINCE", "RELEASE", "MESSAGE"]),
        ("/admin/tools/toolname/", ["NAME", "STATUS", "FIRST SEEN", "FIRST RELEASE", "NOTE", "HISTORY"]),
    ],
    ids=["contract changes", "deprecated tools", "aliases", "retired tools", "ledger"],
)
def test_every_column_is_on_screen_at_1280_px(live_server, product_manager, browser, path, columns):
    page = page_at_1280(browser, product_manager)
    page.goto(live_server.url + path)
    edges = columns_on_screen(page)
    assert [name for name in columns if name not in edges] == []
    assert [name for name, (_left, right) in edges.items() if right > WIDTH] == []  # nothing off-screen
    results = page.locator("#changelist .results")
    assert results.evaluate("el => el.scrollWidth <= el.clientWidth")  # and nothing to scroll sideways to
    assert page.evaluate("() => document.documentElement.scrollWidth") <= WIDTH
    first_cell = page.locator("#result_list tbody tr").first.locator("td").last
    assert first_cell.is_visible() and first_cell.bounding_box()["x"] + first_cell.bounding_box()["width"] <= WIDTH


def test_number_the_replacements_and_save_a_deprecation(live_server, product_manager, browser):
    page = page_at_1280(browser, product_manager)
    page.goto(live_server.url + "/admin/tools/deprecatedtool/add/")
    page.select_option("#id_tool", "tomtom-ev-search")
    page.get_by_label("Order of tomtom-poi-search").fill("2")
    page.get_by_label("Order of tomtom-area-search").fill("1")
    page.fill("#id_retire_on", "2099-01-15")
    page.fill("#id_reason", "Chargers are POIs: search them by category.")
    page.get_by_role("button", name="Save", exact=True).click()
    assert "was added successfully" in page.locator("ul.messagelist").inner_text()
    page.get_by_role("link", name="tomtom-ev-search", exact=True).click()
    page.wait_for_url("**/admin/tools/deprecatedtool/*/change/")
    notice = page.locator(".field-notice .readonly")
    notice.wait_for()
    assert "Deprecated, retired on 2099-01-15: use tomtom-area-search or tomtom-poi-search instead." in (
        notice.inner_text()
    )
    boxes = page.locator("table.replacement-order tbody tr").evaluate_all(
        "trs => trs.slice(0, 2).map(tr => [tr.querySelector('input').value, tr.querySelector('label').innerText])"
    )
    assert boxes == [["1", "tomtom-area-search (live)"], ["2", "tomtom-poi-search (live)"]]  # stored order first
    assert page.locator("#still-calling").is_visible()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= WIDTH


def test_the_fixture_page_fits_and_offers_the_file(live_server, product_manager, browser):
    page = page_at_1280(browser, product_manager)
    page.goto(live_server.url + "/admin/tools/toolname/")
    page.get_by_role("link", name="Compare with the committed fixture").click()
    assert "deprecated tools, aliases" in page.locator("#fixture-state").inner_text()
    assert page.locator("#checks-now li").count() >= 2
    assert page.evaluate("() => document.documentElement.scrollWidth") <= WIDTH
    with page.expect_download() as download:
        page.locator("#fixture-download").click()
    assert download.value.suggested_filename == "tool_surface.json"
    assert '"name": "tomtom-traffic"' in Path(download.value.path()).read_text()
