"""tomtom-reachable-range: the area reachable from a point within one time or distance budget.

Orbis: GET `/maps/orbis/routing/calculateReachableRange/{lat},{lon}/json?apiVersion=2`, TomTom's
public preview (Orbis Routing v3 has Calculate Route only; the listing says so on Orbis); TomTom
Maps: GET `/routing/1/calculateReachableRange/{lat},{lon}/json`. Exactly one budget is sent:
`timeBudgetInSec` or `distanceBudgetInMeters` (none, or both, is an error naming both). Energy
and fuel budgets need a vehicle consumption model, which this tool does not take, so it does
not offer them. Route type, traffic, avoid, avoidAreas and departure time mean what they mean
in tomtom-routing and travel the same way on each backend (with avoidAreas the call is a POST
whose body holds the rectangles).

The budget is also the join key between compact and geometry: `budget_min` (the time budget in
minutes) or `budget_km` (the distance budget in kilometres).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import GeometryDetail, Position, ShowUi, answer
from tools.definitions.routing import (
    ORBIS_CARS_ONLY,
    ORBIS_PREVIEW,
    AvoidAreas,
    DepartAt,
    RouteOptions,
    RouteType,
    TrafficMode,
    calculate,
    routing_service,
)
from tools.inputs import UNIQUE, ToolInput, exactly_one, listed_by_example
from tools.shaping.geometry import with_geometry
from tools.shaping.points import lat_lon_text
from tools.shaping.reachable import Budget, compact_range, range_features
from tools.tomtom.backends import Backend
from tools.widgets import MAP_APP_URI

BUDGETS = ("timeBudgetInSec", "distanceBudgetInMeters")
MAX_TIME_BUDGET = 86_400
"""Seconds: a day of travel, far beyond any range worth drawing."""
MAX_DISTANCE_BUDGET = 2_000_000
"""Metres: 2000 km, about a day of driving."""
RangeAvoidOption = Literal[
    "tollRoads",
    "motorways",
    "ferries",
    "unpavedRoads",
    "carpools",
    "borderCrossings",
    "tunnels",
    "carTrains",
    "lowEmissionZones",
]
"""tomtom-routing's `avoid` values but `alreadyUsedRoads`, which needs a route to have used them."""


class ReachableRangeInput(ToolInput):
    origin: Position = Field(description="Start, [lon, lat].")
    response_detail: GeometryDetail = "compact"
    show_ui: ShowUi = False
    timeBudgetInSec: int | None = Field(
        None,
        ge=1,
        le=MAX_TIME_BUDGET,
        description="Seconds; or distanceBudgetInMeters.",
    )
    distanceBudgetInMeters: int | None = Field(None, ge=1, le=MAX_DISTANCE_BUDGET, description="Or metres.")
    routeType: RouteType = "fast"
    travelMode: Annotated[Literal["car", "truck"], ORBIS_CARS_ONLY] = "car"
    traffic: TrafficMode = "live"
    avoid: (
        Annotated[
            list[Annotated[RangeAvoidOption, listed_by_example(RangeAvoidOption, "tollRoads", "motorways", "ferries")]],
            Field(max_length=9),
            UNIQUE,
        ]
        | None
    ) = None
    avoidAreas: AvoidAreas | None = None
    departAt: DepartAt | None = None

    @model_validator(mode="after")
    def _one_budget(self) -> ReachableRangeInput:
        exactly_one(self, *BUDGETS, what="budget, time or distance")
        return self

    def route_options(self) -> RouteOptions:
        """Route type, travel mode and traffic, as every Routing API service takes them."""
        return RouteOptions(routeType=self.routeType, travelMode=self.travelMode, traffic=self.traffic)


def budget(input: ReachableRangeInput) -> Budget:
    """The one budget given, as its join key: seconds become `budget_min`, metres `budget_km`."""
    if input.timeBudgetInSec is not None:
        return {"budget_min": _whole(input.timeBudgetInSec / 60)}
    assert input.distanceBudgetInMeters is not None  # the model holds exactly one budget
    return {"budget_km": _whole(input.distanceBudgetInMeters / 1000)}


def _whole(value: float) -> int | float:
    rounded = round(value, 3)
    return int(rounded) if rounded.is_integer() else rounded


def build_request(input: ReachableRangeInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    origin = lat_lon_text(input.origin)
    path, params = routing_service("calculateReachableRange", origin, input.route_options(), backend)
    for name in (*BUDGETS, "departAt"):
        if (value := getattr(input, name)) is not None:
            params[name] = value
    if input.avoid is not None:
        params["avoid"] = list(input.avoid)
    return path, params


async def run(input: ReachableRangeInput, context: CallContext) -> Answer:
    """The widget draws each range TomTom answered as a ring labelled by its budget, and the
    origin as given: `{"origin": [lon, lat], "ranges": [{"budget": {...}, "range": <answer>}]}`."""
    session = context.tomtom
    body = await calculate(session, *build_request(input, session.backend), input.avoidAreas)
    key = budget(input)
    match input.response_detail:
        case "full":
            data = body
        case "geometry":
            data = with_geometry(compact_range(body, key), range_features(body, key))
        case _:
            data = compact_range(body, key)
    return answer(input, data, {"origin": input.origin, "ranges": [{"budget": key, "range": body}]})


TOOL = define_tool(
    name="tomtom-reachable-range",
    title="TomTom Reachable Range",
    description=(
        "The area reachable from a point within a time or distance (isochrone): center, box; the polygon with geometry."
    ),
    backend_notes={Backend.ORBIS: ORBIS_PREVIEW},
    input=ReachableRangeInput,
    run=run,
    widget=MAP_APP_URI,
)
