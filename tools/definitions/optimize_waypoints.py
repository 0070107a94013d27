"""tomtom-optimize-waypoints: the best order to visit up to 12 stops, and what it saves.

TomTom Maps only; three calls:
1. Waypoint Optimization, POST `/routing/waypointoptimization/1`, body `{"waypoints": [{"point":
   {latitude, longitude}, "serviceTimeInSeconds"?, "timeWindows"?: [{openingHour, closingHour}]}],
   "options": {travelMode, traffic, departAt?, waypointConstraints?: {originIndex?,
   destinationIndex?}}}`, answers `optimizedOrder` (indexes into `stops`).
2. and 3., together: Calculate Route through the stops in that order (each leg's time and
   distance, the line) and in the order given (the total to compare with).
TomTom documents Waypoint Optimization on TomTom Maps only (and its decommissioning on
2027-05-31): the tool is not listed on tomtom-orbis-maps, and a call there is `unsupported`,
naming the tools that order stops by hand (docs/adr/0023-listings-per-caller.md).

Compact: `order` (indexes into `stops`), one leg per hop `{from, to, time_s, distance_m,
delay_s}` (`from`/`to` index `stops`), `total`, `given_order` (the same totals in the order
given) and `saved` (given minus optimized). Geometry: the optimized route line `{"route": 0}`
and one Point per stop `{"stop": i, "visit": n}` (stop i is visited n-th, from 0). `full`:
`{"optimization", "route", "given_route"}`, TomTom's three answers.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from core.errors import ErrorCode, ToolError
from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions import routing
from tools.definitions.common import FULL, GEOMETRY, GeometryDetail, Position, ShowUi, answer
from tools.inputs import ToolInput, problem, rule
from tools.shaping.geometry import feature, route_line, with_geometry
from tools.shaping.routes import COMPACT_ROUTE_ANSWER
from tools.shaping.shape import INTEGER, Required, compile_spec, expect
from tools.tomtom.backends import Backend
from tools.tomtom.client import TomTomSession
from tools.widgets import MAP_APP_URI

PATH = "/routing/waypointoptimization/1"
MAX_STOPS = 12
"""TomTom's limit for one optimization, origin and destination included."""
MAX_SERVICE_S = 86_400
"""A day: TomTom plans time windows within 24 hours of the departure."""

ClockTime = Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]
"""HH:MM on a 24-hour clock (the pattern says it: listed bare)."""


class TimeWindow(ToolInput):
    """When one stop can be visited, in local time on the day of departure."""

    stop: int = Field(ge=0, le=MAX_STOPS - 1, description="Index into stops.")
    opens: ClockTime
    closes: ClockTime

    @model_validator(mode="after")
    def _ordered(self) -> TimeWindow:
        if self.closes <= self.opens:
            raise problem(f"ends ({self.closes}) before it starts ({self.opens})")
        return self


class OptimizeWaypointsInput(ToolInput):
    stops: list[Position] = Field(
        min_length=3,
        max_length=MAX_STOPS,
        description="[[lon, lat], ...].",
    )
    response_detail: GeometryDetail = "compact"
    show_ui: ShowUi = False
    first: Position | None = Field(None, description="Start here: one of stops.")
    last: Position | None = Field(None, description="End here: one of stops.")
    departAt: routing.DepartAt | None = None
    traffic: routing.TrafficMode = "live"
    travelMode: Literal["car", "truck"] = "car"
    serviceTimes: list[Annotated[int, Field(ge=0, le=MAX_SERVICE_S)]] | None = Field(
        None, max_length=MAX_STOPS, description="Seconds at each stop."
    )
    timeWindows: list[TimeWindow] | None = Field(None, min_length=1, max_length=2 * MAX_STOPS)

    @model_validator(mode="after")
    def _rules(self) -> OptimizeWaypointsInput:
        for name in ("first", "last"):
            position = getattr(self, name)
            if position is not None and position not in self.stops:
                raise problem(f"{position} is not one of stops; give a position from stops", item=name)
        if self.first is not None and self.first == self.last:
            raise rule("first", "last", message="the first and last stop must differ")
        if self.serviceTimes is not None and len(self.serviceTimes) != len(self.stops):
            raise problem(f"needs one value per stop ({len(self.stops)})", item="serviceTimes")
        for index, window in enumerate(self.timeWindows or ()):
            if window.stop >= len(self.stops):
                raise problem(
                    f"there are only {len(self.stops)} stops (0-{len(self.stops) - 1})",
                    item=("timeWindows", index, "stop"),
                )
        if self.timeWindows is not None and self.departAt is None:
            raise rule("timeWindows", "departAt", message="time windows need `departAt`, the day they are on")
        return self

    def index(self, position: list[float] | None) -> int | None:
        return None if position is None else self.stops.index(position)


def build_request(input: OptimizeWaypointsInput) -> tuple[str, dict[str, Any]]:
    """The path and JSON body of the optimization (TomTom Maps)."""
    windows: dict[int, list[dict[str, str]]] = {}
    for window in input.timeWindows or ():
        windows.setdefault(window.stop, []).append({"openingHour": window.opens, "closingHour": window.closes})
    waypoints = []
    for i, (lon, lat) in enumerate(input.stops):
        waypoint: dict[str, Any] = {"point": {"latitude": lat, "longitude": lon}}
        if input.serviceTimes is not None:
            waypoint["serviceTimeInSeconds"] = input.serviceTimes[i]
        if i in windows:
            waypoint["timeWindows"] = windows[i]
        waypoints.append(waypoint)
    options: dict[str, Any] = {"travelMode": input.travelMode, "traffic": input.traffic}
    if input.departAt is not None:
        options["departAt"] = input.departAt
    constraints = {
        key: index
        for key, index in (("originIndex", input.index(input.first)), ("destinationIndex", input.index(input.last)))
        if index is not None
    }
    if constraints:
        options["waypointConstraints"] = constraints
    return PATH, {"waypoints": waypoints, "options": options}


OPTIMIZATION_ANSWER = compile_spec({"optimizedOrder": Required([INTEGER])})
"""What is read of a Waypoint Optimization answer (tools.shaping.shape)."""


def optimized_order(body: dict[str, Any], stops: int) -> list[int]:
    """TomTom's `optimizedOrder`: whole numbers (`malformed` naming the first that is not), that
    visit every stop once."""
    expect(body, OPTIMIZATION_ANSWER)
    order: list[int] = body["optimizedOrder"]
    if sorted(order) != list(range(stops)):
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered without an order that visits every stop once.")
    return order


def _totals(summary: dict[str, Any]) -> dict[str, Any]:
    return {
        "time_s": summary.get("travelTimeInSeconds"),
        "distance_m": summary.get("lengthInMeters"),
        "delay_s": summary.get("trafficDelayInSeconds", 0),
    }


def _first_route(body: dict[str, Any]) -> dict[str, Any]:
    routes = body.get("routes")
    if not isinstance(routes, list) or not routes or not isinstance(routes[0], dict):
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered without a route.")
    return routes[0]


def compact_order(order: list[int], route: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """The order, each leg between consecutive stops of it, and the totals against the given order."""
    legs = route.get("legs") or []
    if len(legs) != len(order) - 1:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered a route whose legs do not match the stops.")
    total, given_total = _totals(route.get("summary") or {}), _totals(given.get("summary") or {})
    saved = {
        key: given_total[key] - total[key]
        for key in ("time_s", "distance_m")
        if isinstance(total[key], (int, float)) and isinstance(given_total[key], (int, float))
    }
    return {
        "order": order,
        "legs": [
            {"from": order[n], "to": order[n + 1], **_totals(leg.get("summary") or {})} for n, leg in enumerate(legs)
        ],
        "total": total,
        "given_order": given_total,
        "saved": saved,
    }


def features(order: list[int], stops: list[list[float]], route: dict[str, Any]) -> list[dict[str, Any]]:
    """The optimized line, then one Point per stop with where it comes in the order."""
    points = [
        feature({"type": "Point", "coordinates": stops[stop]}, {"stop": stop, "visit": visit})
        for visit, stop in enumerate(order)
    ]
    return [feature(route_line(route), {"route": 0}), *points]


async def _route(session: TomTomSession, input: OptimizeWaypointsInput, stops: list[list[float]]) -> dict[str, Any]:
    options = routing.RouteOptions(travelMode=input.travelMode, traffic=input.traffic)
    request = routing.build_request(
        stops, options, session.backend, departAt=input.departAt, full=input.response_detail == FULL
    )
    return await routing.calculate_route(session, request)


async def run(input: OptimizeWaypointsInput, context: CallContext) -> Answer:
    session = context.tomtom
    optimization = await session.post(*build_request(input))
    order = optimized_order(optimization, len(input.stops))
    route_body, given_body = await asyncio.gather(
        _route(session, input, [input.stops[i] for i in order]), _route(session, input, input.stops)
    )
    if input.response_detail == FULL:
        return answer(input, {"optimization": optimization, "route": route_body, "given_route": given_body}, route_body)
    expect(route_body, COMPACT_ROUTE_ANSWER, where="route")
    expect(given_body, COMPACT_ROUTE_ANSWER, where="given_route")
    route = _first_route(route_body)
    data = compact_order(order, route, _first_route(given_body))
    if input.response_detail == GEOMETRY:
        data = with_geometry(data, features(order, input.stops, route))
    return answer(input, data, route_body)


TOOL = define_tool(
    name="tomtom-optimize-waypoints",
    title="TomTom Waypoint Optimization",
    description=(
        f"The fastest order to visit 3-{MAX_STOPS} stops (fixed first or last, time windows, time at each): "
        "the order, legs, saving. A fixed order: tomtom-routing."
    ),
    unavailable_on={
        Backend.ORBIS: (
            "TomTom offers Waypoint Optimization on TomTom Maps only. To order stops here, compare travel times "
            "with tomtom-matrix-routing, then plan the order you choose with tomtom-routing."
        )
    },
    input=OptimizeWaypointsInput,
    run=run,
    widget=MAP_APP_URI,
)
