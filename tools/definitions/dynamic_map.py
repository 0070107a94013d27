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
from typing import Any

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions import routing
from tools.definitions.common import bbox, check_bbox, check_position, position, show_ui
from tools.errors import ErrorCode, ToolError, invalid
from tools.shaping.points import pick
from tools.shaping.routes import SUMMARY_KEPT, route_points
from tools.widgets import MAP_WIDGET

MAX_MARKERS = 500
MAX_SHAPES = 50
MAX_SHAPE_POINTS = 5_000
MAX_PLANS = 5
_TEXT = {"type": "string", "maxLength": 200}
_COLOR = {"type": "string", "maxLength": 32, "description": "CSS colour, e.g. #1e88e5."}


def _path(minimum: int, description: str) -> dict[str, Any]:
    return {"type": "array", "items": position(), "minItems": minimum, "maxItems": MAX_SHAPE_POINTS,
            "description": description}  # fmt: skip


MARKER = {
    "type": "object",
    "properties": {
        "position": position(),
        "label": _TEXT,
        "description": {"type": "string", "maxLength": 1000},
        "color": _COLOR,
    },
    "required": ["position"],
    "additionalProperties": False,
}
LINE = {
    "type": "object",
    "properties": {
        "coordinates": _path(2, "[[longitude, latitude], ...]"),
        "label": _TEXT,
        "color": _COLOR,
        "width": {"type": "number", "minimum": 0.5, "maximum": 20},
    },
    "required": ["coordinates"],
    "additionalProperties": False,
}
POLYGON = {
    "type": "object",
    "properties": {
        "coordinates": _path(3, "The outline: [[longitude, latitude], ...]."),
        "label": _TEXT,
        "color": _COLOR,
        "opacity": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["coordinates"],
    "additionalProperties": False,
}

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "markers": {"type": "array", "maxItems": MAX_MARKERS, "items": MARKER},
        "lines": {"type": "array", "maxItems": MAX_SHAPES, "items": LINE},
        "polygons": {"type": "array", "maxItems": MAX_SHAPES, "items": POLYGON},
        "routePlans": {
            "type": "array",
            "maxItems": MAX_PLANS,
            "description": "Routes to plan and draw, each through its locations in order.",
            "items": {
                "type": "object",
                "properties": {
                    "locations": {"type": "array", "items": position(), "minItems": 2, "maxItems": 50},
                    "label": _TEXT,
                    "color": _COLOR,
                    "routeType": {"type": "string", "enum": routing.ROUTE_TYPES, "default": "fast"},
                    "traffic": {"type": "string", "enum": ["live", "historical"], "default": "live"},
                    "avoid": {"type": "array", "items": {"type": "string", "enum": routing.AVOID}, "uniqueItems": True},
                    "departAt": {"type": "string", "description": "ISO 8601 date-time, or `now`."},
                },
                "required": ["locations"],
                "additionalProperties": False,
            },
        },
        "bbox": bbox("The view, [minLon, minLat, maxLon, maxLat]; default: everything drawn."),
        "title": _TEXT,
        "show_ui": show_ui(default=True),
    },
    "additionalProperties": False,
}

PLAN_INPUTS = ("locations", "routeType", "traffic", "avoid", "departAt")


def check_arguments(arguments: dict[str, Any]) -> None:
    if not any(arguments.get(name) for name in ("markers", "lines", "polygons", "routePlans", "bbox")):
        raise invalid("markers", "give something to show: markers, lines, polygons, routePlans or a bbox")
    for i, marker in enumerate(arguments.get("markers", [])):
        check_position(f"markers[{i}].position", marker["position"])
    for kind in ("lines", "polygons"):
        for i, shape in enumerate(arguments.get(kind, [])):
            for j, point in enumerate(shape["coordinates"]):
                check_position(f"{kind}[{i}].coordinates[{j}]", point)
    if "bbox" in arguments:
        check_bbox("bbox", arguments["bbox"])


async def _plan(index: int, plan: dict[str, Any], context: CallContext) -> dict[str, Any]:
    try:
        body = await routing.route({k: plan[k] for k in PLAN_INPUTS if k in plan}, context)
    except ToolError as error:
        if error.code is ErrorCode.INVALID_ARGUMENTS and "argument" in error.data:
            argument = error.data["argument"]
            message = error.message.removeprefix(f"{argument}: ")
            raise invalid(f"routePlans[{index}].{argument}", message) from None
        raise ToolError(error.code, f"routePlans[{index}]: {error.message}", **error.data) from None
    routes = body.get("routes")
    if not isinstance(routes, list) or not routes or not isinstance(routes[0], dict):
        raise ToolError(ErrorCode.MALFORMED, f"routePlans[{index}]: TomTom answered without a route.")
    return routes[0]


def _extent(positions: Iterable[Any]) -> list[float] | None:
    west = south = math.inf
    east = north = -math.inf
    for lon, lat in positions:
        west, east, south, north = min(west, lon), max(east, lon), min(south, lat), max(north, lat)
    return None if west > east else [round(west, 5), round(south, 5), round(east, 5), round(north, 5)]


async def run(arguments: dict[str, Any], context: CallContext) -> Answer:
    check_arguments(arguments)
    plans = arguments.get("routePlans", [])
    routes = await asyncio.gather(*(_plan(i, plan, context) for i, plan in enumerate(plans)))
    markers, lines, polygons = (arguments.get(kind, []) for kind in ("markers", "lines", "polygons"))
    view = arguments.get("bbox") or _extent(
        [
            *(m["position"] for m in markers),
            *(p for shape in [*lines, *polygons] for p in shape["coordinates"]),
            *((p.get("longitude"), p.get("latitude")) for route in routes for p in route_points(route)),
        ]
    )
    drawn_routes = []
    summaries = []
    for i, (plan, route) in enumerate(zip(plans, routes, strict=True)):
        label = plan.get("label") or f"Route {i + 1}"
        summary = pick(route.get("summary") or {}, SUMMARY_KEPT)
        summaries.append({"label": label, **summary})
        drawn_routes.append({"label": label, "color": plan.get("color"), "route": route})
    text: dict[str, Any] = {}
    if arguments.get("title"):
        text["title"] = arguments["title"]
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
    shown = bool(arguments.get("show_ui", True))
    state = {"title": arguments.get("title"), "bbox": view, "markers": markers, "lines": lines,
             "polygons": polygons, "routes": drawn_routes}  # fmt: skip
    return Answer(text, {"map": state} if shown else None, show_ui=shown)


TOOL = define_tool(
    name="tomtom-dynamic-map",
    title="TomTom Dynamic Map",
    description=(
        "Show markers, lines, areas and planned routes on an interactive map (routes are planned with TomTom "
        "routing). Answers with a short summary: the view, the markers, each route's distance, time and delay."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
    meta=MAP_WIDGET,
)
