"""tomtom-area-search: places of interest strictly inside one area (circle, polygon or box).

Geometry Search, a POST on both backends: Orbis `/maps/orbis/places/geometrySearch/{query}.json`
with `apiVersion=1`, TomTom Maps `/search/2/geometrySearch/{query}.json`, the area as the body
`{"geometryList": [...]}`: a circle as `{"type": "CIRCLE", "position": "lat,lon", "radius": m}`,
a polygon (and a bounding box, as its four corners) as `{"type": "POLYGON", "vertices":
["lat,lon", ...]}`. Exactly one area: `center` with `radius`, `polygon`, or `boundingBox`.

Compact is the search compact (tools.shaping.search) plus `boundary`, which area was searched.
`geometry` adds that area as one Polygon feature `{"boundary": "circle" | "polygon" |
"boundingBox"}`: a circle is drawn as a polygon of `CIRCLE_VERTICES` (64) vertices.
"""

from __future__ import annotations

from typing import Any

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions.common import bbox, check_bbox, check_position, detail, position, requires, response_detail
from tools.definitions.search_common import (
    BRAND_SET,
    LANGUAGE,
    POI_CATEGORIES,
    common_params,
    limit,
    poi_params,
    query_segment,
    search_path,
)
from tools.errors import conflicting, invalid
from tools.geometry.circle import CIRCLE_VERTICES, circle_ring
from tools.shaping.geometry import feature, with_geometry
from tools.shaping.points import lat_lon_text
from tools.shaping.search import compact_search
from tools.tomtom.backends import Backend

AREAS = ("center", "polygon", "boundingBox")
MAX_POLYGON_POINTS = 1000

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 400, "description": "What to find, e.g. 'cafe'."},
        "response_detail": response_detail(geometry=True),
        "center": position("Circle centre, [longitude, latitude]; needs radius."),
        "radius": {
            "type": "integer",
            "minimum": 1,
            "description": f"Circle radius in metres (geometry draws it as a {CIRCLE_VERTICES}-gon).",
        },
        "polygon": {
            "type": "array",
            "items": position(),
            "minItems": 3,
            "maxItems": MAX_POLYGON_POINTS,
            "description": "Polygon corners in order: [[longitude, latitude], ...].",
        },
        "boundingBox": bbox("[minLon, minLat, maxLon, maxLat]."),
        "limit": limit(),
        "language": LANGUAGE,
        "poiCategories": POI_CATEGORIES,
        "brandSet": BRAND_SET,
    },
    "required": ["query"],
    "additionalProperties": False,
}


def area(arguments: dict[str, Any]) -> tuple[str, list[list[float]]]:
    """The one area given: its join key (`circle`, `polygon`, `boundingBox`) and its points.

    A circle's points are its centre alone; a polygon's its corners without a repeated closing
    corner; a box's its four corners, counter-clockwise from the south-west.
    """
    requires(arguments, "radius", "center")
    requires(arguments, "center", "radius")
    given = [name for name in AREAS if name in arguments]
    if len(given) != 1:
        message = "give exactly one area" if given else "give an area"
        raise conflicting(*(given if len(given) > 1 else AREAS), message=message)
    if "center" in arguments:
        check_position("center", arguments["center"])
        return "circle", [arguments["center"]]
    if "boundingBox" in arguments:
        check_bbox("boundingBox", arguments["boundingBox"])
        west, south, east, north = arguments["boundingBox"]
        return "boundingBox", [[west, south], [east, south], [east, north], [west, north]]
    corners = [list(point) for point in arguments["polygon"]]
    for index, corner in enumerate(corners):
        check_position(f"polygon[{index}]", corner)
    if corners[0] == corners[-1]:
        corners.pop()
    if len({tuple(corner) for corner in corners}) < 3:
        raise invalid("polygon", "needs at least 3 different corners")
    return "polygon", corners


def geometry_list(kind: str, points: list[list[float]], arguments: dict[str, Any]) -> list[dict[str, Any]]:
    if kind == "circle":
        return [{"type": "CIRCLE", "position": lat_lon_text(points[0]), "radius": arguments["radius"]}]
    return [{"type": "POLYGON", "vertices": [lat_lon_text(point) for point in points]}]


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The path, query parameters and JSON body for this call on this backend."""
    kind, points = area(arguments)
    path, params = search_path(backend, f"geometrySearch/{query_segment(arguments['query'].strip())}.json")
    params.update(common_params(arguments), **poi_params(arguments))
    return path, params, {"geometryList": geometry_list(kind, points, arguments)}


def boundary_feature(kind: str, points: list[list[float]], arguments: dict[str, Any]) -> dict[str, Any]:
    ring = circle_ring(points[0], arguments["radius"]) if kind == "circle" else points
    return feature({"type": "Polygon", "coordinates": [ring]}, {"boundary": kind})


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    kind, points = area(arguments)
    session = context.tomtom
    path, params, body = build_request(arguments, session.backend)
    answer = await session.post(path, body, params)
    if detail(arguments) == "full":
        return answer
    compact = {"boundary": kind, **compact_search(answer)}
    if detail(arguments) == "geometry":
        return with_geometry(compact, [boundary_feature(kind, points, arguments)])
    return compact


TOOL = define_tool(
    name="tomtom-area-search",
    title="TomTom Area Search",
    description=(
        "Find places of interest strictly inside an area: a circle (center and radius), a polygon or a "
        "bounding box. To rank places near a point use tomtom-poi-search or tomtom-nearby."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
)
