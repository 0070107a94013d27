"""tomtom-traffic: traffic incidents inside a bounding box."""

from __future__ import annotations

import math
from typing import Any

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import answer, bbox, check_bbox, detail, response_detail, show_ui
from tools.errors import invalid
from tools.shaping.geometry import incident_features, with_geometry
from tools.shaping.traffic import CATEGORIES, CATEGORY_CODES, FIELDS, capped_incidents, compact_traffic
from tools.tomtom.backends import Backend
from tools.widgets import MAP_WIDGET

MAX_AREA_KM2 = 10_000
"""TomTom's limit for one incident-details request."""
DEFAULT_CAP = 100

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "bbox": bbox(f"[minLon, minLat, maxLon, maxLat], at most {MAX_AREA_KM2:,} km²."),
        "response_detail": response_detail(geometry=True),
        "show_ui": show_ui(),
        "language": {"type": "string", "default": "en-GB", "description": "Language of the descriptions."},
        "categoryFilter": {
            "type": "array",
            "items": {"type": "string", "enum": sorted(CATEGORIES.values())},
            "uniqueItems": True,
            "description": "Only these kinds of incident.",
        },
        "timeValidityFilter": {
            "type": "array",
            "items": {"type": "string", "enum": ["present", "future"]},
            "uniqueItems": True,
            "minItems": 1,
            "default": ["present"],
        },
        "maxResults": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "default": DEFAULT_CAP,
            "description": "Cap on the incidents listed, most severe first.",
        },
    },
    "required": ["bbox"],
    "additionalProperties": False,
}


def area_km2(box: list[float]) -> float:
    min_lon, min_lat, max_lon, max_lat = box
    width = (max_lon - min_lon) % 360 or 360
    mean_lat = math.radians((min_lat + max_lat) / 2)
    return (width * 111.32 * math.cos(mean_lat)) * ((max_lat - min_lat) * 110.57)


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any]]:
    if backend is Backend.ORBIS:
        path, params = "/maps/orbis/traffic/incidentDetails", {"apiVersion": 1}
    else:
        path, params = "/traffic/services/5/incidentDetails", {}
    params["bbox"] = ",".join(str(v) for v in arguments["bbox"])
    params["fields"] = FIELDS
    params["language"] = arguments.get("language", "en-GB")
    params["timeValidityFilter"] = ",".join(arguments.get("timeValidityFilter", ["present"]))
    if "categoryFilter" in arguments:
        params["categoryFilter"] = ",".join(str(CATEGORY_CODES[c]) for c in arguments["categoryFilter"])
    return path, params


async def run(arguments: dict[str, Any], context: CallContext) -> Answer:
    """The widget draws live traffic for `bbox` from the tool input: no app data."""
    return answer(arguments, await incidents(arguments, context))


async def incidents(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    check_bbox("bbox", arguments["bbox"])
    if area_km2(arguments["bbox"]) > MAX_AREA_KM2:
        raise invalid("bbox", f"covers about {area_km2(arguments['bbox']):,.0f} km²; the limit is {MAX_AREA_KM2:,} km²")
    session = context.tomtom
    path, params = build_request(arguments, session.backend)
    body = await session.get(path, params)
    if detail(arguments) == "full":
        return body
    cap = arguments.get("maxResults", DEFAULT_CAP)
    compact = compact_traffic(body, cap, with_validity="future" in arguments.get("timeValidityFilter", ["present"]))
    if detail(arguments) == "geometry":
        return with_geometry(compact, incident_features(capped_incidents(body, cap)[0]))
    return compact


TOOL = define_tool(
    name="tomtom-traffic",
    title="TomTom Traffic",
    description=(
        "List traffic incidents (jams, closures, roadworks, accidents) inside a bounding box, "
        "most severe first, with delays and affected roads."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
    meta=MAP_WIDGET,
)
