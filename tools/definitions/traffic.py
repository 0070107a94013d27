"""tomtom-traffic: traffic incidents inside a bounding box."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import FULL, GEOMETRY, BoundingBox, GeometryDetail, Language, ShowUi, answer
from tools.inputs import UNIQUE, ToolInput, problem
from tools.shaping.geometry import incident_features, with_geometry
from tools.shaping.traffic import CATEGORIES, CATEGORY_CODES, FIELDS, FULL_FIELDS, capped_incidents, compact_traffic
from tools.tomtom.backends import Backend
from tools.widgets import MAP_APP_URI

MAX_AREA_KM2 = 10_000
"""TomTom's limit for one incident-details request."""
DEFAULT_CAP = 100

# The incident kinds by name (tools.shaping.traffic.CATEGORIES). A Literal built at import time is
# opaque to a type checker, which sees the str each name is.
if TYPE_CHECKING:
    Category = str
else:
    Category = Literal[tuple(sorted(CATEGORIES.values()))]
Validity = Literal["present", "future"]


def area_km2(box: list[float]) -> float:
    """The area of `box` in km² (a box crossing the antimeridian wraps)."""
    min_lon, min_lat, max_lon, max_lat = box
    width = (max_lon - min_lon) % 360 or 360
    mean_lat = math.radians((min_lat + max_lat) / 2)
    return (width * 111.32 * math.cos(mean_lat)) * ((max_lat - min_lat) * 110.57)


def _within_limit(box: list[float]) -> list[float]:
    area = area_km2(box)
    if area > MAX_AREA_KM2:
        raise problem(f"covers about {area:,.0f} km²; the limit is {MAX_AREA_KM2:,} km²")
    return box


class TrafficInput(ToolInput):
    bbox: Annotated[
        BoundingBox,
        Field(description=f"[minLon, minLat, maxLon, maxLat], at most {MAX_AREA_KM2:,} km²."),
        AfterValidator(_within_limit),
    ]
    response_detail: GeometryDetail = "compact"
    show_ui: ShowUi = False
    language: Language = "en-GB"
    categoryFilter: Annotated[list[Category], Field(max_length=len(CATEGORIES)), UNIQUE] | None = None
    timeValidityFilter: Annotated[list[Validity], Field(min_length=1, max_length=2), UNIQUE] = ["present"]
    maxResults: int = Field(DEFAULT_CAP, ge=1, le=1000)


def build_request(input: TrafficInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    params: dict[str, Any]
    if backend is Backend.ORBIS:
        path, params = "/maps/orbis/traffic/incidentDetails", {"apiVersion": 1}
    else:
        path, params = "/traffic/services/5/incidentDetails", {}
    params["bbox"] = ",".join(str(v) for v in input.bbox)
    params["fields"] = FULL_FIELDS if input.response_detail == FULL else FIELDS
    params["language"] = input.language
    params["timeValidityFilter"] = ",".join(input.timeValidityFilter)
    if input.categoryFilter is not None:
        params["categoryFilter"] = ",".join(str(CATEGORY_CODES[c]) for c in input.categoryFilter)
    return path, params


async def run(input: TrafficInput, context: CallContext) -> Answer:
    """The widget draws live traffic for `bbox` from the tool input: no app data."""
    return answer(input, await incidents(input, context))


async def incidents(input: TrafficInput, context: CallContext) -> dict[str, Any]:
    """The incidents in `input.bbox`, shaped as `response_detail` asks."""
    session = context.tomtom
    body = await session.get(*build_request(input, session.backend))
    if input.response_detail == FULL:
        return body
    cap = input.maxResults
    compact = compact_traffic(body, cap, with_validity="future" in input.timeValidityFilter)
    if input.response_detail == GEOMETRY:
        return with_geometry(compact, incident_features(capped_incidents(body, cap)[0]))
    return compact


TOOL = define_tool(
    name="tomtom-traffic",
    title="TomTom Traffic",
    description=(
        "Incidents (jams, closures, roadworks, accidents) in a box, most severe first, with delays and roads. "
        "Delay on a route: tomtom-routing."
    ),
    input=TrafficInput,
    run=run,
    widget=MAP_APP_URI,
)
