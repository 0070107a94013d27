"""tomtom-fuzzy-search: free text -> addresses, streets, areas and POIs, typo-tolerant.

Orbis: GET `/maps/orbis/places/search/{query}.json?apiVersion=1`; TomTom Maps: GET
`/search/2/search/{query}.json`. The shared search inputs (`tools.definitions.search_common`)
plus `idxSet`, which restricts the kinds of result (TomTom's index names). It pages: `cursor`
(an answer's `nextCursor`) becomes `ofs`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import Countries, Language, Limit, PointsDetail, ShowUi
from tools.definitions.search_common import (
    AreaInputs,
    PagedSearch,
    PoiCategories,
    Query,
    area_params,
    common_params,
    page_params,
    poi_params,
    query_segment,
    search,
    search_path,
)
from tools.inputs import UNIQUE
from tools.tomtom.backends import Backend
from tools.widgets import MAP_APP_URI

Index = Literal["Geo", "PAD", "Addr", "Str", "XStr", "POI"]


class FuzzySearchInput(PagedSearch, AreaInputs):
    query: Query
    response_detail: PointsDetail = "compact"
    show_ui: ShowUi = False
    limit: Limit = 10
    language: Language | None = None
    countries: Countries | None = None
    poiCategories: PoiCategories | None = None
    idxSet: Annotated[list[Index], Field(min_length=1), UNIQUE] | None = Field(
        None,
        description="Only: Geo areas, PAD addresses, Addr ranges, Str streets, XStr crossings, POI.",
    )


def build_request(input: FuzzySearchInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    path, params = search_path(backend, f"search/{query_segment(input.query)}.json")
    params.update(common_params(input), **area_params(input), **poi_params(input), **page_params(input))
    if input.idxSet is not None:
        params["idxSet"] = ",".join(input.idxSet)
    return path, params


async def run(input: FuzzySearchInput, context: CallContext) -> Answer:
    return await search(input, context, build_request)


TOOL = define_tool(
    name="tomtom-fuzzy-search",
    title="TomTom Fuzzy Search",
    description=(
        "Free text over addresses, places and POIs at once, typos tolerated. An address: tomtom-geocode; "
        "businesses: tomtom-poi-search."
    ),
    input=FuzzySearchInput,
    run=run,
    widget=MAP_APP_URI,
)
