"""tomtom-reverse-geocode: a [longitude, latitude] point -> the address (or area) there.

Orbis: GET `/maps/orbis/places/reverseGeocode/{lat},{lon}.json?apiVersion=1`; TomTom Maps:
GET `/search/2/reverseGeocode/{lat},{lon}.json`. Both answer `{summary, addresses: [...]}` with
positions as `"lat,lon"` strings. Inputs: `radius`, `language`, `heading` (prefer the road being
driven; TomTom ignores it for areas, so it cannot be combined with `entityType`), `entityType`
(answer with the enclosing area of that type instead of a street address) and
`returnSpeedLimit` (compact then keeps the address's `speedLimit`).
"""

from __future__ import annotations

from typing import Any

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions.common import FULL, check_position, detail, exclusive, position, response_detail
from tools.definitions.geocode import ENTITY_TYPES
from tools.definitions.search_common import LANGUAGE, search_path
from tools.shaping.points import lat_lon_text
from tools.shaping.search import Requested, compact_reverse
from tools.tomtom.backends import Backend

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "position": position("The point to look up, [longitude, latitude]."),
        "response_detail": response_detail(geometry=False),
        "radius": {"type": "integer", "minimum": 1, "description": "Only addresses within this many metres."},
        "language": LANGUAGE,
        "heading": {
            "type": "number",
            "minimum": 0,
            "maximum": 360,
            "description": "Direction of travel, degrees from north: prefers the road being driven.",
        },
        "entityType": {
            "type": "array",
            "items": {"type": "string", "enum": ENTITY_TYPES},
            "uniqueItems": True,
            "minItems": 1,
            "description": "Answer with the area of this type (e.g. Municipality), not an address.",
        },
        "returnSpeedLimit": {"type": "boolean", "description": "Add the road's speed limit."},
    },
    "required": ["position"],
    "additionalProperties": False,
}


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    path, params = search_path(backend, f"reverseGeocode/{lat_lon_text(arguments['position'])}.json")
    for name in ("radius", "language", "heading"):
        if name in arguments:
            params[name] = arguments[name]
    if "entityType" in arguments:
        params["entityType"] = ",".join(arguments["entityType"])
    if arguments.get("returnSpeedLimit"):
        params["returnSpeedLimit"] = True
    return path, params


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    check_position("position", arguments["position"])
    exclusive(arguments, "entityType", "heading", message="an area lookup takes no heading; give one or the other")
    session = context.tomtom
    path, params = build_request(arguments, session.backend)
    body = await session.get(path, params)
    if detail(arguments) == FULL:
        return body
    return compact_reverse(body, Requested(speed_limit=bool(arguments.get("returnSpeedLimit"))))


TOOL = define_tool(
    name="tomtom-reverse-geocode",
    title="TomTom Reverse Geocode",
    description=(
        "Find the address at a [longitude, latitude] point, or the municipality, postcode area or "
        "country around it. To find places by name use tomtom-geocode or tomtom-fuzzy-search."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
)
