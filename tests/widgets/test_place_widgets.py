"""The widgets of the tools with a place: the largest answer each can give fits the result.

Each tool is called with `show_ui` against the stub answering the largest thing it can (100
results with every optional field, 20 charging stations with live availability, a 39,414-point
route, a 5,000-point reachable boundary); the app data must travel inline, under the result
limit, and the text the model reads carries no coordinate it would not carry without the map.
Run with `-s` to see the fitted sizes (the issue's table).
"""

from __future__ import annotations

import copy
import logging

import orjson
import pytest

from protocol.appdata import APP_DATA_KEY, RESULT_LIMIT
from tests.conftest import data
from tests.support import logs
from tests.support.long_routes import route_answer
from tests.tools.test_routing import v3_answer
from tools.shaping.appdata import decode
from tools.tomtom.backends import Backend

AMSTERDAM, BERLIN = [4.9041, 52.3676], [13.405, 52.52]


def many(answer: dict, key: str, count: int) -> dict:
    """`answer` with its first `key` item repeated `count` times (each with its own id)."""
    bigger = copy.deepcopy(answer)
    first = bigger[key][0]
    bigger[key] = [{**copy.deepcopy(first), "id": f"{first.get('id', 'x')}-{i}"} for i in range(count)]
    return bigger


def long_along_route() -> dict:
    answer = route_answer(39_414)
    answer["routes"][0]["legs"][0]["summary"]["chargingInformationAtEndOfLeg"] = data("ev_route.json")["routes"][0][
        "legs"
    ][0]["summary"]["chargingInformationAtEndOfLeg"]
    return answer


def ring(points: int) -> dict:
    import math

    boundary = [
        {
            "latitude": round(52.37 + 0.3 * math.sin(i / points * 2 * math.pi) * (1 + 0.2 * math.sin(i)), 5),
            "longitude": round(4.9 + 0.5 * math.cos(i / points * 2 * math.pi), 5),
        }
        for i in range(points)
    ]
    return {
        "formatVersion": "0.0.1",
        "reachableRange": {"center": {"latitude": 52.37, "longitude": 4.9}, "boundary": boundary},
    }


CASES = {
    "tomtom-geocode": (
        [("GET", r"/maps/orbis/places/geocode", many(data("geocode_v2.json"), "results", 100))],
        {"query": "Dam", "limit": 100},
    ),
    "tomtom-reverse-geocode": (
        [("GET", r"/maps/orbis/places/reverseGeocode", many(data("reverse_geocode_v2.json"), "results", 20))],
        {"position": [4.8927, 52.3731]},
    ),
    "tomtom-fuzzy-search": (
        [("GET", r".*/places/search/.*", many(data("poi_search.json"), "results", 100))],
        {"query": "pharmacy", "limit": 100},
    ),
    "tomtom-poi-search": (
        [("GET", r".*/poiSearch/.*", many(data("poi_search.json"), "results", 100))],
        {"query": "pharmacy", "limit": 100, "openingHours": "nextSevenDays", "timeZone": "iana"},
    ),
    "tomtom-ev-search": (
        [
            ("GET", r".*/nearbySearch/.*", many(data("ev_search.json"), "results", 20)),
            ("GET", r"/search/2/chargingAvailability.json", data("charging_availability.json")),
        ],
        {"position": AMSTERDAM, "limit": 20},
    ),
    "tomtom-area-search": (
        [("POST", r".*/geometrySearch/.*", many(data("poi_search.json"), "results", 100))],
        {"query": "pharmacy", "center": AMSTERDAM, "radius": 20_000, "limit": 100},
    ),
    "tomtom-reachable-range": (
        [("GET", r".*/calculateReachableRange/.*", ring(5_000))],
        {"origin": AMSTERDAM, "timeBudgetInSec": 3600},
    ),
    "tomtom-ev-routing": (
        [("POST", r".*/calculateLongDistanceEVRoute/.*", long_along_route())],
        {"locations": [AMSTERDAM, BERLIN], "maxChargeInkWh": 80, "currentChargeInkWh": 60},
    ),
    "tomtom-search-along-route": (
        [
            ("POST", r"/maps/orbis/routing/routes/calculate", v3_answer(route_answer(39_414))),  # Routing v3
            ("POST", r".*/searchAlongRoute/.*", many(data("along_route.json"), "results", 20)),
        ],
        {"origin": AMSTERDAM, "destination": BERLIN, "query": "petrol", "limit": 20},
    ),
}


@pytest.mark.parametrize("tool", list(CASES))
async def test_the_largest_answer_draws_inline(stub, dispatcher, context, caplog, tool):
    caplog.set_level(logging.INFO)
    routes, arguments = CASES[tool]
    for method, pattern, body in routes:
        stub.route(method, pattern, json_body=body)
    if tool == "tomtom-ev-search":
        context.backend = Backend.GENESIS
    plain = await dispatcher.call(tool, arguments, context)
    shown = await dispatcher.call(tool, {**arguments, "show_ui": True}, context)
    assert not shown.is_error, shown.text
    assert shown.meta["delivery"] == "inline", shown.meta
    result = orjson.dumps({"content": [{"type": "text", "text": shown.text}], "_meta": shown.meta})
    assert len(result) < RESULT_LIMIT
    text = orjson.loads(shown.text)
    assert (text.pop("show_ui"), text.pop("tool")) == (True, tool)
    assert text == {k: v for k, v in orjson.loads(plain.text).items() if k != "show_ui"}, "the map adds nothing"
    assert decode(shown.meta[APP_DATA_KEY])
    (line,) = [line for line in logs.app_status(caplog.records) if line["kind"] == "app_data"]
    print(
        f"{tool}: raw {line['raw_bytes']:,} bytes, app data {line['encoded_chars']:,} chars, result "
        f"{line['result_chars']:,} chars{', simplified' if line.get('simplification') else ''}"
    )
