"""tomtom-nearby: points of interest around a point, nearest first.

Orbis: GET `/maps/orbis/places/nearbySearch/.json?apiVersion=1`; TomTom Maps: GET
`/search/2/nearbySearch/.json` (no query: the point and the filters are the search). Needs a
category or a brand/connector/fuel/power filter, else every kind of place would come back.
"""

from __future__ import annotations

from typing import Any

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions.common import check_position, response_detail
from tools.definitions.search_common import (
    CENTRE_POSITION,
    COUNTRIES,
    LANGUAGE,
    RADIUS,
    check_power,
    check_some_filter,
    common_params,
    limit,
    nearby_search,
    poi_detail_inputs,
    poi_filter_inputs,
    poi_params,
    requested,
    search,
)
from tools.tomtom.backends import Backend

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "position": CENTRE_POSITION,
        "response_detail": response_detail(geometry=False),
        "radius": RADIUS,
        "limit": limit(),
        "language": LANGUAGE,
        "countries": COUNTRIES,
        **poi_filter_inputs(),
        **poi_detail_inputs(),
    },
    "required": ["position"],
    "additionalProperties": False,
}


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    path, params = nearby_search(backend, arguments)
    params.update(common_params(arguments), **poi_params(arguments))
    return path, params


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    check_position("position", arguments["position"])
    check_some_filter(arguments, "a nearby search")
    check_power(arguments)
    return await search(arguments, context, build_request, requested(arguments))


TOOL = define_tool(
    name="tomtom-nearby",
    title="TomTom Nearby Search",
    description=(
        "List places of interest around a point, nearest first, by category id or brand, "
        "connector, fuel or charging-power filter. For EV chargers with live availability use "
        "tomtom-ev-search; to search by name use tomtom-poi-search."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
)
