"""tomtom-nearby: points of interest around a point, nearest first.

Orbis: GET `/maps/orbis/places/nearbySearch/.json?apiVersion=1`; TomTom Maps: GET
`/search/2/nearbySearch/.json` (no query: the point and the filters are the search). Needs a
category or a brand/connector/fuel/power filter, else every kind of place would come back.
"""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import Countries, Language, Limit, PointsDetail, ShowUi
from tools.definitions.search_common import (
    CentrePosition,
    PoiDetails,
    PoiFilters,
    Radius,
    common_params,
    nearby_search,
    poi_params,
    search,
)
from tools.tomtom.backends import Backend
from tools.widgets import MAP_APP_URI


class NearbyInput(PoiDetails, PoiFilters):
    position: CentrePosition
    response_detail: PointsDetail = "compact"
    show_ui: ShowUi = False
    radius: Radius | None = None
    limit: Limit = 10
    language: Language | None = None
    countries: Countries | None = None

    @model_validator(mode="after")
    def _some_filter(self) -> NearbyInput:
        self.require_some_filter("a nearby search")
        return self


def build_request(input: NearbyInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    path, params = nearby_search(backend, input.position, input.radius)
    params.update(common_params(input), **poi_params(input))
    return path, params


async def run(input: NearbyInput, context: CallContext) -> Answer:
    return await search(input, context, build_request, input.requested())


TOOL = define_tool(
    name="tomtom-nearby",
    title="TomTom Nearby Search",
    description=(
        "POIs around a point, nearest first, by category, brand, connector, fuel or charging power. "
        "To search by name use tomtom-poi-search; for EV chargers, tomtom-ev-search."
    ),
    input=NearbyInput,
    run=run,
    widget=MAP_APP_URI,
)
