"""tomtom-poi-categories: words -> the numeric category ids the search tools take.

Orbis: GET `/maps/orbis/places/poiCategories.json?apiVersion=1`; TomTom Maps: GET
`/search/2/poiCategories.json`. TomTom always answers with its whole taxonomy; `language` is the
only request parameter. `filters` is consumed here: compact keeps the matching categories
(`tools.shaping.categories`); `full` is TomTom's whole list.
"""

from __future__ import annotations

from typing import Any

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions.common import FULL, detail, response_detail
from tools.definitions.search_common import LANGUAGE, search_path
from tools.shaping.categories import MAX_MATCHES, compact_categories
from tools.tomtom.backends import Backend

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "filters": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 100},
            "minItems": 1,
            "maxItems": 10,
            "description": f"Words to match in names and synonyms, e.g. ['pharmacy']; best {MAX_MATCHES} "
            "matches. Without: the top-level categories.",
        },
        "language": LANGUAGE,
        "response_detail": response_detail(geometry=False),
    },
    "additionalProperties": False,
}


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    path, params = search_path(backend, "poiCategories.json")
    if "language" in arguments:
        params["language"] = arguments["language"]
    return path, params


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    session = context.tomtom
    path, params = build_request(arguments, session.backend)
    body = await session.get(path, params)
    return body if detail(arguments) == FULL else compact_categories(body, arguments.get("filters"))


TOOL = define_tool(
    name="tomtom-poi-categories",
    title="TomTom POI Categories",
    description=(
        "Turn words like 'pharmacy' or 'charging station' into the numeric category ids that "
        "tomtom-poi-search, tomtom-nearby and tomtom-fuzzy-search take as poiCategories."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
)
