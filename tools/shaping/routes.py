"""Compact shape of a Calculate Route answer (both backends answer the same REST shape).

Per route: the summary (length, time, traffic delay, departure and arrival), the point
coordinates of its start and end (always), one summary per leg when there are several, and the
traffic sections that explain delays. Dropped: the line's points, guidance, vertex indexes.
Compact reads of each leg's points only the first and the last, so only those must be readable
positions (`COMPACT_ROUTE_ANSWER`); the line itself is checked point by point where it is
drawn (`ROUTE`, tools.shaping.geometry).

`compact_routes(body)` shapes TomTom's whole decoded answer. `decode_compact_routes(content)`
gives the same result straight from the body's bytes, for a call that needs nothing else: a
typed decoder (msgspec) reads only the members compact uses into small structs and skips the
rest without building it (a long route's guidance, sections and point indexes). A leg's points
are located but not decoded (`msgspec.Raw` each); its two ends are then decoded as two numbers
each. `typed_routes`, for the drawn line, decodes every point. Whenever a typed decoder refuses
a body (a wrong shape, a value out of its stricter ranges, not JSON), the body is decoded in
full and shaped by `compact_routes`, so what the caller sees, answer or `malformed` message, is
always the reference's.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import msgspec

from core.errors import ErrorCode, ToolError
from tools.shaping.points import lon_lat, pick
from tools.shaping.shape import ANY, NUMBER, POINTS, STRING, compile_spec, expect
from tools.tomtom.client import json_object

SUMMARY_KEPT = (
    "lengthInMeters",
    "travelTimeInSeconds",
    "trafficDelayInSeconds",
    "trafficLengthInMeters",
    "departureTime",
    "arrivalTime",
    "batteryConsumptionInkWh",
    "fuelConsumptionInLiters",
)
TRAFFIC_SECTION_KEPT = ("simpleCategory", "magnitudeOfDelay", "delayInSeconds", "effectiveSpeedInKmh")

SUMMARY = {key: STRING if key.endswith("Time") else NUMBER for key in SUMMARY_KEPT}
LEG = {"summary": SUMMARY, "points": POINTS}
SECTION = {key: NUMBER for key in ("delayInSeconds", "effectiveSpeedInKmh", "magnitudeOfDelay")}
ROUTE_SPEC = {"summary": SUMMARY, "legs": [LEG], "sections": [SECTION]}
"""What shaping reads of one route, its line included (tools.shaping.shape); `ev_routes` extends it."""
ROUTE = compile_spec(ROUTE_SPEC)
ROUTE_ANSWER = compile_spec({"routes": [ROUTE]})
"""A Calculate Route answer as the line's shaping reads it: every point a finite position."""
COMPACT_ROUTE_ANSWER = compile_spec({"routes": [{**ROUTE_SPEC, "legs": [{"summary": SUMMARY, "points": [ANY]}]}]})
"""A Calculate Route answer as compact reads it: the points of a leg a list (its ends are read
by `lon_lat`, which refuses a position it cannot read)."""


def route_points(route: dict[str, Any]) -> list[dict[str, Any]]:
    """All points of a route, legs concatenated, as TomTom sent them (`malformed` unless the
    route has the shape of `ROUTE`: every point with finite `latitude` and `longitude`)."""
    expect(route, ROUTE, where="route")
    return [p for leg in route.get("legs") or [] for p in leg.get("points") or []]


def compact_route(route: dict[str, Any]) -> dict[str, Any]:
    legs = route.get("legs") or []
    if not legs or not all(leg.get("points") for leg in legs):  # every leg's ends are read
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with a route without points.")
    item: dict[str, Any] = {
        "summary": pick(route.get("summary") or {}, SUMMARY_KEPT),
        "start": lon_lat(legs[0]["points"][0]),
        "end": lon_lat(legs[-1]["points"][-1]),
    }
    if len(legs) > 1:
        item["legs"] = [
            {
                "summary": pick(leg.get("summary") or {}, SUMMARY_KEPT),
                "start": lon_lat(leg["points"][0]),
                "end": lon_lat(leg["points"][-1]),
            }
            for leg in legs
        ]
    traffic = [
        pick(section, TRAFFIC_SECTION_KEPT)
        for section in route.get("sections") or []
        if section.get("sectionType") == "TRAFFIC"
    ]
    if traffic:
        item["traffic"] = traffic
    return item


def compact_routes(body: dict[str, Any]) -> dict[str, Any]:
    expect(body, COMPACT_ROUTE_ANSWER)
    routes = body.get("routes")
    if not isinstance(routes, list) or not routes:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered without a route.")
    return {"routes": [compact_route(route) for route in routes]}


# --- typed decoding of a compact answer ------------------------------------------------------

# The typed fields accept a subset of what the spec accepts, decoded to the same Python values
# as orjson would (ints within int64 stay ints, finite floats stay floats); anything else
# makes the typed decoder refuse the body, and the reference path decides.
_Int = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
_Float = Annotated[float, msgspec.Meta(ge=-sys.float_info.max, le=sys.float_info.max)]
_Number = _Int | _Float | None


class TypedPoint(msgspec.Struct, gc=False):
    """A route point, both coordinates in range."""

    latitude: Annotated[float, msgspec.Meta(ge=-90.0, le=90.0)]
    longitude: Annotated[float, msgspec.Meta(ge=-180.0, le=180.0)]


class _Summary(msgspec.Struct, gc=False):
    lengthInMeters: _Number = None
    travelTimeInSeconds: _Number = None
    trafficDelayInSeconds: _Number = None
    trafficLengthInMeters: _Number = None
    departureTime: str | None = None
    arrivalTime: str | None = None
    batteryConsumptionInkWh: _Number = None
    fuelConsumptionInLiters: _Number = None


class TypedLeg(msgspec.Struct, gc=False):
    summary: _Summary | None = None
    points: list[TypedPoint] | None = None


class _Section(msgspec.Struct):
    sectionType: Any = None
    simpleCategory: Any = None
    magnitudeOfDelay: _Number = None
    delayInSeconds: _Number = None
    effectiveSpeedInKmh: _Number = None


class TypedRoute(msgspec.Struct):
    """A route as compact and the route line read it (other members are skipped unread)."""

    summary: _Summary | None = None
    legs: list[TypedLeg] | None = None
    sections: list[_Section] | None = None


class _Answer(msgspec.Struct):
    routes: list[TypedRoute] | None = None


class _CompactLeg(msgspec.Struct, gc=False):
    summary: _Summary | None = None
    points: list[msgspec.Raw] | None = None


class _CompactRoute(msgspec.Struct):
    """A route as compact reads it: each point only located (`Raw`), never decoded."""

    summary: _Summary | None = None
    legs: list[_CompactLeg] | None = None
    sections: list[_Section] | None = None


class _CompactAnswer(msgspec.Struct):
    routes: list[_CompactRoute] | None = None


_DECODER = msgspec.json.Decoder(_Answer)
_COMPACT_DECODER = msgspec.json.Decoder(_CompactAnswer)
_POINT_DECODER = msgspec.json.Decoder(TypedPoint)
_EMPTY: tuple[Any, ...] = (None, "", [], {})


def _picked(source: msgspec.Struct | None, keys: tuple[str, ...]) -> dict[str, Any]:
    """`pick` for a struct: the listed fields that carry a value, in `keys` order."""
    if source is None:
        return {}
    return {key: value for key in keys if (value := getattr(source, key)) not in _EMPTY}


def _end(point: TypedPoint | msgspec.Raw) -> list[float]:
    """`lon_lat` of a typed point, or of a located one (decoded here; `msgspec.ValidationError`
    when it is not a position in range, and the caller takes the reference path)."""
    if isinstance(point, msgspec.Raw):
        point = _POINT_DECODER.decode(point)
    return [round(point.longitude, 5), round(point.latitude, 5)]


def _compact_typed(route: TypedRoute | _CompactRoute) -> dict[str, Any]:
    """`compact_route` of a typed route (same keys, same order, same values)."""
    legs = route.legs or []
    if not legs or not all(leg.points for leg in legs):
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with a route without points.")
    item: dict[str, Any] = {
        "summary": _picked(route.summary, SUMMARY_KEPT),
        "start": _end(legs[0].points[0]),  # type: ignore[index]
        "end": _end(legs[-1].points[-1]),  # type: ignore[index]
    }
    if len(legs) > 1:
        item["legs"] = [
            {
                "summary": _picked(leg.summary, SUMMARY_KEPT),
                "start": _end(leg.points[0]),  # type: ignore[index]
                "end": _end(leg.points[-1]),  # type: ignore[index]
            }
            for leg in legs
        ]
    traffic = [_picked(s, TRAFFIC_SECTION_KEPT) for s in route.sections or [] if s.sectionType == "TRAFFIC"]
    if traffic:
        item["traffic"] = traffic
    return item


def typed_routes(content: bytes) -> list[TypedRoute] | None:
    """The routes of a Calculate Route body as typed structs (only what compact and the route
    line read, every point in range), or None when the typed decoder refuses the body: the
    caller then takes the reference path, `json_object` and the dict shaping."""
    try:
        return _DECODER.decode(content).routes or []
    except msgspec.MsgspecError:
        return None


def compact_typed_routes(routes: list[TypedRoute] | list[_CompactRoute]) -> dict[str, Any]:
    """`compact_routes` of typed routes (same answer, same errors)."""
    if not routes:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered without a route.")
    return {"routes": [_compact_typed(route) for route in routes]}


def decode_compact_routes(content: bytes) -> dict[str, Any]:
    """`compact_routes(json_object(content))`, without decoding what compact drops (see the
    module docstring); a body the typed decoder refuses takes that reference path."""
    try:
        routes = _COMPACT_DECODER.decode(content).routes or []
        return compact_typed_routes(routes)
    except msgspec.MsgspecError:
        return compact_routes(json_object(content))
