"""The map widget talks back to its host (issue #45), in a host built on the official MCP Apps SDK.

The host (tests/widgets/js/sdk_host.js, bundled by esbuild from the pinned npm packages) offers
`serverTools`, `updateModelContext`, `message`, `openLinks` and `logging`, answers
`ui/request-display-mode`, lists the session's tools to the widget, and records what the widget
asks of it in `window.hostEvents`. The server is a real process with TomTom stubbed. What is
checked is what the host and the person looking at the map get: the model context naming the
place clicked, a routing call reaching the server and the map redrawn with the route, links and
the display mode going through the host, a later result redrawn and reported, partial input shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.conftest import server_process
from tests.widgets.chromium import (
    AMSTERDAM,
    ARTIFACTS,
    app_status_lines,
    blank_tiles,
    reported_frame,
    require_sdk_host,
    serve,
)

pytestmark = [pytest.mark.browser, pytest.mark.live_server_process]

require_sdk_host()

PHARMACY = [4.895322, 52.372581]  # Apotheek Centrum in tests/data/poi_search.json
SEARCH = {"tool": "tomtom-poi-search", "args": {"query": "pharmacy", "position": AMSTERDAM, "show_ui": True}}
DYNAMIC_MAP = {"title": "Trip", "markers": [{"position": [4.9, 52.37], "label": "Dam"}], "show_ui": True}
STATE = (
    "() => ({...window.tomtomWidget, reported: document.documentElement.dataset.reported,"
    " selected: document.documentElement.dataset.selected || '',"
    " mode: document.documentElement.dataset.displayMode,"
    " title: document.getElementById('title').textContent,"
    " summary: document.getElementById('summary').innerText,"
    " labels: [...document.querySelectorAll('.label')].map((e) => e.textContent),"
    " panel: document.getElementById('panel').hidden ? '' : document.getElementById('panel').innerText})"
)


class Host:
    """The SDK host page in Chromium, the widget in its frame, and what the host recorded."""

    def __init__(self, page, console: list[str]) -> None:
        self.page, self.console = page, console
        self.frame = None

    def start(self, server: str, call: dict) -> None:
        self.page.evaluate("(call) => window.runSdkHost(call)", {"server": f"{server}/mcp", **call})

    def reported(self) -> None:
        self.frame = reported_frame(self.page, self.console)

    def state(self) -> dict:
        return self.frame.evaluate(STATE)

    def events(self, method: str) -> list[dict]:
        return [e["params"] for e in self.page.evaluate("window.hostEvents") if e["method"] == method]

    def log(self) -> list[str]:
        return self.page.evaluate("window.hostLog")

    def wait_reports(self, count: int) -> None:
        self.frame.wait_for_function(f"() => window.tomtomWidget.reports === {count}", timeout=60_000)

    def click_at(self, position: list[float]) -> None:
        """Click the map at [lon, lat] as a user would, once the map has settled and drawn something there."""
        self.frame.wait_for_function(
            "(p) => { const map = window.tomtomMap; const at = map.project(p);"
            " return map.loaded() && !map.isMoving() && map.queryRenderedFeatures([at.x, at.y]).length > 0; }",
            arg=position,
            timeout=10_000,
        )
        x, y = self.frame.evaluate("(p) => { const at = window.tomtomMap.project(p); return [at.x, at.y]; }", position)
        box = self.page.locator("#app").bounding_box()
        self.page.mouse.click(box["x"] + x, box["y"] + y)
        self.frame.wait_for_selector(".card", timeout=5000)


@pytest.fixture
def host(browser, sdk_host) -> Iterator[Host]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    blank_tiles(context)
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.goto(sdk_host)
    page.wait_for_function("typeof window.runSdkHost === 'function'")
    try:
        yield Host(page, console)
    finally:
        context.close()


def drawn_reports(log: str) -> list[dict]:
    return [line for line in app_status_lines(log) if line["message"] == "App drawn"]


def tool_calls(log: str, tool: str) -> list[dict]:
    lines = [json.loads(raw) for raw in log.splitlines() if raw.startswith("{")]
    return [line for line in lines if line.get("message") == "Tool call" and line.get("tool") == tool]


def test_a_clicked_place_tells_the_model_and_route_here_redraws(host, files, tomtom):
    with serve(tomtom, files) as server:
        host.start(server, SEARCH)
        host.reported()
        host.click_at(PHARMACY)
        # Selected: highlighted, its card, and the model told what the user picked.
        assert host.state()["selected"] == "Apotheek Centrum"
        (context,) = host.events("ui/update-model-context")
        assert "Apotheek Centrum" in context["content"][0]["text"], context
        assert context["structuredContent"]["selected"] == {
            "kind": "place",
            "name": "Apotheek Centrum",
            "id": "NL/POI/p0/100",
            "position": {"lat": 52.37258, "lon": 4.89532},
            "tool": "tomtom-poi-search",
        }
        assert len(json.dumps(context)) <= 2000
        card = host.frame.locator(".card")
        buttons = card.locator(".acts button")
        assert buttons.all_inner_texts() == ["Route here", "Search nearby", "Show reachable area"]
        assert all(b.bounding_box()["height"] >= 44 for b in buttons.all()), "touch targets"
        card.screenshot(path=str(ARTIFACTS / "selected_card.png"))
        host.page.locator("#app").screenshot(path=str(ARTIFACTS / "selected_place.png"))
        # The place's website opens through the host.
        card.get_by_text("Website").click()
        assert host.events("ui/open-link") == [{"url": "https://www.example-apotheek.nl/"}]
        # Route here: the routing tool called through the host, from the search's position, and drawn.
        card.get_by_text("Route here").click()
        host.wait_reports(2)
        after = host.state()
    log = server_process.last_log
    assert "tools/call tomtom-routing" in host.log()
    assert after["tool"] == "tomtom-routing" and after["outcome"] == "drawn"
    assert "Route" in after["legend"] and after["summary"].startswith("Route: "), after["summary"]
    assert after["selected"] == "" and after["panel"] == ""
    (routed,) = tool_calls(log, "tomtom-routing")
    first, second = drawn_reports(log)
    assert first["tool"] == "tomtom-poi-search" and second["tool"] == "tomtom-routing"
    assert second["delivery_request_id"] == routed["request_id"]


def test_search_nearby_and_the_reachable_area_redraw_and_a_route_is_selectable(host, files, tomtom):
    with serve(tomtom, files) as server:
        host.start(server, SEARCH)
        host.reported()
        host.click_at(PHARMACY)
        host.frame.locator(".card").get_by_text("Show reachable area").click()
        host.wait_reports(2)
        reachable = host.state()
        host.click_at(reachable["input"]["origin"])
        host.frame.locator(".card").get_by_text("Search nearby").click()
        host.wait_reports(3)
        nearby = host.state()
        # A route, then one of its points on the line: the model hears of the route with its length and time.
        host.click_at(PHARMACY)
        host.frame.locator(".card").get_by_text("Route here").click()
        host.wait_reports(4)
        on_line = host.frame.evaluate(
            "() => { const f = window.tomtomMap.queryRenderedFeatures({layers: ['drawn-lines']})[0];"
            " const c = f.geometry.coordinates; return c[Math.floor(c.length / 2)]; }"
        )
        host.click_at(on_line)
        route = host.events("ui/update-model-context")[-1]["structuredContent"]["selected"]
    assert reachable["input"] == {"origin": [4.89532, 52.37258], "timeBudgetInSec": 900, "show_ui": True}
    assert (reachable["tool"], reachable["outcome"]) == ("tomtom-reachable-range", "drawn")
    assert "Reachable area" in reachable["legend"], reachable["legend"]
    assert (nearby["tool"], nearby["outcome"]) == ("tomtom-poi-search", "drawn")
    # Around the origin clicked; a range has no query and the origin no category: the default one.
    assert (nearby["input"]["position"], nearby["input"]["query"]) == ([4.89532, 52.37258], "restaurant")
    assert route["kind"] == "route" and route["distance_m"] > 0 and route["travel_time_s"] > 0, route
    tools = [line["tool"] for line in drawn_reports(server_process.last_log)]
    assert tools == ["tomtom-poi-search", "tomtom-reachable-range", "tomtom-poi-search", "tomtom-routing"]


def test_attribution_and_full_screen_go_through_the_host(host, files, tomtom):
    with serve(tomtom, files) as server:
        host.start(server, SEARCH)
        host.reported()
        frame = host.frame
        # MapLibre's compact attribution starts open: the credit's link is there to click.
        frame.get_by_text("© TomTom").click()
        assert {"url": "https://www.tomtom.com/"} in host.events("ui/open-link")
        control = frame.locator("#fs")
        assert control.inner_text() == "Full screen" and control.bounding_box()["height"] >= 44
        control.click()
        frame.wait_for_function("() => document.documentElement.dataset.displayMode === 'fullscreen'")
        assert control.inner_text() == "Exit full screen"
        control.click()
        frame.wait_for_function("() => document.documentElement.dataset.displayMode === 'inline'")
    assert host.events("ui/request-display-mode") == [{"mode": "fullscreen"}, {"mode": "inline"}]


def test_a_second_result_redraws_and_is_reported(host, files, tomtom):
    with serve(tomtom, files) as server:
        host.start(server, SEARCH)
        host.reported()
        before = host.state()
        sent = host.page.evaluate(
            "(call) => window.sendAnotherResult(call)", {"tool": "tomtom-dynamic-map", "args": DYNAMIC_MAP}
        )
        host.wait_reports(2)
        after = host.state()
    log = server_process.last_log
    assert (before["tool"], before["title"], before["labels"]) == ("tomtom-poi-search", "", [])
    assert (after["tool"], after["title"], after["labels"]) == ("tomtom-dynamic-map", "Trip", ["Dam"])
    assert after["features"] == 1 and "Place" not in after["legend"], after["legend"]
    first, second = drawn_reports(log)
    assert second["tool"] == "tomtom-dynamic-map" and second["delivery_request_id"] == sent["requestId"]
    assert first["delivery_request_id"] != second["delivery_request_id"]


def test_partial_input_shows_where_it_asks_before_the_result(host, files, tomtom):
    partial = {"query": "pharmacy", "position": AMSTERDAM}
    with serve(tomtom, files) as server:
        host.start(server, {**SEARCH, "partial": partial, "hold": True})
        frame = host.page.frame_locator("#app")
        waiting = frame.locator("#panel")
        waiting.get_by_text("Asked about").wait_for(timeout=30_000)
        assert waiting.inner_text() == 'Waiting for the tool result…\n\nAsked about: "pharmacy" around 52.3676, 4.9041'
        host.page.evaluate("window.pendingResult()")
        host.reported()
        assert host.state()["outcome"] == "drawn" and host.state()["panel"] == ""


def test_an_error_is_logged_to_the_host(host, files, tomtom):
    call = {"tool": "tomtom-routing", "args": {"locations": [AMSTERDAM], "show_ui": True}}
    with serve(tomtom, files) as server:
        host.start(server, call)
        host.reported()
    (logged,) = [e for e in host.events("notifications/message") if e["level"] == "error"]
    assert logged["logger"] == "tomtom-map" and logged["data"].startswith("tomtom-routing result:"), logged


def test_the_card_offers_its_tools_in_a_host_that_does_not_answer_tools_list(host, files, tomtom):
    """The plain `AppBridge` passes the widget's `tools/call` on but leaves its `tools/list`
    unanswered: the result's `_meta` names the card tools this caller is listed, so the buttons
    are there all the same, and work."""
    with serve(tomtom, files) as server:
        host.start(server, {**SEARCH, "answerToolsList": False})
        host.reported()
        host.click_at(PHARMACY)
        buttons = host.frame.locator(".card .acts button")
        assert buttons.all_inner_texts() == ["Route here", "Search nearby", "Show reachable area"]
        host.frame.locator(".card").get_by_text("Route here").click()
        host.wait_reports(2)
        after = host.state()
    assert "tools/list" not in host.log(), "this host never answered the widget's tools/list"
    assert "tools/call tomtom-routing" in host.log()
    assert after["tool"] == "tomtom-routing" and after["outcome"] == "drawn"
