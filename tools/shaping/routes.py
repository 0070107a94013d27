"""Compact shape of a Calculate Route answer, in the shape both backends share.

TomTom Maps answers in that shape (Calculate Route v1: `legs[].points` of `{latitude,
longitude}`, `sections[]` with `sectionType`). Orbis Routing v3 answers in its own words; the
v3 decoders at the end of this module read it and give the same compact answer, or translate it
into the shared shape for everything else that reads routes.

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
always the reference's. (A v3 answer has no other reading: its typed decoder is the reading,
and `V3_ROUTE_ANSWER` only words a refusal the way every `malformed` answer is worded.)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import Annotated, Any, Literal

import msgspec
import numpy as np

from core.errors import ErrorCode, ToolError
from tools.shaping.points import lon_lat, pick
from tools.shaping.shape import ANY, INTEGER, NUMBER, POINTS, STRING, compile_spec, expect
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


# --- Orbis Calculate Route v3 ------------------------------------------------------------------
#
# Orbis Routing v3 answers the same route in other words: the summary renamed
# (`travelDurationInSeconds`, `trafficDelayDurationInSeconds`, `departureDateTime`, ...), each
# leg's line a GeoJSON LineString of [lon, lat] in `path`, and the sections an object keyed by
# type whose traffic items say `delayMagnitude` and `iconCategory` in words and count vertices
# along the route's path (`startPathIndex`). `decode_compact_routes_v3` shapes such a body into
# the compact answer tomtom-routing gives on every backend (`decode_routes_and_lines_v3` adds each
# route's line, for `geometry`); `decode_shared_routes` translates it
# into the shape both backends share (`routes[].legs[].points`, `sections[]` with `sectionType`),
# for the route line, search along route, the composed matrix and the widget. A body that is not
# JSON, or not this shape, is `malformed`: there is no other reading of a v3 answer to fall back on.

V3_SUMMARY_NAMES = {
    "lengthInMeters": "lengthInMeters",
    "travelDurationInSeconds": "travelTimeInSeconds",
    "trafficDelayDurationInSeconds": "trafficDelayInSeconds",
    "trafficLengthInMeters": "trafficLengthInMeters",
    "departureDateTime": "departureTime",
    "arrivalDateTime": "arrivalTime",
    "noTrafficTravelTimeInSeconds": "noTrafficTravelTimeInSeconds",
    "historicTrafficTravelTimeInSeconds": "historicTrafficTravelTimeInSeconds",
    "liveTrafficIncidentsTravelTimeInSeconds": "liveTrafficIncidentsTravelTimeInSeconds",
    "batteryConsumptionInkWh": "batteryConsumptionInkWh",
    "fuelConsumptionInLiters": "fuelConsumptionInLiters",
}
"""Each v3 summary member and its name in the shared shape (v2's), in the shared order."""
_V3_KEPT = tuple((v3, shared) for v3, shared in V3_SUMMARY_NAMES.items() if shared in SUMMARY_KEPT)
V3_DELAY_MAGNITUDES = {"unknown": 0, "minor": 1, "moderate": 2, "major": 3, "undefined": 4}
"""v3's `delayMagnitude` words as the shared `magnitudeOfDelay` numbers (4: no end known, a closure)."""
V3_TRAFFIC_CATEGORIES = {"jam": "JAM", "roadWorks": "ROAD_WORK", "roadClosed": "ROAD_CLOSURE"}
"""v3's `iconCategory` as the shared `simpleCategory`; any other incident category is `OTHER`."""

_Lon = Annotated[float, msgspec.Meta(ge=-180.0, le=180.0)]
_Lat = Annotated[float, msgspec.Meta(ge=-90.0, le=90.0)]
_Position = tuple[_Lon, _Lat]
_Index = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


class _V3Summary(msgspec.Struct, gc=False):
    lengthInMeters: _Number = None
    travelDurationInSeconds: _Number = None
    trafficDelayDurationInSeconds: _Number = None
    trafficLengthInMeters: _Number = None
    departureDateTime: str | None = None
    arrivalDateTime: str | None = None
    noTrafficTravelTimeInSeconds: _Number = None
    historicTrafficTravelTimeInSeconds: _Number = None
    liveTrafficIncidentsTravelTimeInSeconds: _Number = None
    batteryConsumptionInkWh: _Number = None
    fuelConsumptionInLiters: _Number = None


class _V3Path(msgspec.Struct, gc=False):
    """A leg's line: GeoJSON, every position [lon, lat] in range."""

    type: Literal["LineString"]
    coordinates: list[_Position]


class _V3CompactPath(msgspec.Struct, gc=False):
    """A leg's line as compact reads it: positions located (`Raw`), its two ends decoded."""

    type: Literal["LineString"]
    coordinates: list[msgspec.Raw]


class _V3Traffic(msgspec.Struct, gc=False):
    startPathIndex: _Index | None = None
    endPathIndex: _Index | None = None
    effectiveSpeedInKilometersPerHour: _Number = None
    delayDurationInSeconds: _Number = None
    delayMagnitude: str | None = None
    iconCategory: str | None = None


class _V3Sections(msgspec.Struct, gc=False):
    """Sections by type; only traffic is read (the others are skipped unread)."""

    traffic: list[_V3Traffic] | None = None


class _V3Leg(msgspec.Struct, gc=False):
    summary: _V3Summary | None = None
    path: _V3Path | None = None


class _V3CompactLeg(msgspec.Struct, gc=False):
    summary: _V3Summary | None = None
    path: _V3CompactPath | None = None


class _V3Route(msgspec.Struct):
    summary: _V3Summary | None = None
    legs: list[_V3Leg] | None = None
    sections: _V3Sections | None = None


class _V3CompactRoute(msgspec.Struct):
    summary: _V3Summary | None = None
    legs: list[_V3CompactLeg] | None = None
    sections: _V3Sections | None = None


class _V3Answer(msgspec.Struct):
    routes: list[_V3Route] | None = None


class _V3CompactAnswer(msgspec.Struct):
    routes: list[_V3CompactRoute] | None = None


_V3_DECODER = msgspec.json.Decoder(_V3Answer)
_V3_COMPACT_DECODER = msgspec.json.Decoder(_V3CompactAnswer)
_V3_POSITION_DECODER = msgspec.json.Decoder(_Position)


_V3_SUMMARY_SPEC = {name: STRING if name.endswith("DateTime") else NUMBER for name in V3_SUMMARY_NAMES}
_V3_TRAFFIC_SPEC = {
    "startPathIndex": INTEGER,
    "endPathIndex": INTEGER,
    "effectiveSpeedInKilometersPerHour": NUMBER,
    "delayDurationInSeconds": NUMBER,
    "delayMagnitude": STRING,
    "iconCategory": STRING,
}
V3_ROUTE_ANSWER = compile_spec(
    {
        "routes": [
            {
                "summary": _V3_SUMMARY_SPEC,
                "legs": [{"summary": _V3_SUMMARY_SPEC, "path": {"type": STRING, "coordinates": [[NUMBER]]}}],
                "sections": {"traffic": [_V3_TRAFFIC_SPEC]},
            }
        ]
    }
)
"""What the v3 decoders read, as a shape spec: it words the `malformed` answer for a body they refuse."""
_AT = re.compile(r"(?P<what>.*) - at `\$\.?(?P<path>.*)`")


def _unreadable(content: bytes, error: msgspec.MsgspecError) -> ToolError:
    """`malformed` for a v3 body the typed decoder refused, naming the place in the words every
    tool uses (`expect`); what the spec allows but the decoder does not (a position out of range
    or with a third number, a line that is not a LineString, an index past int64) is named by
    the decoder's own path."""
    expect(json_object(content), V3_ROUTE_ANSWER)
    try:  # a leg's end is decoded on its own by compact: the whole answer's decoder names its path
        _V3_DECODER.decode(content)
    except msgspec.MsgspecError as whole:
        error = whole
    found = _AT.fullmatch(str(error))
    place = f"`{found['path']}` does not match (expected {found['what'][9:]})" if found else str(error)
    return ToolError(ErrorCode.MALFORMED, f"TomTom answered with data we cannot read: {place}.")


def _v3_summary(summary: _V3Summary | None) -> dict[str, Any]:
    """The compact summary (`SUMMARY_KEPT`, shared names and order) of a v3 summary."""
    if summary is None:
        return {}
    return {shared: value for v3, shared in _V3_KEPT if (value := getattr(summary, v3)) not in _EMPTY}


def _v3_traffic(section: _V3Traffic) -> dict[str, Any]:
    """A compact traffic item (`TRAFFIC_SECTION_KEPT`) of a v3 traffic section."""
    category = None if section.iconCategory is None else V3_TRAFFIC_CATEGORIES.get(section.iconCategory, "OTHER")
    magnitude = None if section.delayMagnitude is None else V3_DELAY_MAGNITUDES.get(section.delayMagnitude)
    values = (category, magnitude, section.delayDurationInSeconds, section.effectiveSpeedInKilometersPerHour)
    return {key: value for key, value in zip(TRAFFIC_SECTION_KEPT, values, strict=True) if value not in _EMPTY}


def _v3_end(position: msgspec.Raw | tuple[float, float]) -> list[float]:
    """`lon_lat` of a v3 position, decoded here when only located (`Raw`)."""
    lon, lat = _V3_POSITION_DECODER.decode(position) if isinstance(position, msgspec.Raw) else position
    return [round(lon, 5), round(lat, 5)]


def _compact_v3(route: _V3CompactRoute | _V3Route) -> dict[str, Any]:
    """`compact_route` of a v3 route: the same keys, order and values a v2 answer gives."""
    legs: list[Any] = list(route.legs or [])
    lines: list[list[Any]] = [leg.path.coordinates if leg.path is not None else [] for leg in legs]
    if not legs or not all(lines):
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with a route without points.")
    item: dict[str, Any] = {
        "summary": _v3_summary(route.summary),
        "start": _v3_end(lines[0][0]),
        "end": _v3_end(lines[-1][-1]),
    }
    if len(legs) > 1:
        item["legs"] = [
            {"summary": _v3_summary(leg.summary), "start": _v3_end(line[0]), "end": _v3_end(line[-1])}
            for leg, line in zip(legs, lines, strict=True)
        ]
    sections = route.sections.traffic if route.sections is not None else None
    traffic = [_v3_traffic(section) for section in sections or []]
    if traffic:
        item["traffic"] = traffic
    return item


def decode_compact_routes_v3(content: bytes) -> dict[str, Any]:
    """The compact answer of an Orbis v3 Calculate Route body, reading of each leg's line only
    its two ends (ADR 18's budget: the rest of the line is located, never decoded)."""
    try:
        routes = _V3_COMPACT_DECODER.decode(content).routes or []
        if not routes:
            raise ToolError(ErrorCode.MALFORMED, "TomTom answered without a route.")
        return {"routes": [_compact_v3(route) for route in routes]}
    except msgspec.MsgspecError as error:
        raise _unreadable(content, error) from None


def joined_line(legs: Iterable[np.ndarray]) -> np.ndarray:
    """A route's whole line from its legs' (n, 2) [lon, lat] arrays, the point where one leg ends
    and the next begins kept once; `malformed` under two points (both backends' answers)."""
    parts: list[np.ndarray] = []
    for xy in legs:
        if parts and len(xy) and (xy[0] == parts[-1][-1]).all():
            xy = xy[1:]
        if len(xy):
            parts.append(xy)
    if sum(len(part) for part in parts) < 2:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with a route line of fewer than two points.")
    return np.concatenate(parts)


def _v3_line(route: _V3Route) -> np.ndarray:
    """A v3 route's whole line, (n, 2) [lon, lat] (`joined_line` of its legs' paths)."""
    return joined_line(
        np.asarray(leg.path.coordinates if leg.path is not None else [], dtype=np.float64).reshape(-1, 2)
        for leg in route.legs or []
    )


def decode_routes_and_lines_v3(content: bytes) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The compact answer of an Orbis v3 body and each route's whole line, from one typed
    decoding (for `geometry`: the same answer the translation would give, without building a
    dict per point)."""
    try:
        routes = _V3_DECODER.decode(content).routes or []
    except msgspec.MsgspecError as error:
        raise _unreadable(content, error) from None
    if not routes:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered without a route.")
    return {"routes": [_compact_v3(route) for route in routes]}, [_v3_line(route) for route in routes]


def _shared_summary(summary: _V3Summary) -> dict[str, Any]:
    return {shared: value for v3, shared in V3_SUMMARY_NAMES.items() if (value := getattr(summary, v3)) is not None}


def _shared_traffic(section: _V3Traffic) -> dict[str, Any]:
    item: dict[str, Any] = {"sectionType": "TRAFFIC"}
    if section.startPathIndex is not None:
        item["startPointIndex"] = section.startPathIndex
    if section.endPathIndex is not None:
        item["endPointIndex"] = section.endPathIndex
    return {**item, **_v3_traffic(section)}


def _shared_route(route: _V3Route) -> dict[str, Any]:
    """A v3 route in the shared shape: points as `{latitude, longitude}`, traffic sections as a
    list with `sectionType`; path indexes kept as point indexes (both count along the route's
    joined line)."""
    item: dict[str, Any] = {}
    if route.summary is not None:
        item["summary"] = _shared_summary(route.summary)
    if route.legs is not None:
        legs = []
        for leg in route.legs:
            entry: dict[str, Any] = {}
            if leg.summary is not None:
                entry["summary"] = _shared_summary(leg.summary)
            if leg.path is not None:
                entry["points"] = [{"latitude": lat, "longitude": lon} for lon, lat in leg.path.coordinates]
            legs.append(entry)
        item["legs"] = legs
    if route.sections is not None and route.sections.traffic:
        item["sections"] = [_shared_traffic(section) for section in route.sections.traffic]
    return item


def decode_shared_routes(content: bytes) -> dict[str, Any]:
    """An Orbis v3 Calculate Route body in the shape both backends share (`{"routes": [...]}`),
    every position checked; `malformed` when it is not a v3 answer."""
    try:
        routes = _V3_DECODER.decode(content).routes or []
    except msgspec.MsgspecError as error:
        raise _unreadable(content, error) from None
    return {"routes": [_shared_route(route) for route in routes]}


def decode_v3_with_shared(content: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """TomTom's own v3 answer (for `full`) and its shared-shape translation (for shaping and the
    widget), from one body; `malformed` when either reading fails."""
    return json_object(content), decode_shared_routes(content)
