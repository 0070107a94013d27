"""tomtom-poi-search: points of interest by name, brand or category.

Orbis: GET `/maps/orbis/places/poiSearch/{query}.json?apiVersion=1`; TomTom Maps: GET
`/search/2/poiSearch/{query}.json`. An empty `query` searches by category or brand alone (the
path becomes `poiSearch/.json`), so it needs `poiCategories` or `brandSet`. `position` only
biases the ranking; `radius` or `boundingBox` make it a boundary.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import Countries, Language, Limit, PointsDetail, ShowUi
from tools.definitions.search_common import (
    AreaInputs,
    PoiDetails,
    PoiFilters,
    area_params,
    common_params,
    poi_params,
    query_segment,
    search,
    search_path,
)
from tools.inputs import rule
from tools.tomtom.backends import Backend
from tools.widgets import MAP_APP_URI


class PoiSearchInput(PoiDetails, PoiFilters, AreaInputs):
    query: Annotated[
        str,
        Field(
            max_length=400,
            description="Name or kind of place, e.g. 'pizza'. Empty: by poiCategories or brandSet alone.",
        ),
    ]
    response_detail: PointsDetail = "compact"
    show_ui: ShowUi = False
    limit: Limit = 10
    language: Language | None = None
    countries: Countries | None = None

    @model_validator(mode="after")
    def _empty_query_rule(self) -> PoiSearchInput:
        if not self.query.strip() and self.poiCategories is None and self.brandSet is None:
            raise rule("query", "poiCategories", "brandSet", message="an empty query needs categories or brands")
        return self


def build_request(input: PoiSearchInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    path, params = search_path(backend, f"poiSearch/{query_segment(input.query.strip())}.json")
    params.update(common_params(input), **area_params(input), **poi_params(input))
    return path, params


async def run(input: PoiSearchInput, context: CallContext) -> Answer:
    return await search(input, context, build_request, input.requested())


TOOL = define_tool(
    name="tomtom-poi-search",
    title="TomTom POI Search",
    description=(
        "Businesses and other POIs (restaurants, shops, fuel, hotels...) by name, brand or category; "
        "`position` ranks nearer ones first. For the nearest around a point use tomtom-nearby."
    ),
    input=PoiSearchInput,
    run=run,
    widget=MAP_APP_URI,
)
