"""tomtom-poi-categories: words -> the numeric category ids the search tools take.

Orbis: GET `/maps/orbis/places/poiCategories.json?apiVersion=1`; TomTom Maps: GET
`/search/2/poiCategories.json`. TomTom always answers with its whole taxonomy; `language` is the
only request parameter. `filters` is consumed here: compact keeps the matching categories
(`tools.shaping.categories`); `full` is TomTom's whole list.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions.common import FULL, Language, PointsDetail
from tools.definitions.search_common import search_path
from tools.inputs import ToolInput
from tools.shaping.categories import MAX_MATCHES, compact_categories
from tools.tomtom.backends import Backend

FilterWord = Annotated[str, Field(min_length=1, max_length=100)]


class PoiCategoriesInput(ToolInput):
    filters: list[FilterWord] | None = Field(
        None,
        min_length=1,
        max_length=10,
        description=f"Words, e.g. ['pharmacy']; best {MAX_MATCHES} matches. Without: the top-level categories.",
    )
    language: Language | None = None
    response_detail: PointsDetail = "compact"


def build_request(input: PoiCategoriesInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    path, params = search_path(backend, "poiCategories.json")
    if input.language is not None:
        params["language"] = input.language
    return path, params


async def run(input: PoiCategoriesInput, context: CallContext) -> dict[str, Any]:
    session = context.tomtom
    body = await session.get(*build_request(input, session.backend))
    return body if input.response_detail == FULL else compact_categories(body, input.filters)


TOOL = define_tool(
    name="tomtom-poi-categories",
    title="TomTom POI Categories",
    description=("Category ids (the search tools' poiCategories) for words like 'pharmacy'."),
    input=PoiCategoriesInput,
    run=run,
)
