"""tomtom-dynamic-map: markers, lines, areas and planned routes, drawn on an interactive map.

Each `routePlans` item is planned by the routing service (the same request as tomtom-routing;
all plans at once). The model reads a short summary: the view, the markers, and each route's
distance, travel time and traffic delay. The widget gets the map state as app data: what the
caller gave, and each route as TomTom answered it, whose line the result may simplify to fit.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import Field, model_validator

from core.errors import ErrorCode, ToolError
from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions import routing
from tools.definitions.common import BoundingBox, Position, ShowUi
from tools.definitions.routing import Avoid, DepartAt, Locations, RouteType, TrafficMode
from tools.inputs import ToolInput, problem
from tools.shaping.points import pick
from tools.shaping.routes import SUMMARY_KEPT, route_points
from tools.widgets import MAP_APP_URI

MAX_MARKERS = 500
MAX_SHAPES = 50
MAX_SHAPE_POINTS = 5_000
MAX_PLANS = 5
MAX_PLAN_LOCATIONS = 50
Text = Annotated[str, Field(max_length=200)]
Color = Annotated[str, Field(max_length=32, description="CSS colour, e.g. #1e88e5.")]


class Marker(ToolInput):
    """A point to mark, optionally labelled and described."""

    position: Position = Field(description="[lon, lat]")
    label: Text | None = None
    description: str | None = Field(None, max_length=1000)
    color: Color | None = None


class Line(ToolInput):
    """A line through two or more positions."""

    coordinates: Annotated[
        list[Position], Field(min_length=2, max_length=MAX_SHAPE_POINTS, description="[[lon, lat], ...]")
    ]
    label: Text | None = None
    color: Color | None = None
    width: float | None = Field(None, ge=0.5, le=20)


class Polygon(ToolInput):
    """An area: its outline of three or more positions."""

    coordinates: Annotated[
        list[Position],
        Field(min_length=3, max_length=MAX_SHAPE_POINTS, description="The outline: [[lon, lat], ...]."),
    ]
    label: Text | None = None
    color: Color | None = None
    opacity: float | None = Field(None, ge=0, le=1)


class RoutePlan(ToolInput):
    """A route to plan (as tomtom-routing plans it, by car) and draw."""

    locations: Annotated[Locations, Field(max_length=MAX_PLAN_LOCATIONS)]
    label: Text | None = None
    color: Color | None = None
    routeType: RouteType = "fast"
    traffic: TrafficMode = "live"
    avoid: Avoid | None = None
    departAt: DepartAt | None = None

    def options(self) -> routing.RouteOptions:
        """The plan's route type and traffic; the travel mode is tomtom-routing's default, car."""
        return routing.RouteOptions(routeType=self.routeType, traffic=self.traffic)


class DynamicMapInput(ToolInput):
    markers: list[Marker] | None = Field(None, max_length=MAX_MARKERS)
    lines: list[Line] | None = Field(None, max_length=MAX_SHAPES)
    polygons: list[Polygon] | None = Field(None, max_length=MAX_SHAPES)
    routePlans: list[RoutePlan] | None = Field(None, max_length=MAX_PLANS, description="Routes to plan and draw.")
    bbox: BoundingBox | None = Field(
        None, description="The view, [minLon, minLat, maxLon, maxLat]; default: all drawn."
    )
    title: Text | None = None
    show_ui: ShowUi = True

    @model_validator(mode="after")
    def _something_to_show(self) -> DynamicMapInput:
        if not any((self.markers, self.lines, self.polygons, self.routePlans, self.bbox)):
            raise problem("give something to show: markers, lines, polygons, routePlans or a bbox", item="markers")
        return self


async def _plan(index: int, plan: RoutePlan, context: CallContext) -> dict[str, Any]:
    """The first route TomTom plans for `plan`; an error names the plan (`routePlans[i]`)."""
    session = context.tomtom
    try:
        request = routing.build_request(
            plan.locations, plan.options(), session.backend, avoid=plan.avoid, departAt=plan.departAt
        )
        body = await routing.calculate_route(session, request)  # the shape both backends share
    except ToolError as error:
        where = f"routePlans[{index}]"
        data = dict(error.data)
        if "argument" in data:
            data["argument"] = f"{where}.{data['argument']}"
        raise ToolError(error.code, f"{where}: {error.message}", **data) from None
    routes = body.get("routes")
    if not isinstance(routes, list) or not routes or not isinstance(routes[0], dict):
        raise ToolError(ErrorCode.MALFORMED, f"routePlans[{index}]: TomTom answered without a route.")
    return routes[0]


def _drawn(shapes: list[Marker] | list[Line] | list[Polygon] | None) -> list[dict[str, Any]]:
    """The shapes as the widget draws them: what the caller gave."""
    return [shape.model_dump(exclude_none=True) for shape in shapes or ()]


def _extent(positions: Iterable[Any]) -> list[float] | None:
    west = south = math.inf
    east = north = -math.inf
    for lon, lat in positions:
        west, east, south, north = min(west, lon), max(east, lon), min(south, lat), max(north, lat)
    return None if west > east else [round(west, 5), round(south, 5), round(east, 5), round(north, 5)]


async def run(input: DynamicMapInput, context: CallContext) -> Answer:
    plans = input.routePlans or []
    routes = await asyncio.gather(*(_plan(i, plan, context) for i, plan in enumerate(plans)))
    markers, lines, polygons = _drawn(input.markers), _drawn(input.lines), _drawn(input.polygons)
    view = input.bbox or _extent(
        [
            *(m["position"] for m in markers),
            *(p for shape in [*lines, *polygons] for p in shape["coordinates"]),
            *((p.get("longitude"), p.get("latitude")) for route in routes for p in route_points(route)),
        ]
    )
    drawn_routes = []
    summaries = []
    for i, (plan, route) in enumerate(zip(plans, routes, strict=True)):
        label = plan.label or f"Route {i + 1}"
        summary = pick(route.get("summary") or {}, SUMMARY_KEPT)
        summaries.append({"label": label, **summary})
        drawn_routes.append({"label": label, "color": plan.color, "route": route})
    text: dict[str, Any] = {}
    if input.title:
        text["title"] = input.title
    if view is not None:
        text["view"] = {"bbox": view}
    if markers:
        labels = [m["label"] for m in markers if m.get("label")]
        text["markers"] = {"count": len(markers), **({"labels": labels[:20]} if labels else {})}
    for kind, shapes in (("lines", lines), ("polygons", polygons)):
        if shapes:
            text[kind] = len(shapes)
    if summaries:
        text["routes"] = summaries
    state = {
        "title": input.title,
        "bbox": view,
        "markers": markers,
        "lines": lines,
        "polygons": polygons,
        "routes": drawn_routes,
    }
    return Answer(text, {"map": state} if input.show_ui else None, show_ui=input.show_ui)


TOOL = define_tool(
    name="tomtom-dynamic-map",
    title="TomTom Dynamic Map",
    description=(
        "Draw markers, lines, areas and routes it plans on an interactive map; answers with a summary: "
        "the view, the markers, each route's distance, time and delay."
    ),
    input=DynamicMapInput,
    run=run,
    widget=MAP_APP_URI,
    needs_widget=True,
)
