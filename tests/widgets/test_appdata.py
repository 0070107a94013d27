"""App data in the result: encoded, fitted under 120,000 characters, and what fitting keeps.

The long routes are made up (tests/support/long_routes.py) at the sizes of ADR 0008; the
checks are what a widget would see: the decoded data, its lines and the vertices its
sections and progress points index.
"""

from __future__ import annotations

import itertools
import logging
import math
import re

import orjson
import pytest

from protocol.appdata import APP_DATA_KEY, CALLABLE_KEY, RESULT_LIMIT, deliver, result_chars
from tests.conftest import data
from tests.support import logs
from tests.support.dispatching import ShowUiInput, dispatcher_of
from tests.support.long_routes import ROUTES, line_of, route_answer
from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.shaping.appdata import decode, encode, fit
from tools.widgets import MAP_APP_CALLS, MAP_APP_URI, map_app

INDEX_KEYS = ("startPointIndex", "endPointIndex", "pointIndex")


def pointed(answer: dict) -> list[tuple[str, int]]:
    """Every (key, index) in the first route's sections and progress, in order."""
    route = answer["routes"][0]
    return [(k, item[k]) for item in [*route["sections"], *route["progress"]] for k in INDEX_KEYS if k in item]


def distance_to_segment_m(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    """Metres from p to the segment a-b, in an equirectangular projection around p (fine at 1 km)."""
    kx, ky = 111_195.0 * math.cos(math.radians(p[1])), 111_195.0
    ax, ay, bx, by = (a[0] - p[0]) * kx, (a[1] - p[1]) * ky, (b[0] - p[0]) * kx, (b[1] - p[1]) * ky
    dx, dy = bx - ax, by - ay
    t = 0.0 if dx == dy == 0 else min(1.0, max(0.0, -(ax * dx + ay * dy) / (dx * dx + dy * dy)))
    return math.hypot(ax + t * dx, ay + t * dy)


def test_encode_is_gzip_then_base64_and_round_trips():
    value = {"name": "Dam ü", "position": [4.89273, 52.37314], "nested": [{"a": None}]}
    encoded = encode(value)
    assert encoded.isascii() and "=" not in encoded.rstrip("=")
    import base64
    import gzip

    assert orjson.loads(gzip.decompress(base64.b64decode(encoded))) == value
    assert decode(encoded) == value


@pytest.mark.parametrize("points", sorted(ROUTES))
def test_long_routes_fit_under_the_limit(points):
    answer = route_answer(points)
    assert len(line_of(answer)) == points
    delivery = deliver("tomtom-routing", Answer({"routes": []}, answer, show_ui=True), "0" * 16)
    assert delivery.inline
    assert delivery.result_chars < RESULT_LIMIT
    assert result_chars(delivery.text, delivery.meta) == delivery.result_chars
    fitted = decode(delivery.meta[APP_DATA_KEY])
    assert len(line_of(fitted)) <= points
    report = delivery.fitted.simplification
    if len(line_of(fitted)) < points:
        assert report is not None and report.original_points == points and report.points == len(line_of(fitted))
        assert report.points > 5_000, "a fitted route keeps thousands of vertices, not a sketch"
        assert report.max_error_m <= 30


@pytest.mark.parametrize("points", [20_571, 39_414])
def test_indexes_still_point_at_the_same_coordinates(points):
    answer = route_answer(points)
    fitted = decode(fit(answer, 80_000).encoded)
    before, after = line_of(answer), line_of(fitted)
    assert len(after) < len(before) / 2
    for (key, old), (same_key, new) in zip(pointed(answer), pointed(fitted), strict=True):
        assert key == same_key
        assert after[new] == before[old], f"{key} {old} -> {new} moved"
    legs_before = answer["routes"][0]["legs"]
    legs_after = fitted["routes"][0]["legs"]
    for leg, leg_after in zip(legs_before, legs_after, strict=True):
        assert leg_after["points"][0] == leg["points"][0] and leg_after["points"][-1] == leg["points"][-1]
        assert leg_after["summary"] == leg["summary"]


def test_simplified_line_stays_within_the_reported_error():
    answer = route_answer(8_240)
    fitted = fit(answer, 30_000)
    original = line_of(answer)
    order = {p: i for i, p in enumerate(original)}
    kept = [order[p] for p in line_of(decode(fitted.encoded))]
    assert kept == sorted(kept) and kept[0] == 0 and kept[-1] == len(original) - 1
    bound = fitted.simplification.max_error_m
    worst = max(
        distance_to_segment_m(original[i], original[a], original[b])
        for a, b in itertools.pairwise(kept)
        for i in range(a + 1, b)
    )
    assert 0 < worst <= bound + 0.5, (worst, bound)


def test_a_route_that_fits_is_delivered_unchanged():
    answer = data("route.json")
    fitted = fit(answer, 100_000)
    assert fitted.simplification is None
    assert decode(fitted.encoded) == answer


def test_more_decimals_are_rounded_to_one_metre_before_anything_is_dropped():
    answer = data("route.json")
    raw_size = len(encode(answer))
    for leg in answer["routes"][0]["legs"]:
        for point in leg["points"]:
            point["latitude"] += 1.23456789e-7
            point["longitude"] -= 9.87654321e-8
    room = raw_size + 50
    assert len(encode(answer)) > room
    fitted = fit(answer, room)
    after = decode(fitted.encoded)
    assert len(line_of(after)) == len(line_of(answer))
    assert fitted.simplification.as_dict() == {"original_points": 400, "points": 400, "max_error_m": 1}
    for (lon, lat), (lon2, lat2) in zip(line_of(answer), line_of(after), strict=True):
        assert (lon2, lat2) == (round(lon, 5), round(lat, 5))


def test_fitting_never_changes_the_text_answer_or_the_tools_data():
    answer = route_answer(20_571)
    untouched = orjson.dumps(answer)
    fit(answer, 50_000)
    assert orjson.dumps(answer) == untouched


def test_data_viz_input_comes_back_byte_identical():
    text = '{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[4.123456789,52.0]},"properties":{"n":"é"}}]}\n'  # noqa: E501
    app_data = {"data_viz": {"title": None, "layers": [{"type": "markers"}], "geojson": text}}
    fitted = fit(app_data, 100_000, refetchable=True)
    assert decode(fitted.encoded)["data_viz"]["geojson"] == text
    assert fit(app_data, 10, refetchable=True).encoded is None


def test_data_viz_data_shaped_like_a_route_is_never_simplified():
    answer = route_answer(8_240)
    room = len(encode(answer)) - 1
    assert fit(answer, room, refetchable=True).encoded is None
    assert fit(answer, room).encoded is not None


def test_a_route_too_large_even_simplified_is_refused():
    answer = route_answer(8_240)
    fitted = fit(answer, 2_000)
    assert fitted.encoded is None
    assert fitted.raw_bytes > 0


def too_large_tool(answer: dict):
    async def run(arguments: dict, context: CallContext) -> Answer:
        return Answer({"routes": [{"summary": {"lengthInMeters": 1}}]}, answer, show_ui=True)

    return define_tool(name="big-route", title="Big", description="big", input=ShowUiInput, run=run, widget=MAP_APP_URI)


async def test_too_large_logs_and_still_answers_the_text(config, caplog):
    answer = route_answer(39_414)
    answer["routes"][0]["progress"] = [{"pointIndex": i} for i in range(0, 39_414, 2)]  # half the vertices must stay
    caplog.set_level(logging.INFO)
    dispatcher = dispatcher_of(*[too_large_tool(answer)])
    context = CallContext(config=config, transport="http", client_name="Host A", user_agent="HostA/1.0")
    outcome = await dispatcher.call("big-route", {}, context)
    assert not outcome.is_error
    assert orjson.loads(outcome.text) == {"routes": [{"summary": {"lengthInMeters": 1}}], "show_ui": True}
    assert outcome.meta == {
        "show_ui": True,
        "tool": "big-route",
        "request_id": context.request_id,
        "com.tomtom/callable-tools": [],
        "delivery": "too_large",
    }
    lines = {line.pop("message"): line for line in logs.app_status(caplog.records)}
    assert lines["App data"]["delivery"] == "too_large"
    too_large = lines["App data too large for the result: the app can't draw"]
    assert (
        too_large["tool"] == "big-route" and too_large["client"] == "Host A" and too_large["user_agent"] == "HostA/1.0"
    )
    assert too_large["raw_bytes"] > 120_000 and too_large["result_chars"] < 1_000


def named_tool(name: str):
    async def run(arguments: ShowUiInput, context: CallContext) -> Answer:
        return Answer({"places": []}, {"places": []}, show_ui=arguments.show_ui)

    return define_tool(name=name, title=name, description=name, input=ShowUiInput, run=run, widget=MAP_APP_URI)


async def test_a_drawn_result_names_the_card_tools_this_caller_is_listed(config):
    dispatcher = dispatcher_of(*[named_tool(name) for name in ("tomtom-poi-search", "tomtom-routing", "tomtom-x")])
    everyone = CallContext(config=config, transport="http", client_name="Host A")
    hidden = CallContext(
        config=config, transport="http", client_name="Host B", hidden_tools=frozenset({"tomtom-routing"})
    )

    drawn = await dispatcher.call("tomtom-poi-search", {"show_ui": True}, everyone)
    narrower = await dispatcher.call("tomtom-poi-search", {"show_ui": True}, hidden)
    text_only = await dispatcher.call("tomtom-poi-search", {"show_ui": False}, everyone)

    assert drawn.meta[CALLABLE_KEY] == ["tomtom-routing", "tomtom-poi-search"], "in MAP_APP_CALLS order, listed only"
    assert narrower.meta[CALLABLE_KEY] == ["tomtom-poi-search"], "a tool this caller is not listed is not offered"
    assert CALLABLE_KEY not in text_only.meta, "no widget draws it"


def test_the_card_calls_the_tools_the_server_names_and_no_other():
    page = map_app().html
    card = re.search(r"for \(const \[label, tool, args, message\] of \[(.*?)\]\) \{", page, re.S)
    assert card is not None, "the card's button table moved: update this test"
    assert re.findall(r'"(tomtom-[a-z-]+)"', card.group(1)) == list(MAP_APP_CALLS)
