"""The map widget in the host's world, and readable at a glance (issue #45), in the official-SDK host.

The host (tests/widgets/sdk_host.html, js/sdk_host.js on the SDK's `AppBridge`) runs the widget
against a real server process (TomTom is the stub); `window.changeContext` sends a host-context
change. What is checked is what a person sees in the widget's frame: distances in the host's
locale and units, the host's style variables (a set replaces the last one as a whole), the
host's fonts and safe-area insets, touch-sized controls, dark controls in the dark theme, the
names of the top results (an overlapping one hidden), traffic fitted to its incidents, and plain
error text with the developer detail behind the toggle. Screenshots of a search and a route map,
1,280 and 420 px wide, light and dark, go to the artifacts directory (and /tmp/shots).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.widgets.chromium import (
    AMSTERDAM,
    ARTIFACTS,
    BERLIN,
    blank_tiles,
    reported_frame,
    require_sdk_host,
    serve,
)

pytestmark = [pytest.mark.browser, pytest.mark.live_server_process]

require_sdk_host()

ROUTE = {"tool": "tomtom-routing", "args": {"locations": [AMSTERDAM, BERLIN], "show_ui": True}}
SEARCH = {"tool": "tomtom-fuzzy-search", "args": {"query": "crowded", "show_ui": True}}
TRAFFIC_BOX = [4.8, 52.33, 4.95, 52.4]
SUMMARY = "() => document.getElementById('summary').innerText"
LEGEND_STYLE = (
    "() => { const s = getComputedStyle(document.getElementById('legend')); return [s.backgroundColor, s.color]; }"
)


def crowded() -> dict:
    """A search answer of 12 places: the 7th and 8th stand where the 1st and 2nd do."""
    spots = [(4.84 + 0.04 * (i % 3), 52.33 + 0.025 * (i // 3)) for i in range(6)]
    spots += [spots[0], spots[1], (4.9, 52.31), (4.92, 52.31), (4.94, 52.31), (4.96, 52.31)]
    results = [
        {
            "type": "POI",
            "id": f"crowded-{i}",
            "poi": {"name": f"Cafe {i}"},
            "address": {"freeformAddress": f"Straat {i}, Amsterdam"},
            "position": {"lat": lat, "lon": lon},
        }
        for i, (lon, lat) in enumerate(spots)
    ]
    return {"summary": {"numResults": 12, "totalResults": 12}, "results": results}


def incidents(*lines: list[list[float]]) -> dict:
    """A traffic answer with one line incident per `lines` entry."""
    items = [
        {
            "type": "Feature",
            "geometry": {"type": "LineString", "coordinates": coordinates},
            "properties": {"id": f"i{i}", "iconCategory": 6, "magnitudeOfDelay": 3, "from": "A", "to": "B"},
        }
        for i, coordinates in enumerate(lines)
    ]
    return {"incidents": items}


@pytest.fixture(scope="module")
def server(tomtom, files: str) -> Iterator[str]:
    tomtom.route("GET", r"/maps/orbis/places/search/crowded.*", json_body=crowded())
    with serve(tomtom, files) as url:
        yield url


@contextmanager
def widget(browser, sdk_host: str, server: str, call: dict, width: int = 1300):
    """The SDK host running `call`; yields (page, the widget's frame) once the widget has reported."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    blank_tiles(context)
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    try:
        page.goto(sdk_host)
        page.wait_for_function("typeof window.runSdkHost === 'function'")
        page.evaluate("(call) => window.runSdkHost(call)", {"server": f"{server}/mcp", **call})
        yield page, reported_frame(page, console)
    finally:
        context.close()


def change(page, frame, changed: dict, until: str) -> None:
    """A host-context change, and the widget's frame once `until` holds there."""
    page.evaluate("(changed) => window.changeContext(changed)", changed)
    frame.wait_for_function(until, timeout=10_000)


def test_distances_follow_the_hosts_locale(browser, sdk_host, server):
    with widget(browser, sdk_host, server, ROUTE) as (page, frame):
        # The host's locale at the start is en-GB: miles.
        assert frame.evaluate(SUMMARY).startswith("Route: 408.2 mi · 6 h 30 min"), frame.evaluate(SUMMARY)
        change(page, frame, {"locale": "de-DE"}, "() => document.getElementById('summary').innerText.includes('km')")
        assert frame.evaluate(SUMMARY).startswith("Route: 657,0 km · 6 h 30 min · 7 min traffic delay")
        change(page, frame, {"locale": "en-US"}, "() => document.getElementById('summary').innerText.includes('mi')")
        assert frame.evaluate(SUMMARY).startswith("Route: 408.2 mi")
        # A tag that is not BCP 47: English, kilometres.
        change(
            page, frame, {"locale": "no such tag!"}, "() => document.getElementById('summary').innerText.includes('km')"
        )
        assert frame.evaluate(SUMMARY).startswith("Route: 657.0 km")


def tap(page, frame, position: list) -> str:
    """Click (tap) the place at `position` once the map has drawn it there; the card's text."""
    frame.wait_for_function(
        "(p) => { const map = window.tomtomMap; const at = map.project(p);"
        " return map.loaded() && !map.isMoving() && map.queryRenderedFeatures([at.x, at.y]).length > 0; }",
        arg=position,
        timeout=10_000,
    )
    frame.evaluate("() => document.querySelectorAll('.card').forEach((c) => c.remove())")
    box = page.locator("#app").bounding_box()
    x, y = frame.evaluate("(p) => { const at = window.tomtomMap.project(p); return [at.x, at.y]; }", position)
    page.mouse.click(box["x"] + x, box["y"] + y)
    frame.wait_for_selector(".card", timeout=5000)
    return frame.inner_text(".card")


def test_a_places_card_speaks_the_locale_and_a_tap_names_it(browser, sdk_host, server):
    call = {"tool": "tomtom-fuzzy-search", "args": {"query": "pharmacy", "show_ui": True}}
    pharmacy = [4.895322, 52.372581]
    with widget(browser, sdk_host, server, call) as (page, frame):
        british = tap(page, frame, pharmacy)
        touch = {"locale": "de-DE", "deviceCapabilities": {"touch": True, "hover": False}}
        change(page, frame, touch, "() => document.documentElement.hasAttribute('data-touch')")
        german = tap(page, frame, pharmacy)
    assert "Distance\n0.2 mi" in british, british  # en-GB: 310 m in miles
    # On a touch device the tap shows what hovering would: the place's name, in its card.
    assert german.startswith("Apotheek Centrum") and "Distance\n310 m" in german, german


def test_a_style_variable_set_replaces_the_last_as_a_whole(browser, sdk_host, server):
    with widget(browser, sdk_host, server, ROUTE) as (page, frame):
        default = frame.evaluate(LEGEND_STYLE)
        red = {"styles": {"variables": {"--color-background-primary": "rgb(255, 0, 0)"}}}
        change(
            page,
            frame,
            red,
            "() => getComputedStyle(document.getElementById('legend')).backgroundColor === 'rgb(255, 0, 0)'",
        )
        green = {"styles": {"variables": {"--color-text-primary": "rgb(0, 128, 0)"}}}
        change(
            page, frame, green, "() => getComputedStyle(document.getElementById('legend')).color === 'rgb(0, 128, 0)'"
        )
        # The variable the new set left out is gone: the widget's own background again.
        assert frame.evaluate(LEGEND_STYLE) == [default[0], "rgb(0, 128, 0)"]
        assert default[0] == "rgb(255, 255, 255)"


def test_fonts_insets_and_touch_from_the_host(browser, sdk_host, server):
    with widget(browser, sdk_host, server, ROUTE) as (page, frame):
        fonts = "@font-face { font-family: 'Host Sans'; src: local('DejaVu Sans'); }"
        change(
            page,
            frame,
            {"styles": {"css": {"fonts": fonts}}},
            "() => !!document.getElementById('__mcp-host-fonts')",
        )
        assert frame.evaluate("document.getElementById('__mcp-host-fonts').textContent") == fonts
        box = "(id) => { const r = document.querySelector(id).getBoundingClientRect(); return [r.left, r.top]; }"
        zoom = "() => { const r = document.querySelector('.maplibregl-ctrl-group button').getBoundingClientRect();"
        zoom += " return [r.width, r.height]; }"
        assert frame.evaluate(box, "#summary") == [12, 12]
        assert frame.evaluate(zoom) == [29, 29]
        insets = {"safeAreaInsets": {"top": 30, "right": 16, "bottom": 0, "left": 20}}
        change(page, frame, insets, "() => document.getElementById('summary').getBoundingClientRect().left === 32")
        assert frame.evaluate(box, "#summary") == [32, 42]
        ctrl = "() => { const c = document.querySelector('.maplibregl-ctrl-top-right').getBoundingClientRect();"
        ctrl += " return [innerWidth - c.right, c.top]; }"
        assert frame.evaluate(ctrl) == [16, 30]
        touch = {"deviceCapabilities": {"touch": True, "hover": False}}
        change(page, frame, touch, "() => document.documentElement.hasAttribute('data-touch')")
        width, height = frame.evaluate(zoom)
        assert width >= 44 and height >= 44
        # What only hovering shows (a place's name) is in its card on a tap.


def luminance(rgb: str) -> float:
    red, green, blue = (int(part) for part in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def test_dark_mode_has_dark_controls(browser, sdk_host, server):
    controls = (
        "() => ['.maplibregl-ctrl-group', '.maplibregl-ctrl-attrib', '#legend', '#summary']"
        ".map((s) => { const c = getComputedStyle(document.querySelector(s)); return [c.backgroundColor, c.color]; })"
    )
    with widget(browser, sdk_host, server, ROUTE) as (page, frame):
        light = frame.evaluate(controls)
        change(page, frame, {"theme": "dark"}, "() => document.documentElement.dataset.theme === 'dark'")
        dark = frame.evaluate(controls)
        icon = frame.evaluate("() => getComputedStyle(document.querySelector('.maplibregl-ctrl button')).filter")
    assert all(luminance(background) > 0.9 for background, _ in light), light
    for background, text in dark:
        assert luminance(background) < 0.2 and luminance(text) > 0.7, dark
    assert icon == "invert(1)", "the zoom buttons' icons are light on the dark buttons"


def test_the_top_results_are_named_and_overlapping_names_hidden(browser, sdk_host, server):
    tags = "() => [...document.querySelectorAll('.tag')].map((t) => [t.textContent, !t.hidden])"
    with widget(browser, sdk_host, server, SEARCH) as (_page, frame):
        named = frame.evaluate(tags)
        frame.evaluate("() => window.tomtomMap.zoomTo(window.tomtomMap.getZoom() - 4, { duration: 0 })")
        frame.wait_for_function("() => window.tomtomWidget.tags === 1", timeout=10_000)
        zoomed_out = frame.evaluate(tags)
    assert [name for name, _ in named] == [f"Cafe {i}" for i in range(10)], "the first 10 results are named"
    shown = [name for name, visible in named if visible]
    assert shown == [f"Cafe {i}" for i in range(10) if i not in (6, 7)], "a name over an earlier one is hidden"
    assert [name for name, visible in zoomed_out if visible] == ["Cafe 0"], "moving the map lays the names out again"


def test_traffic_fits_its_incidents_not_the_box(browser, sdk_host, server, tomtom):
    inside = [[4.85, 52.35], [4.86, 52.36]]
    beyond = [[4.9, 52.38], [5.1, 52.45], [5.3, 52.5]]  # runs far past the box's north-east corner
    tomtom.route("GET", r"/maps/orbis/traffic/incidentDetails", json_body=incidents(inside, beyond), times=1)
    call = {"tool": "tomtom-traffic", "args": {"bbox": TRAFFIC_BOX, "show_ui": True}}
    in_view = (
        "(points) => { const m = window.tomtomMap, c = m.getContainer();"
        " return points.every((p) => { const q = m.project(p); return q.x >= 0 && q.y >= 0"
        " && q.x <= c.clientWidth && q.y <= c.clientHeight; }); }"
    )
    with widget(browser, sdk_host, server, call) as (_page, frame):
        fit, shown = frame.evaluate("window.tomtomWidget.fit"), frame.evaluate(in_view, inside + beyond)
    assert fit == [4.85, 52.35, 5.3, 52.5] and shown, fit
    tomtom.route("GET", r"/maps/orbis/traffic/incidentDetails", json_body={"incidents": []}, times=1)
    with widget(browser, sdk_host, server, call) as (_page, frame):
        assert frame.evaluate("window.tomtomWidget.fit") == TRAFFIC_BOX, "no incidents: the box asked about"


def test_an_error_is_said_plainly_with_the_detail_behind_the_toggle(browser, sdk_host, server):
    call = {"tool": "tomtom-routing", "args": {"locations": [AMSTERDAM], "show_ui": True}}
    with widget(browser, sdk_host, server, call) as (_page, frame):
        main = frame.evaluate("() => document.querySelector('#panel strong').innerText")
        paragraphs = frame.evaluate("() => document.querySelectorAll('#panel p').length")
        toggle = frame.evaluate("() => document.querySelector('#panel summary').innerText")
        opened = frame.evaluate("() => document.querySelector('#panel details').open")
        detail = frame.evaluate("() => document.querySelector('#panel code').textContent")
    assert main == "Couldn't show the route: it needs at least two places."
    assert paragraphs == 0 and toggle == "Details for developers" and not opened
    assert detail.startswith("result: the tool answered with an error: invalid_arguments: locations")
    assert "after validation" in detail, "the raw message is there for developers"


@pytest.mark.parametrize("call", [SEARCH, ROUTE], ids=["search", "route"])
def test_screenshots(browser, sdk_host, server, call):
    """PNGs of the map at 1,280 and 420 px wide, light and dark, in the artifacts folder."""
    name = "search" if call is SEARCH else "route"
    for width in (1280, 420):
        with widget(browser, sdk_host, server, call, width=width + 40) as (page, frame):
            for theme in ("light", "dark"):
                box = {"theme": theme, "containerDimensions": {"width": width, "height": 600 if width > 500 else 520}}
                change(
                    page,
                    frame,
                    box,
                    f"() => document.documentElement.dataset.theme === '{theme}'"
                    f" && window.tomtomWidget.view.width === {width}",
                )
                frame.wait_for_function("() => window.tomtomMap.loaded()", timeout=10_000)
                path = ARTIFACTS / f"map-{name}-{width}-{theme}.png"
                page.locator("#app").screenshot(path=str(path))
                assert path.stat().st_size > 1000
