"""tomtom-geocode: an address or place name -> coordinates."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import (
    FULL,
    answer,
    bbox,
    check_bbox,
    check_position,
    detail,
    exclusive,
    position,
    requires,
    response_detail,
    show_ui,
)  # fmt: skip
from tools.shaping.search import compact_search
from tools.tomtom.backends import Backend
from tools.widgets import MAP_WIDGET

ENTITY_TYPES = [
    "Country", "CountrySubdivision", "CountrySecondarySubdivision", "CountryTertiarySubdivision",
    "Municipality", "MunicipalitySubdivision", "Neighbourhood", "PostalCodeArea",
]  # fmt: skip

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 400, "description": "Address or place name."},
        "response_detail": response_detail(geometry=False),
        "show_ui": show_ui(),
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10, "description": "Max results."},
        "language": {"type": "string", "description": "IETF language tag, e.g. en-GB."},
        "countries": {
            "type": "array",
            "items": {"type": "string", "pattern": "^[A-Za-z]{2}$"},
            "maxItems": 50,
            "description": "Only these countries (ISO 3166-1 alpha-2).",
        },
        "position": position("Bias results near [longitude, latitude]."),
        "radius": {"type": "number", "exclusiveMinimum": 0, "description": "Metres around `position`."},
        "boundingBox": bbox("Only inside [minLon, minLat, maxLon, maxLat]."),
        "entityTypeSet": {
            "type": "array",
            "items": {"type": "string", "enum": ENTITY_TYPES},
            "uniqueItems": True,
            "description": "Only these geography types.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    query = quote(arguments["query"], safe="")
    if backend is Backend.ORBIS:
        path, params = f"/maps/orbis/places/geocode/{query}.json", {"apiVersion": 1}
    else:
        path, params = f"/search/2/geocode/{query}.json", {}
    params["limit"] = arguments.get("limit", 10)
    if "language" in arguments:
        params["language"] = arguments["language"]
    if "countries" in arguments:
        params["countrySet"] = ",".join(c.upper() for c in arguments["countries"])
    if "position" in arguments:
        params["lon"], params["lat"] = arguments["position"]
    if "radius" in arguments:
        params["radius"] = round(arguments["radius"])
    if "boundingBox" in arguments:
        min_lon, min_lat, max_lon, max_lat = arguments["boundingBox"]
        params["topLeft"] = f"{max_lat},{min_lon}"
        params["btmRight"] = f"{min_lat},{max_lon}"
    if "entityTypeSet" in arguments:
        params["entityTypeSet"] = ",".join(arguments["entityTypeSet"])
    return path, params


async def run(arguments: dict[str, Any], context: CallContext) -> Answer:
    requires(arguments, "radius", "position")
    exclusive(arguments, "position", "boundingBox", message="bias near a position or limit to a box, not both")
    if "position" in arguments:
        check_position("position", arguments["position"])
    if "boundingBox" in arguments:
        check_bbox("boundingBox", arguments["boundingBox"])
    session = context.tomtom
    path, params = build_request(arguments, session.backend)
    body = await session.get(path, params)
    return answer(arguments, body if detail(arguments) == FULL else compact_search(body), body)


TOOL = define_tool(
    name="tomtom-geocode",
    title="TomTom Geocode",
    description=(
        "Find the coordinates of an address or place name (street, city, postcode, region). "
        "For businesses and points of interest use tomtom-fuzzy-search or tomtom-poi-search."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
    meta=MAP_WIDGET,
)
