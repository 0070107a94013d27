"""tomtom-poi-search: points of interest by name, brand or category.

Orbis: GET `/maps/orbis/places/poiSearch/{query}.json?apiVersion=1`; TomTom Maps: GET
`/search/2/poiSearch/{query}.json`. An empty `query` searches by category or brand alone (the
path becomes `poiSearch/.json`), so it needs `poiCategories` or `brandSet`. `position` only
biases the ranking; `radius` or `boundingBox` make it a boundary.
"""

from __future__ import annotations

from typing import Any

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions.common import response_detail
from tools.definitions.search_common import (
    COUNTRIES,
    LANGUAGE,
    area_inputs,
    area_params,
    check_area,
    check_power,
    common_params,
    limit,
    poi_detail_inputs,
    poi_filter_inputs,
    poi_params,
    query_segment,
    requested,
    search,
    search_path,
)
from tools.errors import conflicting
from tools.tomtom.backends import Backend

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "maxLength": 400,
            "description": "Name or kind of place, e.g. 'pizza'. Empty: by poiCategories or brandSet alone.",
        },
        "response_detail": response_detail(geometry=False),
        "limit": limit(),
        "language": LANGUAGE,
        "countries": COUNTRIES,
        **area_inputs(),
        **poi_filter_inputs(),
        **poi_detail_inputs(),
    },
    "required": ["query"],
    "additionalProperties": False,
}


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    path, params = search_path(backend, f"poiSearch/{query_segment(arguments['query'].strip())}.json")
    params.update(common_params(arguments), **area_params(arguments), **poi_params(arguments))
    return path, params


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    if not arguments["query"].strip() and not ("poiCategories" in arguments or "brandSet" in arguments):
        raise conflicting("query", "poiCategories", "brandSet", message="an empty query needs categories or brands")
    check_area(arguments)
    check_power(arguments)
    return await search(arguments, context, build_request, requested(arguments))


TOOL = define_tool(
    name="tomtom-poi-search",
    title="TomTom POI Search",
    description=(
        "Find businesses and places of interest (restaurants, shops, fuel, hotels...) by name, "
        "brand or category id. `position` ranks nearer ones first; add `radius` to stay inside it. "
        "For the closest ones around a point use tomtom-nearby."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
)
