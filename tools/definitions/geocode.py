"""tomtom-geocode: an address or place name -> coordinates; or up to `MAX_QUERIES` of them at once.

One `query`: Orbis Geocoding v2, GET `/maps/orbis/places/geocode?query=...` with the headers that
version requires (`orbis_headers`: `TomTom-Api-Version: 2`, `Attributes: results(*)`, and the
language as `Accept-Language`; the client adds `TomTom-Api-Key`); TomTom Maps GET
`/search/2/geocode/{query}.json`. Orbis v2 renames the parameters (`maxResults`,
`countryCodesIso2`, `position` as `lon,lat`, `radiusInMeters`, `bbox`, `types=area` with
`areaTypes`) and answers `{results}`, each result a `type` (`address`, `street`, `area`,
`intersection`), a `title`, an `address` with some members renamed (`street`, `houseNumber`,
`countryCodeIso2`) and its point as GeoJSON. `decode_orbis` reads that answer into TomTom Maps'
layout (`tomtom_maps_result`: TomTom Maps' names, the title as `freeformAddress`, each
`position` as `{lat, lon}`, a `summary`), so compact, `full`, the batch and the map read one
shape on both backends, and refuses (`malformed`) an answer whose results it cannot read.

`queries` (a batch, docs/adr/0032): on TomTom Maps one Synchronous Batch request, POST
`/search/2/batch/sync.json` with `{"batchItems": [{"query": "/geocode/{query}.json?..."}]}`
(TomTom takes up to 100 items and answers each with its own `statusCode` and `response`). Orbis
has no batch service, so there the answer is composed: one Geocode call per address,
`CONCURRENCY` at a time, within the call's one deadline, read as Batch items. Every other input
applies to each address. An item TomTom refuses (a 4xx for that query) or answers with data we
cannot read is that item's error (`invalid_arguments` or `malformed`: a composed item keeps its
code); a refused key, the rate limit or an outage fails the whole
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
from tools.shaping.shape import INTEGER, NUMBER, OBJECT, STRING, Required, compile_spec, expect
from tools.tomtom.backends import Backend
from tools.tomtom.client import TomTomSession, json_object
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


ORBIS_VERSION = 2
"""Orbis Geocoding and Reverse Geocoding version sent (`TomTom-Api-Version`)."""
ORBIS_ATTRIBUTES = "results(*)"
"""The `Attributes` header Orbis v2 requires: every member of every result."""


def orbis_headers(language: str | None) -> dict[str, str]:
    """The headers an Orbis v2 (reverse) geocode request needs besides the key."""
    headers = {"TomTom-Api-Version": str(ORBIS_VERSION), "Attributes": ORBIS_ATTRIBUTES}
    if language is not None:
        headers["Accept-Language"] = language
    return headers


def coordinates(*values: float) -> str:
    """Numbers joined by commas, a whole one as an integer (`5.0` -> `5`), as parameters are sent."""
    return ",".join(str(int(v)) if float(v).is_integer() else str(v) for v in values)


AREA_TYPES: dict[str, str] = {
    "Country": "country",
    "CountrySubdivision": "countrySubdivision",
    "CountrySecondarySubdivision": "countrySecondarySubdivision",
    "CountryTertiarySubdivision": "countryTertiarySubdivision",
    "Municipality": "municipality",
    "MunicipalitySubdivision": "municipalitySubdivision",
    "Neighbourhood": "neighborhood",
    "PostalCodeArea": "postalCode",
}
"""Each geography type (TomTom Maps' `entityType` names, our inputs') as Orbis v2's `areaTypes` spells it."""
ENTITY_TYPES = {area: entity for entity, area in AREA_TYPES.items()}
RESULT_TYPES = {"address": "Point Address", "street": "Street", "area": "Geography", "intersection": "Cross Street"}
"""Orbis v2's result `type` -> TomTom Maps' (the one compact shows on both backends)."""
ADDRESS_NAMES = {
    "houseNumber": "streetNumber",
    "street": "streetName",
    "countryCodeIso2": "countryCode",
    "neighborhood": "neighbourhood",
}
"""The v2 address members TomTom Maps names otherwise; the rest are named alike."""


def area_type(entity: str) -> str:
    """A geography type as Orbis v2's `areaTypes` spells it (`PostalCodeArea` -> `postalCode`)."""
    return AREA_TYPES[entity]


ORBIS_ANSWER = compile_spec(
    {
        "results": [
            {
                "type": STRING,
                "title": STRING,
                "areaType": STRING,
                "address": OBJECT,
                "position": Required({"coordinates": Required([NUMBER])}),
            }
        ]
    }
)
"""What we read of an Orbis v2 (reverse) geocode answer: each result's type, title, area type,
address and GeoJSON point (every other member passes through as sent)."""


def tomtom_maps_result(result: dict[str, Any], lon: float, lat: float) -> dict[str, Any]:
    """One v2 result as TomTom Maps writes one: `type` and address members by their TomTom Maps
    names, the `title` as the `freeformAddress`, an area's type as `entityType`, the point as
    `{lat, lon}`; every other member as sent."""
    item = {**result, "position": {"lat": lat, "lon": lon}}
    if "type" in result:
        item["type"] = RESULT_TYPES.get(result["type"], result["type"])
    if "areaType" in result:
        item["entityType"] = ENTITY_TYPES.get(result["areaType"], result["areaType"])
    address = {ADDRESS_NAMES.get(name, name): value for name, value in (result.get("address") or {}).items()}
    if "freeformAddress" not in address and result.get("title"):
        address["freeformAddress"] = result["title"]
    item["address"] = address
    return item


def orbis_results(content: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An Orbis v2 (reverse) geocode answer and each of its results as TomTom Maps writes one
    (`tomtom_maps_result`); `malformed`, naming the place, when a result has no GeoJSON point
    `[lon, lat]` on the world."""
    body = json_object(content)
    expect(body, ORBIS_ANSWER)
    results = []
    for index, result in enumerate(body.get("results") or []):
        point = result["position"]["coordinates"]
        if len(point) != 2 or not (-180 <= point[0] <= 180 and -90 <= point[1] <= 90):
            raise ToolError(
                ErrorCode.MALFORMED,
                f"TomTom answered with data we cannot read: `results[{index}].position` is not a point"
                " [longitude, latitude] on the world.",
            )
        results.append(tomtom_maps_result(result, point[0], point[1]))
    return body, results


def decode_orbis(content: bytes) -> dict[str, Any]:
    """An Orbis Geocoding v2 answer in TomTom Maps' layout: `{summary, results}` (TomTom's own
    `summary` when it sends one), every other member kept."""
    body, results = orbis_results(content)
    counted = {"numResults": len(results), "totalResults": len(results)}
    summary = body.get("summary")
    return {**body, "summary": {**counted, **summary} if isinstance(summary, dict) else counted, "results": results}


def orbis_params(input: GeocodeInput) -> dict[str, Any]:
    """The Orbis v2 Geocode parameters every address of the call takes (the query added by the caller)."""
    params: dict[str, Any] = {"maxResults": input.per_query}
    if input.countries is not None:
        params["countryCodesIso2"] = ",".join(c.upper() for c in input.countries)
    if input.position is not None:
        params["position"] = coordinates(*input.position)
    if input.radius is not None:
        params["radiusInMeters"] = round(input.radius)
    if input.boundingBox is not None:
        params["bbox"] = coordinates(*input.boundingBox)
    if input.entityTypeSet is not None:  # geographies only, as TomTom Maps' entityTypeSet answers
        params["types"] = "area"
        params["areaTypes"] = ",".join(area_type(e) for e in input.entityTypeSet)
    return params


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
    if backend is Backend.ORBIS:
        return "/maps/orbis/places/geocode", {"query": query, **orbis_params(input)}
    return f"/search/2/geocode/{query_segment(query)}.json", geocode_params(input)


async def geocode_one(query: str, input: GeocodeInput, session: TomTomSession) -> dict[str, Any]:
    """One address's Geocode answer, in TomTom Maps' layout on both backends."""
    if session.backend is Backend.ORBIS:
        headers = orbis_headers(input.language)
        return await session.get(*geocode_request(query, input, Backend.ORBIS), decode=decode_orbis, headers=headers)
    body: dict[str, Any] = await session.get(*geocode_request(query, input, Backend.GENESIS))
    return body


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
                    return {"statusCode": 200, "response": await geocode_one(query, input, session)}
                except ToolError as error:
                    if error.code not in ITEM_ERRORS:
                        raise
                    status = error.data.get("status", 400 if error.code is ErrorCode.INVALID_ARGUMENTS else 502)
                    return {"statusCode": status, "response": {"errorText": error.message}, "code": error.code.value}

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
    if item.get("code") == ErrorCode.MALFORMED.value:  # composed on Orbis: an answer we could not read
        return {"query": query, "error": {"code": ErrorCode.MALFORMED.value, "message": str(said)}}
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
    body = await geocode_one(input.query or "", input, session)
    return answer(input, body if input.response_detail == FULL else compact_search(body), body)


TOOL = define_tool(
    name="tomtom-geocode",
    title="TomTom Geocode",
    description=(
        f"Coordinates of an address or place (street, city, postcode, region), or of up to {MAX_QUERIES} "
        "at once, each answered alone. Businesses: tomtom-poi-search."
    ),
    input=GeocodeInput,
    run=run,
    widget=MAP_APP_URI,
    backend_notes={Backend.ORBIS: "On Orbis: one Geocode request per address."},
)
