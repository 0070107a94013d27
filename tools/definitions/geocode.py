"""tomtom-geocode: an address or place name -> coordinates; or up to `MAX_QUERIES` of them at once.

One `query`: Orbis GET `/maps/orbis/places/geocode/{query}.json?apiVersion=1`, TomTom Maps GET
`/search/2/geocode/{query}.json`.

`queries` (a batch, docs/adr/0032): on TomTom Maps one Synchronous Batch request, POST
`/search/2/batch/sync.json` with `{"batchItems": [{"query": "/geocode/{query}.json?..."}]}`
(TomTom takes up to 100 items and answers each with its own `statusCode` and `response`). Orbis
has no batch service, so there the answer is composed: one Geocode call per address,
`CONCURRENCY` at a time, within the call's one deadline, read as Batch items. Every other input
applies to each address. An item TomTom refuses (a 4xx for that query) or answers with data we
cannot read is that item's error; a refused key, the rate limit or an outage fails the whole
call, since every item would fail alike. Compact: `items` in order, each `{query, results}` or
`{query, error}`, with `total`, `succeeded`, `failed`; `full` is the Batch answer.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from pydantic import Field, model_validator

from core.errors import ErrorCode, ToolError
from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import (
    FULL,
    BoundingBox,
    Countries,
    Language,
    PointsDetail,
    Position,
    ShowUi,
    answer,
)
from tools.definitions.search_common import query_segment
from tools.inputs import UNIQUE, ToolInput, exactly_one, exclusive, listed_by_example, requires
from tools.shaping.search import compact_search
from tools.shaping.shape import INTEGER, OBJECT, compile_spec, expect
from tools.tomtom.backends import Backend
from tools.tomtom.client import TomTomSession
from tools.widgets import MAP_APP_URI

EntityType = Literal[
    "Country",
    "CountrySubdivision",
    "CountrySecondarySubdivision",
    "CountryTertiarySubdivision",
    "Municipality",
    "MunicipalitySubdivision",
    "Neighbourhood",
    "PostalCodeArea",
]
Entity = Annotated[EntityType, listed_by_example(EntityType, "Municipality", "PostalCodeArea", "Country")]
"""A geography type, listed by example (eight of TomTom's names)."""
MAX_QUERIES = 100
"""TomTom's Synchronous Batch limit, and ours on both backends."""
CONCURRENCY = 4
"""Orbis Geocode calls in flight at once for one batch."""
ITEM_ERRORS = frozenset({ErrorCode.INVALID_ARGUMENTS, ErrorCode.MALFORMED})
"""Errors that belong to one item of a batch; any other fails the call."""
BATCH_ANSWER = compile_spec({"batchItems": [{"statusCode": INTEGER, "response": OBJECT}]})
Query = Annotated[str, Field(min_length=1, max_length=400)]


class GeocodeInput(ToolInput):
    query: Annotated[Query, Field(description="Address or place name.")] | None = None
    queries: (
        Annotated[
            list[Query],
            Field(min_length=1, max_length=MAX_QUERIES, description=f"Or up to {MAX_QUERIES}, each answered alone."),
        ]
        | None
    ) = None
    response_detail: PointsDetail = "compact"
    show_ui: ShowUi = False
    limit: int | None = Field(None, ge=1, le=100, description="Results each; default 10, with queries 1.")
    language: Language | None = None
    countries: Countries | None = None
    position: Position | None = Field(None, description="Prefer results near [lon, lat].")
    radius: float | None = Field(None, gt=0, le=20_000_000, description="Metres around `position`.")
    boundingBox: BoundingBox | None = Field(None, description="Only inside [minLon, minLat, maxLon, maxLat].")
    entityTypeSet: Annotated[list[Entity], Field(max_length=8), UNIQUE] | None = Field(
        None, description="Only these geography types."
    )

    @model_validator(mode="after")
    def _rules(self) -> GeocodeInput:
        exactly_one(self, "query", "queries", what="query (or queries)")
        requires(self, "radius", "position")
        exclusive(self, "position", "boundingBox", message="bias near a position or limit to a box, not both")
        return self

    @property
    def per_query(self) -> int:
        """Results asked for each address."""
        return self.limit if self.limit is not None else (1 if self.queries is not None else 10)


def geocode_params(input: GeocodeInput) -> dict[str, Any]:
    """The Geocode parameters every address of the call takes (the backend's own added by the caller)."""
    params: dict[str, Any] = {"limit": input.per_query}
    if input.language is not None:
        params["language"] = input.language
    if input.countries is not None:
        params["countrySet"] = ",".join(c.upper() for c in input.countries)
    if input.position is not None:
        params["lon"], params["lat"] = input.position
    if input.radius is not None:
        params["radius"] = round(input.radius)
    if input.boundingBox is not None:
        min_lon, min_lat, max_lon, max_lat = input.boundingBox
        params["topLeft"] = f"{max_lat},{min_lon}"
        params["btmRight"] = f"{min_lat},{max_lon}"
    if input.entityTypeSet is not None:
        params["entityTypeSet"] = ",".join(input.entityTypeSet)
    return params


def geocode_request(query: str, input: GeocodeInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """One Geocode request: the path and query parameters for `query` on this backend."""
    segment = query_segment(query)
    if backend is Backend.ORBIS:
        return f"/maps/orbis/places/geocode/{segment}.json", {"apiVersion": 1, **geocode_params(input)}
    return f"/search/2/geocode/{segment}.json", geocode_params(input)


def build_request(input: GeocodeInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters of a single-address call on this backend."""
    return geocode_request(input.query or "", input, backend)


def batch_request(input: GeocodeInput) -> tuple[str, dict[str, Any]]:
    """TomTom Maps' Synchronous Batch: the path and the body, one Geocode item per query."""
    parameters = urlencode(geocode_params(input))
    items = [{"query": f"/geocode/{query_segment(q)}.json?{parameters}"} for q in input.queries or ()]
    return "/search/2/batch/sync.json", {"batchItems": items}


async def batch(input: GeocodeInput, session: TomTomSession) -> dict[str, Any]:
    """The Batch answer, `{"batchItems": [{"statusCode", "response"}], ...}`, one item per query
    in order: TomTom's on TomTom Maps, composed from one Geocode call each on Orbis."""
    queries = input.queries or []
    if session.backend is Backend.GENESIS:
        body: dict[str, Any] = await session.post(*batch_request(input))
    else:
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(query: str) -> dict[str, Any]:
            async with gate:
                try:
                    return {
                        "statusCode": 200,
                        "response": await session.get(*geocode_request(query, input, Backend.ORBIS)),
                    }
                except ToolError as error:
                    if error.code not in ITEM_ERRORS:
                        raise
                    return {"statusCode": error.data.get("status", 400), "response": {"errorText": error.message}}

        body = {"batchItems": list(await asyncio.gather(*(one(q) for q in queries)))}
    expect(body, BATCH_ANSWER)
    if len(body.get("batchItems") or []) != len(queries):
        raise ToolError(
            ErrorCode.MALFORMED,
            f"TomTom answered {len(body.get('batchItems') or [])} items for {len(queries)} queries.",
        )
    return body


def compact_item(query: str, item: dict[str, Any]) -> dict[str, Any]:
    """One address of a batch: its compact results, or its own error."""
    status, response = item.get("statusCode"), item.get("response") or {}
    if status == 200:
        try:
            return {"query": query, "results": compact_search(response)["results"]}
        except ToolError as error:
            return {"query": query, "error": {"code": error.code.value, "message": error.message}}
    said = response.get("errorText")
    if not said and isinstance(response.get("error"), dict):
        said = response["error"].get("description")
    code = ErrorCode.INVALID_ARGUMENTS if isinstance(status, int) and 400 <= status < 500 else ErrorCode.UNAVAILABLE
    message = f"TomTom refused this query (status {status})" + (f": {str(said)[:300]}" if said else ".")
    return {"query": query, "error": {"code": code.value, "message": message}}


def compact_batch(input: GeocodeInput, body: dict[str, Any]) -> dict[str, Any]:
    items = [compact_item(q, item or {}) for q, item in zip(input.queries or [], body["batchItems"], strict=True)]
    failed = sum(1 for item in items if "error" in item)
    return {"items": items, "total": len(items), "succeeded": len(items) - failed, "failed": failed}


def batch_places(body: dict[str, Any]) -> dict[str, Any]:
    """What the widget draws for a batch: every answered item's results as one search answer."""
    results = [
        result
        for item in body["batchItems"]
        if isinstance(item, dict) and item.get("statusCode") == 200
        for result in (item.get("response") or {}).get("results") or []
    ]
    return {"summary": {"numResults": len(results), "totalResults": len(results)}, "results": results}


async def run(input: GeocodeInput, context: CallContext) -> Answer:
    session = context.tomtom
    if input.queries is not None:
        body = await batch(input, session)
        return answer(input, body if input.response_detail == FULL else compact_batch(input, body), batch_places(body))
    body = await session.get(*build_request(input, session.backend))
    return answer(input, body if input.response_detail == FULL else compact_search(body), body)


TOOL = define_tool(
    name="tomtom-geocode",
    title="TomTom Geocode",
    description=(
        f"Coordinates of an address or place name (street, city, postcode, region), or of up to {MAX_QUERIES} "
        "at once, each with its results or its own error. For businesses use tomtom-poi-search."
    ),
    input=GeocodeInput,
    run=run,
    widget=MAP_APP_URI,
    backend_notes={Backend.ORBIS: "On Orbis: one Geocode request per address."},
)
