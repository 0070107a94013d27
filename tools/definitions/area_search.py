"""tomtom-area-search: places of interest strictly inside one area (circle, polygon or box).

Geometry Search, a POST on both backends: Orbis `/maps/orbis/places/geometrySearch/{query}.json`
with `apiVersion=1`, TomTom Maps `/search/2/geometrySearch/{query}.json`, the area as the body
`{"geometryList": [...]}`: a circle as `{"type": "CIRCLE", "position": "lat,lon", "radius": m}`,
a polygon (and a bounding box, as its four corners) as `{"type": "POLYGON", "vertices":
["lat,lon", ...]}`. Exactly one area: `center` with `radius`, `polygon`, or `boundingBox`.

Compact is the search compact (tools.shaping.search) plus `boundary`, which area was searched.
Geometry Search takes no offset (`ofs`), so the tool does not page: a truncated answer says, in
`more`, to raise `limit` or narrow the search.
`geometry` adds that area as one Polygon feature `{"boundary": "circle" | "polygon" |
"boundingBox"}`: a circle is drawn as a polygon of `CIRCLE_VERTICES` (64) vertices.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, model_validator

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import (
    FULL,
    GEOMETRY,
    BoundingBox,
    GeometryDetail,
    Language,
    Limit,
    Position,
    ShowUi,
    answer,
)
from tools.definitions.search_common import (
    BrandSet,
    PoiCategories,
    Query,
    common_params,
    more_results,
    poi_params,
    query_segment,
    search_path,
)
from tools.geometry.circle import circle_ring
from tools.inputs import ToolInput, exactly_one, problem, requires
from tools.shaping.geometry import feature, with_geometry
from tools.shaping.points import lat_lon_text
from tools.shaping.search import compact_search
from tools.tomtom.backends import Backend
from tools.widgets import MAP_APP_URI

AREAS = ("center", "polygon", "boundingBox")
MAX_POLYGON_POINTS = 1000
MAX_RADIUS = 20_000_000
"""Metres: half the Earth's circumference, the largest circle that means anything."""


def _open_ring(corners: list[list[float]]) -> list[list[float]]:
    """The corners without a repeated closing corner; at least 3 different ones."""
    if corners[0] == corners[-1]:
        corners = corners[:-1]
    if len({tuple(corner) for corner in corners}) < 3:
        raise problem("needs at least 3 different corners")
    return corners


Polygon = Annotated[
    list[Position],
    Field(
        min_length=3,
        max_length=MAX_POLYGON_POINTS,
        description="Corners in order: [[lon, lat], ...].",
    ),
    AfterValidator(_open_ring),
]


class AreaSearchInput(ToolInput):
    query: Annotated[Query, Field(description="What to find, e.g. 'cafe'.")]
    response_detail: GeometryDetail = "compact"
    show_ui: ShowUi = False
    center: Position | None = Field(None, description="[lon, lat], with radius.")
    radius: int | None = Field(
        None,
        ge=1,
        le=MAX_RADIUS,
        description="Circle radius, metres.",
    )
    polygon: Polygon | None = None
    boundingBox: BoundingBox | None = Field(None, description="[minLon, minLat, maxLon, maxLat].")
    limit: Limit = 10
    language: Language | None = None
    poiCategories: PoiCategories | None = None
    brandSet: BrandSet | None = None

    @model_validator(mode="after")
    def _one_area(self) -> AreaSearchInput:
        requires(self, "radius", "center")
        requires(self, "center", "radius")
        exactly_one(self, *AREAS, what="area")
        return self


def area(input: AreaSearchInput) -> tuple[str, list[list[float]]]:
    """The one area given: its join key (`circle`, `polygon`, `boundingBox`) and its points.

    A circle's points are its centre alone; a polygon's its corners without a repeated closing
    corner; a box's its four corners, counter-clockwise from the south-west.
    """
    if input.center is not None:
        return "circle", [input.center]
    if input.boundingBox is not None:
        west, south, east, north = input.boundingBox
        return "boundingBox", [[west, south], [east, south], [east, north], [west, north]]
    assert input.polygon is not None  # the model holds exactly one area
    return "polygon", input.polygon


def geometry_list(kind: str, points: list[list[float]], input: AreaSearchInput) -> list[dict[str, Any]]:
    if kind == "circle":
        return [{"type": "CIRCLE", "position": lat_lon_text(points[0]), "radius": input.radius}]
    return [{"type": "POLYGON", "vertices": [lat_lon_text(point) for point in points]}]


def build_request(input: AreaSearchInput, backend: Backend) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The path, query parameters and JSON body for this call on this backend."""
    kind, points = area(input)
    path, params = search_path(backend, f"geometrySearch/{query_segment(input.query.strip())}.json")
    params.update(common_params(input), **poi_params(input))
    return path, params, {"geometryList": geometry_list(kind, points, input)}


def boundary_feature(kind: str, points: list[list[float]], input: AreaSearchInput) -> dict[str, Any]:
    ring = circle_ring(points[0], input.radius or 0) if kind == "circle" else points
    return feature({"type": "Polygon", "coordinates": [ring]}, {"boundary": kind})


async def run(input: AreaSearchInput, context: CallContext) -> Answer:
    """The widget draws TomTom's answer and the area searched (`boundary`, a Polygon feature)."""
    kind, points = area(input)
    session = context.tomtom
    path, params, request_body = build_request(input, session.backend)
    body = await session.post(path, request_body, params)
    boundary = boundary_feature(kind, points, input)
    if input.response_detail == FULL:
        data = body
    else:
        data = {"boundary": kind, **compact_search(body), **more_results(input, body)}
        if input.response_detail == GEOMETRY:
            data = with_geometry(data, [boundary])
    return answer(input, data, {**body, "boundary": boundary})


TOOL = define_tool(
    name="tomtom-area-search",
    title="TomTom Area Search",
    description=("POIs strictly inside a circle, a polygon or a box. Ranked near a point: tomtom-poi-search."),
    input=AreaSearchInput,
    run=run,
    widget=MAP_APP_URI,
)
