"""tomtom-fuzzy-search: free text -> addresses, streets, areas and POIs, typo-tolerant.

Orbis: GET `/maps/orbis/places/search/{query}.json?apiVersion=1`; TomTom Maps: GET
`/search/2/search/{query}.json`. The shared search inputs (`tools.definitions.search_common`)
plus `idxSet`, which restricts the kinds of result (TomTom's index names).
"""

from __future__ import annotations

from typing import Any

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions.common import response_detail
from tools.definitions.search_common import (
    COUNTRIES,
    LANGUAGE,
    POI_CATEGORIES,
    area_inputs,
    area_params,
    check_area,
    common_params,
    limit,
    poi_params,
    query_segment,
    search,
    search_path,
)
from tools.tomtom.backends import Backend

INDEXES = ["Geo", "PAD", "Addr", "Str", "XStr", "POI"]

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 400, "description": "What to find, any wording."},
        "response_detail": response_detail(geometry=False),
        "limit": limit(),
        "language": LANGUAGE,
        "countries": COUNTRIES,
        **area_inputs(),
        "poiCategories": POI_CATEGORIES,
        "idxSet": {
            "type": "array",
            "items": {"type": "string", "enum": INDEXES},
            "uniqueItems": True,
            "minItems": 1,
            "description": "Only these kinds: Geo areas, PAD point addresses, Addr ranges, Str streets, "
            "XStr crossings, POI.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    path, params = search_path(backend, f"search/{query_segment(arguments['query'])}.json")
    params.update(common_params(arguments), **area_params(arguments), **poi_params(arguments))
    if "idxSet" in arguments:
        params["idxSet"] = ",".join(arguments["idxSet"])
    return path, params


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    check_area(arguments)
    return await search(arguments, context, build_request)


TOOL = define_tool(
    name="tomtom-fuzzy-search",
    title="TomTom Fuzzy Search",
    description=(
        "Search anything by free text, typos tolerated: addresses, streets, cities and places of "
        "interest together. Prefer tomtom-geocode for a known address, tomtom-poi-search for "
        "businesses, tomtom-nearby for what is around a point."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
)
