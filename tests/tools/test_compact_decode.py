"""The typed decoders of routing answer what the reference shaping answers, on any body.

`decode_compact_routes(bytes)` must equal `compact_routes(json_object(bytes))`, and
`decode_route_geometry(bytes)` the geometry answer shaped from the whole object: the same
answer, or a `ToolError` with the same code and message (tools/shaping/routes.py, geometry.py).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ToolError
from tests.conftest import data
from tools.shaping.geometry import decode_route_geometry, route_features, with_geometry
from tools.shaping.routes import SUMMARY_KEPT, compact_routes, decode_compact_routes
from tools.tomtom.client import json_object


def reference(content: bytes) -> Any:
    try:
        return compact_routes(json_object(content))
    except ToolError as error:
        return (error.code, str(error))


def typed(content: bytes) -> Any:
    try:
        return decode_compact_routes(content)
    except ToolError as error:
        return (error.code, str(error))


def reference_geometry(content: bytes) -> Any:
    try:
        body = json_object(content)
        return with_geometry(compact_routes(body), route_features(body))
    except ToolError as error:
        return (error.code, str(error))


def typed_geometry(content: bytes) -> Any:
    try:
        return decode_route_geometry(content)
    except ToolError as error:
        return (error.code, str(error))


def test_the_recorded_route_decodes_to_the_reference_answer():
    content = orjson.dumps(data("route.json"))
    assert typed(content) == reference(content)
    assert typed_geometry(content) == reference_geometry(content)
    assert typed(content)["routes"][0]["traffic"]  # the sections were read, not skipped


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "2026-12-01T08:30:00+01:00", "TRAFFIC", "JAM"]),
    st.just([]),
    st.just({}),
)
coordinate = st.one_of(st.floats(-200, 200), st.integers(-200, 200), st.none(), st.just("4.9"))
point = st.one_of(
    st.fixed_dictionaries({"latitude": st.floats(-90, 90), "longitude": st.floats(-180, 180)}),
    st.fixed_dictionaries({"latitude": coordinate, "longitude": coordinate}),
    st.fixed_dictionaries({"latitude": st.floats(-90, 90)}),
    st.none(),
)
summary = st.one_of(st.dictionaries(st.sampled_from([*SUMMARY_KEPT, "other"]), scalars), scalars)
leg = st.fixed_dictionaries({"summary": summary, "points": st.one_of(st.lists(point, max_size=4), scalars)})
section = st.one_of(
    st.dictionaries(
        st.sampled_from(["sectionType", "simpleCategory", "magnitudeOfDelay", "delayInSeconds", "effectiveSpeedInKmh"]),
        scalars,
    ),
    scalars,
)
route = st.one_of(
    st.fixed_dictionaries(
        {"summary": summary, "legs": st.one_of(st.lists(leg, max_size=3), scalars)},
        optional={"sections": st.one_of(st.lists(section, max_size=3), scalars)},
    ),
    scalars,
)
body = st.one_of(
    st.fixed_dictionaries({"routes": st.one_of(st.lists(route, max_size=3), scalars)}, optional={"x": scalars}),
    scalars,
)


@settings(max_examples=400, deadline=None)
@given(body)
def test_any_body_decodes_as_the_reference_shapes_it(value):
    content = json.dumps(value).encode()  # json: integers beyond 64 bits too
    assert typed(content) == reference(content)
    assert typed_geometry(content) == reference_geometry(content)


@pytest.mark.parametrize(
    "content",
    [b"", b"not json", b"[1, 2]", b'{"routes": [{"legs": [{"points": [{"latitude": 1e999, "longitude": 0}]}]}]}'],
)
def test_bodies_orjson_refuses_are_refused_alike(content):
    assert typed(content) == reference(content)
    assert typed_geometry(content) == reference_geometry(content)


def test_a_long_route_line_is_capped_alike():
    body = copy.deepcopy(data("route.json"))
    leg = body["routes"][0]["legs"][0]
    leg["points"] = [{"latitude": 52 + i * 1e-4, "longitude": 4.9 + (i % 7) * 1e-4} for i in range(3000)]
    content = orjson.dumps(body)
    answer = typed_geometry(content)
    assert answer == reference_geometry(content)
    assert answer["geometry"]["features"][0]["properties"]["simplification"]["points"] == 1000


def test_a_valid_route_with_huge_numbers_keeps_the_reference_values():
    body = copy.deepcopy(data("route.json"))
    body["routes"][0]["summary"]["lengthInMeters"] = 2**64 - 1  # an int orjson keeps, beyond int64
    body["routes"][0]["summary"]["travelTimeInSeconds"] = 1.5e300
    content = orjson.dumps(body)
    assert typed(content) == reference(content)
    assert typed(content)["routes"][0]["summary"]["lengthInMeters"] == 2**64 - 1


def test_compact_reads_only_the_ends_of_the_line_and_geometry_reads_it_all():
    body = copy.deepcopy(data("route.json"))
    points = body["routes"][0]["legs"][0]["points"]
    points[len(points) // 2] = {"latitude": "not a number", "longitude": 400}
    content = orjson.dumps(body)
    answer = typed(content)
    assert answer == reference(content)
    assert answer["routes"][0]["start"] == [round(points[0]["longitude"], 5), round(points[0]["latitude"], 5)]
    code, message = typed_geometry(content)
    assert (code, message) == reference_geometry(content)
    assert code == "malformed" and "points" in message


@pytest.mark.parametrize("end", [0, -1])
def test_an_unreadable_end_of_the_line_is_malformed_alike(end):
    body = copy.deepcopy(data("route.json"))
    body["routes"][0]["legs"][0]["points"][end] = {"latitude": 91, "longitude": 4.9}
    content = orjson.dumps(body)
    assert typed(content) == reference(content) == ("malformed", "TomTom answered with a position outside the world.")
