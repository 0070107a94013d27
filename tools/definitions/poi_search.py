"""tomtom-poi-search: points of interest by name, brand or category, or the nearest around a point.

Orbis: GET `/maps/orbis/places/poiSearch/{query}.json?apiVersion=1`; TomTom Maps: GET
`/search/2/poiSearch/{query}.json`. `position` only biases the ranking; `radius` or
`boundingBox` make it a boundary. An empty (or left out) `query` searches by the POI filters
alone: with `position`, TomTom's Nearby Search (`nearbySearch/.json`, nearest first, any POI
filter), which the retired tool name `tomtom-nearby` now reaches as an alias (docs/adr/0032);
without, `poiSearch/.json` by `poiCategories` or `brandSet`. Both endpoints page: `cursor` (an
answer's `nextCursor`) becomes `ofs`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import Countries, Language, Limit, PointsDetail, ShowUi
from tools.definitions.search_common import (
    AreaInputs,
    PagedSearch,
    PoiDetails,
    PoiFilters,
    area_params,
    common_params,
    nearby_search,
    page_params,
    poi_params,
    query_segment,
    search,
    search_path,
)
from tools.inputs import rule
from tools.tomtom.backends import Backend
from tools.widgets import MAP_APP_URI


class PoiSearchInput(PagedSearch, PoiDetails, PoiFilters, AreaInputs):
    query: Annotated[
        str,
        Field(
            max_length=400,
            description="e.g. 'pizza', or empty.",
        ),
    ] = ""
    response_detail: PointsDetail = "compact"
    show_ui: ShowUi = False
    limit: Limit = 10
    language: Language | None = None
    countries: Countries | None = None

    @model_validator(mode="after")
    def _empty_query_rule(self) -> PoiSearchInput:
        if self.query.strip():
            return self
        if self.position is not None:
            self.require_some_filter("an empty query")
        elif self.poiCategories is None and self.brandSet is None:
            raise rule("query", "poiCategories", "brandSet", message="an empty query needs categories or brands")
        return self


def build_request(input: PoiSearchInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend: Nearby Search for an
    empty query around `position` (nearest first), else POI Search."""
    query = input.query.strip()
    if not query and input.position is not None:
        path, params = nearby_search(backend, input.position, input.radius)
    else:
        path, params = search_path(backend, f"poiSearch/{query_segment(query)}.json")
        params.update(area_params(input))
    params.update(common_params(input), **poi_params(input), **page_params(input))
    return path, params


async def run(input: PoiSearchInput, context: CallContext) -> Answer:
    return await search(input, context, build_request, input.requested())


TOOL = define_tool(
    name="tomtom-poi-search",
    title="TomTom POI Search",
    description=(
        "POIs (shops, fuel, hotels...) by name, brand or category, nearer `position` first; no query: "
        "nearest by filters alone. Details: tomtom-place-details."
    ),
    input=PoiSearchInput,
    run=run,
    widget=MAP_APP_URI,
)
