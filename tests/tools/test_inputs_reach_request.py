"""Every input of every tool changes what we ask TomTom, on both backends.

For each tool in `build_dispatcher()` the table `TOOLS` holds one row: the TomTom answer the stub
gives (a tests/data file; `answer_on` for a backend that asks another API, `answer_post` for a
method that does, `image` for a tool TomTom answers with a picture), a baseline call, and
one sample value per input. For each backend that serves the tool and each input it lists
there (an input it refuses, or takes only at its default, is not listed), the call
`baseline + sample` must send TomTom a different request (method, path, query without `key`,
the headers in `MEANINGFUL_HEADERS`, or body) than the baseline call. An input that could never change the request
does not exist: remove it, or, if the tool itself consumes it (it shapes our answer and is never
sent), list it in `CONSUMED_BY_TOOL` with the reason; the test then checks that it leaves the
request alone and changes the answer instead.

A tool or input without a row or sample fails `test_every_tool_and_input_has_a_sample`, whose
message says what to add. Adding a tool: add one dict to `TOOLS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from protocol.service import build_dispatcher
from tests.conftest import DATA, data
from tests.support.tomtom_stub import TomTomStub
from tools.context import CallContext
from tools.definitions.ev_search import EvSearchInput
from tools.definitions.fuzzy_search import FuzzySearchInput
from tools.definitions.poi_search import PoiSearchInput
from tools.definitions.search_common import next_cursor
from tools.dispatch import Dispatcher
from tools.tomtom.backends import Backend


@dataclass(frozen=True)
class With:
    """A sample that only makes sense with other inputs (`radius` needs `position`).

    The call `baseline + also + input` is compared with `baseline + also`, so the difference
    comes from the input alone.
    """

    value: Any
    also: dict[str, Any]


@dataclass(frozen=True)
class Instead:
    """A sample for one of several inputs that exclude each other (one budget, one area).

    The call `baseline - of + input` is compared with the baseline: the input takes the place of
    the baseline's inputs `of`, so the difference comes from choosing it instead of them.
    """

    value: Any
    of: tuple[str, ...]


AMSTERDAM = [4.9041, 52.3676]
UTRECHT = [5.1215, 52.0907]
BOX = [4.8, 52.33, 4.95, 52.4]
AREAS = [[5.0, 52.2, 5.1, 52.3]]
STOPS = [AMSTERDAM, UTRECHT, [4.4777, 51.9244], [4.6462, 52.3874]]


def second_page(model: Any, baseline: dict[str, Any]) -> str:
    """The `cursor` of the baseline search's results from the 11th on (it becomes `ofs`)."""
    return next_cursor(model.model_validate(baseline), 10)


TOOLS: dict[str, dict[str, Any]] = {
    "tomtom-geocode": {
        "answer": "geocode.json",
        "answer_on": {Backend.ORBIS: "geocode_v2.json"},  # Orbis Geocoding v2: GeoJSON points
        "answer_post": {"POST": "batch_geocode.json"},  # `queries` on tomtom-maps: one Synchronous Batch
        "baseline": {"query": "Dam 1, Amsterdam"},
        "samples": {
            "query": "Damrak 1, Amsterdam",
            "queries": Instead(["Damrak 1, Amsterdam", "Dam 1, Amsterdam"], of=("query",)),
            "response_detail": "full",
            "show_ui": True,
            "limit": 3,
            "language": "nl-NL",
            "countries": ["NL"],
            "position": AMSTERDAM,
            "radius": With(5000, also={"position": AMSTERDAM}),
            "boundingBox": BOX,
            "entityTypeSet": ["Municipality"],
        },
    },
    "tomtom-reverse-geocode": {
        "answer": "reverse_geocode.json",
        "answer_on": {Backend.ORBIS: "reverse_geocode_v2.json"},  # Orbis Reverse Geocoding v2
        "baseline": {"position": AMSTERDAM},
        "samples": {
            "show_ui": True,
            "position": UTRECHT,
            "response_detail": "full",
            "radius": 50,
            "language": "nl-NL",
            "heading": 90,
            "entityType": ["Municipality"],
            "returnSpeedLimit": True,
        },
    },
    "tomtom-fuzzy-search": {
        "answer": "poi_search.json",
        "baseline": {"query": "coffee"},
        "samples": {
            "show_ui": True,
            "query": "tea",
            "response_detail": "full",
            "limit": 3,
            "language": "nl-NL",
            "countries": ["NL"],
            "position": AMSTERDAM,
            "radius": With(2000, also={"position": AMSTERDAM}),
            "boundingBox": BOX,
            "poiCategories": [9376],
            "idxSet": ["POI"],
            "cursor": second_page(FuzzySearchInput, {"query": "coffee"}),
        },
    },
    "tomtom-poi-search": {
        "answer": "poi_search.json",
        "baseline": {"query": "pharmacy"},
        "samples": {
            "show_ui": True,
            "query": "apotheek",
            "response_detail": "full",
            "limit": 3,
            "language": "nl-NL",
            "countries": ["NL"],
            "position": AMSTERDAM,
            "radius": With(2000, also={"position": AMSTERDAM}),
            "boundingBox": BOX,
            "poiCategories": [7326],
            "brandSet": ["BENU"],
            "connectorSet": ["Chademo"],
            "fuelSet": ["LPG"],
            "minPowerKW": 50,
            "maxPowerKW": 150,
            "openingHours": "nextSevenDays",
            "timeZone": "iana",
            "cursor": second_page(PoiSearchInput, {"query": "pharmacy"}),
        },
    },
    "tomtom-place-details": {
        "answer": "place_details.json",
        "baseline": {"id": "528009002822995"},
        "samples": {"id": "528009004256119", "response_detail": "full", "language": "nl-NL"},
    },
    "tomtom-traffic-flow": {
        "answer": "flow_segment.json",
        "baseline": {"position": AMSTERDAM},
        "samples": {"position": UTRECHT, "zoom": 14},
    },
    "tomtom-map-image": {
        "image": "map_image.png",
        "baseline": {"center": AMSTERDAM},
        "samples": {
            "center": UTRECHT,
            "zoom": With(15, also={"center": AMSTERDAM}),
            "bbox": Instead([4.5, 52.0, 5.3, 52.6], of=("center",)),  # a lower zoom than the baseline's
            "width": 1024,  # more tiles on Orbis, not only another size
            "height": 1024,
            "markers": [{"position": UTRECHT, "label": "Utrecht"}],
            "path": [AMSTERDAM, UTRECHT],
            "area": [AMSTERDAM, UTRECHT, [4.4777, 51.9244]],
        },
    },
    "tomtom-poi-categories": {
        "answer": "poi_categories.json",
        "baseline": {},
        "samples": {"filters": ["pharmacy"], "language": "de-DE", "response_detail": "full"},
    },
    "tomtom-ev-search": {
        "answer": "ev_search.json",
        "baseline": {"position": AMSTERDAM},
        "samples": {
            "show_ui": True,
            "position": UTRECHT,
            "response_detail": "full",
            "radius": 3000,
            "limit": 3,
            "connectorSet": ["IEC62196Type2CCS"],
            "minPowerKW": 50,
            "maxPowerKW": 150,
            "brandSet": ["Fastned"],
            "language": "nl-NL",
            "cursor": second_page(EvSearchInput, {"position": AMSTERDAM}),
        },
    },
    "tomtom-routing": {
        "answer": "route.json",
        "answer_on": {Backend.ORBIS: "route_v3.json"},  # Orbis Routing v3
        "baseline": {"locations": [AMSTERDAM, UTRECHT]},
        "samples": {
            "locations": [AMSTERDAM, UTRECHT, [13.405, 52.52]],
            "response_detail": "full",
            "show_ui": True,
            "routeType": "short",
            "travelMode": "truck",
            "traffic": "historical",
            "avoid": ["tollRoads"],
            "avoidAreas": AREAS,
            "departAt": "2026-12-01T08:00:00+01:00",
            "arriveAt": "2026-12-01T18:00:00+01:00",
            "maxAlternatives": 2,
            "vehicleHeading": 90,
            "vehicle": With(
                {
                    "weightKg": 18000,
                    "axleWeightKg": 9000,
                    "lengthM": 12.5,
                    "widthM": 2.55,
                    "heightM": 4,
                    "commercial": True,
                    "loadType": ["otherHazmatGeneral"],
                },
                also={"travelMode": "truck"},
            ),
        },
    },
    "tomtom-dynamic-map": {
        "answer": "route.json",
        "answer_on": {Backend.ORBIS: "route_v3.json"},  # Orbis Routing v3
        "baseline": {"routePlans": [{"locations": [AMSTERDAM, UTRECHT]}]},
        "samples": {
            "routePlans": [{"locations": [AMSTERDAM, [13.405, 52.52]], "routeType": "short", "avoid": ["ferries"]}],
            "markers": [{"position": AMSTERDAM, "label": "Dam"}],
            "lines": [{"coordinates": [AMSTERDAM, UTRECHT]}],
            "polygons": [{"coordinates": [AMSTERDAM, UTRECHT, [5.0, 52.5]]}],
            "bbox": BOX,
            "title": "Trip",
            "show_ui": False,
        },
    },
    "tomtom-traffic": {
        "answer": "traffic.json",
        "baseline": {"bbox": BOX},
        "samples": {
            "bbox": [4.85, 52.35, 4.9, 52.38],
            "response_detail": "full",
            "show_ui": True,
            "language": "nl-NL",
            "categoryFilter": ["jam"],
            "timeValidityFilter": ["future"],
            "maxResults": 1,
        },
    },
    "tomtom-area-search": {
        "answer": "poi_search.json",
        "baseline": {"query": "pharmacy", "center": AMSTERDAM, "radius": 1000},
        "samples": {
            "show_ui": True,
            "query": "apotheek",
            "response_detail": "full",
            "center": UTRECHT,
            "radius": 2000,
            "polygon": Instead([[4.88, 52.36], [4.92, 52.36], [4.9, 52.38]], of=("center", "radius")),
            "boundingBox": Instead(BOX, of=("center", "radius")),
            "limit": 3,
            "language": "nl-NL",
            "poiCategories": [7326],
            "brandSet": ["BENU"],
        },
    },
    "tomtom-search-along-route": {
        "answer": "along_route.json",  # one file answers both calls: the route, then the places along it
        "answer_on": {Backend.ORBIS: "route_v3_along.json"},  # the same, the route in Routing v3's words
        "baseline": {"origin": AMSTERDAM, "destination": UTRECHT, "query": "petrol station"},
        "samples": {
            "show_ui": True,
            "origin": [4.95, 52.3],
            "destination": [5.2, 52.1],
            "query": "cafe",
            "response_detail": "full",
            "maxDetourTime": 300,
            "limit": 5,
            "language": "nl-NL",
            "poiCategories": [7311],
            "brandSet": ["Shell"],
            "routeType": "short",
            "avoid": ["tollRoads"],
            "avoidAreas": AREAS,
        },
    },
    "tomtom-ev-routing": {
        "answer": "ev_route.json",
        "baseline": {"locations": [AMSTERDAM, [13.405, 52.52]], "maxChargeInkWh": 75, "currentChargeInkWh": 60},
        "samples": {
            "show_ui": True,
            "locations": [AMSTERDAM, UTRECHT, [13.405, 52.52]],
            "response_detail": "full",
            "maxChargeInkWh": 80,
            "currentChargeInkWh": 50,
            "minChargeAtDestinationInkWh": 10,
            "minChargeAtChargingStopsInkWh": 5,
            "consumption": [[50, 14], [100, 19]],
            "batteryCurve": [[0, 200], [60, 100]],
            "chargingConnectors": [{"currentType": "DC", "plugTypes": ["CHAdeMO"], "maxPowerInkW": 50}],
            "traffic": "historical",
            "avoid": ["ferries"],
            "avoidAreas": AREAS,
            "departAt": "2026-12-01T08:00:00+01:00",
        },
    },
    "tomtom-reachable-range": {
        "answer": "reachable_range.json",
        "baseline": {"origin": AMSTERDAM, "timeBudgetInSec": 1800},
        "samples": {
            "show_ui": True,
            "origin": UTRECHT,
            "response_detail": "full",
            "timeBudgetInSec": 3600,
            "distanceBudgetInMeters": Instead(20000, of=("timeBudgetInSec",)),
            "routeType": "short",
            "travelMode": "truck",
            "traffic": "historical",
            "avoid": ["tollRoads"],
            "avoidAreas": AREAS,
            "departAt": "2026-12-01T08:00:00+01:00",
        },
    },
    "tomtom-matrix-routing": {
        "answer": "matrix.json",
        "answer_on": {Backend.ORBIS: "route_v3.json"},  # Orbis: one Calculate Route (Routing v3) per pair
        "baseline": {"origins": [AMSTERDAM, UTRECHT], "destinations": [UTRECHT, AMSTERDAM]},
        "samples": {
            "origins": [UTRECHT, STOPS[2]],
            "destinations": [AMSTERDAM, STOPS[2]],
            "response_detail": "full",
            "departAt": "2026-12-01T08:00:00+01:00",
            "traffic": "historical",
            "travelMode": "truck",
            "avoid": ["unpavedRoads"],
        },
    },
    "tomtom-optimize-waypoints": {
        "answer": "optimize_any_call.json",  # one file answers the optimization and both routes
        "baseline": {"stops": STOPS},
        "samples": {
            "stops": [STOPS[1], STOPS[0], STOPS[2], STOPS[3]],
            "response_detail": "full",
            "show_ui": True,
            "first": STOPS[1],
            "last": STOPS[2],
            "departAt": "2026-12-01T08:00:00+01:00",
            "traffic": "historical",
            "travelMode": "truck",
            "serviceTimes": [0, 300, 300, 0],
            "timeWindows": With([{"stop": 1, "opens": "09:00", "closes": "12:00"}], also={"departAt": "now"}),
        },
    },
}

WAIVED_TOOLS: dict[str, str] = {
    "tomtom-data-viz": "draws the caller's GeoJSON; never calls TomTom (tests/widgets/test_data_viz.py)",
    "tomtom-get-app-data": "runs tomtom-data-viz again; never calls TomTom (tests/widgets/test_data_viz.py)",
    "tomtom-get-map-key": "answers from the call's key; never calls TomTom (tests/widgets/test_widget_tools.py)",
    "tomtom-report-app-status": "logs a widget's report; never calls TomTom (tests/widgets/test_widget_tools.py)",
}
"""Tools this test cannot check, with the reason."""

CONSUMED_BY_TOOL: dict[tuple[str, str], str] = {
    ("*", "response_detail"): "chooses how we shape TomTom's answer; never sent",
    ("*", "show_ui"): "asks for the widget (show_ui and app data in the result); never sent",
    ("tomtom-dynamic-map", "markers"): "drawn on the map and summarised; never sent",
    ("tomtom-dynamic-map", "lines"): "drawn on the map and counted; never sent",
    ("tomtom-dynamic-map", "polygons"): "drawn on the map and counted; never sent",
    ("tomtom-dynamic-map", "bbox"): "the map's view; never sent",
    ("tomtom-dynamic-map", "title"): "the map's title; never sent",
    ("tomtom-map-image", "markers"): "drawn on the picture and counted in its text; never sent",
    ("tomtom-map-image", "path"): "drawn on the picture and counted in its text; never sent",
    ("tomtom-map-image", "area"): "drawn on the picture and counted in its text; never sent",
    ("tomtom-traffic", "maxResults"): "caps the incidents we list, most severe first; TomTom has no such parameter",
    ("tomtom-poi-categories", "filters"): "picks categories out of TomTom's whole list; the endpoint takes no filter",
}
"""Inputs the tool consumes instead of sending: they must leave the request alone and change the answer."""

FULL_ASKS_MORE: dict[str, str] = {
    "tomtom-routing": "full asks for every section type; compact for traffic sections only",
    "tomtom-search-along-route": "full asks for every section type of the route",
    "tomtom-optimize-waypoints": "full asks for every section type of both routes",
    "tomtom-traffic": "full asks for every incident field; compact for the fields it lists",
}
"""Tools whose `response_detail: full` asks TomTom for more than compact needs: it reaches the request."""


MEANINGFUL_HEADERS = ("accept-language", "attributes", "tomtom-api-version")
"""Request headers that carry an input or a version (Orbis v2 sends the language in `Accept-Language`)."""


def consumed(tool: str, name: str) -> str | None:
    if name == "response_detail" and tool in FULL_ASKS_MORE:
        return None
    return CONSUMED_BY_TOOL.get((tool, name)) or CONSUMED_BY_TOOL.get(("*", name))


@cache
def catalog_inputs() -> dict[str, list[str]]:
    """Every registered tool's input names (on some backend)."""
    return {t.name: list(t.input_schema["properties"]) for t in build_dispatcher().registry}


@cache
def listed_inputs(backend: Backend) -> dict[str, list[str]]:
    """The input names each tool a backend serves lists there."""
    return {
        t.name: list(t.listing(backend, True).input_schema["properties"])
        for t in build_dispatcher().registry
        if t.serves(backend)
    }


def cases() -> list[Any]:
    found = []
    for backend in Backend:
        for tool, inputs in listed_inputs(backend).items():
            row = TOOLS.get(tool)
            if tool in WAIVED_TOOLS or row is None:
                continue
            for name in inputs:
                if name in row["samples"]:
                    found.append(pytest.param(tool, name, backend, id=f"{tool}.{name}@{backend.value}"))
    return found


def test_every_tool_and_input_has_a_sample():
    missing = []
    for tool, inputs in catalog_inputs().items():
        if tool in WAIVED_TOOLS:
            continue
        row = TOOLS.get(tool)
        if row is None:
            required = ", ".join(f'"{name}": ...' for name in inputs)
            missing.append(
                f'{tool} has no row. Add to TOOLS: "{tool}": {{"answer": "<a tests/data file TomTom answers '
                f'with>", "baseline": {{<its required inputs>}}, "samples": {{{required}}}}}, one sample per input '
                "that changes the TomTom request (or list the tool in WAIVED_TOOLS with the reason)."
            )
            continue
        for name in inputs:
            if name not in row["samples"]:
                missing.append(
                    f'{tool}.{name} has no sample. Add TOOLS["{tool}"]["samples"]["{name}"] = <a value that changes '
                    f'the TomTom request>; if the tool consumes it without sending it, also add ("{tool}", "{name}") '
                    "to CONSUMED_BY_TOOL with the reason."
                )
        stale = set(row["samples"]) - set(inputs)
        if stale:
            missing.append(f"{tool}: samples for inputs it does not have: {sorted(stale)}; remove them.")
    stale_rows = set(TOOLS) - set(catalog_inputs())
    if stale_rows:
        missing.append(f"TOOLS has rows for tools the dispatcher does not list: {sorted(stale_rows)}; remove them.")
    assert not missing, "\n".join(missing)


async def call(
    stub: TomTomStub, dispatcher: Dispatcher, context: CallContext, tool: str, arguments: dict[str, Any]
) -> tuple:
    """What `arguments` made us send TomTom (order-free), and the answer's text."""
    stub.requests.clear()
    outcome = await dispatcher.call(tool, arguments, context)
    assert not outcome.is_error, f"{tool} {arguments}: {outcome.text}"
    sent = sorted(
        (
            r.method,
            r.path,
            tuple(sorted((k, tuple(v)) for k, v in r.query.items() if k != "key")),
            tuple(r.headers.get(h, "") for h in MEANINGFUL_HEADERS),
            json.dumps(r.json(), sort_keys=True) if r.body else "",
        )
        for r in stub.requests
    )
    assert sent, f"{tool} {arguments}: sent nothing to TomTom"
    return sent, outcome.text


@pytest.mark.parametrize(("tool", "name", "backend"), cases())
async def test_input_reaches_the_request(stub, dispatcher, context, tool, name, backend):
    row = TOOLS[tool]
    if "image" in row:
        stub.route("GET", ".*", body=(DATA / row["image"]).read_bytes())
    else:
        answer, posted = data(row.get("answer_on", {}).get(backend, row["answer"])), row.get("answer_post", {})
        for method in ("GET", "POST"):
            stub.route(method, ".*", json_body=data(posted[method]) if method in posted else answer)
    context.backend = backend
    sample = row["samples"][name]
    base = dict(row["baseline"])
    replaced: tuple[str, ...] = ()
    if isinstance(sample, With):
        base, sample = {**base, **sample.also}, sample.value
    elif isinstance(sample, Instead):
        replaced, sample = sample.of, sample.value
    assert base.get(name) != sample, f"the sample for {tool}.{name} equals its baseline value"
    sent_before, text_before = await call(stub, dispatcher, context, tool, base)
    kept = {key: value for key, value in base.items() if key not in replaced}
    sent_after, text_after = await call(stub, dispatcher, context, tool, {**kept, name: sample})
    if why := consumed(tool, name):
        assert sent_after == sent_before, f"{tool}.{name} now reaches the request: remove it from CONSUMED_BY_TOOL"
        assert text_after != text_before, f"{tool}.{name} ({why}) changed neither request nor answer"
    else:
        assert sent_after != sent_before, f"{tool}.{name}={sample!r} did not change the request on {backend.value}"
