"""tomtom-reverse-geocode: a [longitude, latitude] point -> the address (or area) there.

Orbis Reverse Geocoding v2: GET `/maps/orbis/places/reverseGeocode?position={lon},{lat}`
(longitude first) with the headers that version requires (`geocode.orbis_headers`: version 2,
`Attributes: results(*)`, the language as `Accept-Language`; the key by the client), its
parameters renamed (`radiusInMeters`, `vehicleHeadingInDegrees`, `areaTypes`); it answers
`{results: [...]}` with GeoJSON points, which `decode_orbis` reads into TomTom Maps' layout.
TomTom Maps: GET `/search/2/reverseGeocode/{lat},{lon}.json`, answering `{summary, addresses:
[...]}` with positions as `"lat,lon"` strings. Inputs: `radius`, `language`, `heading` (prefer
the road being driven; TomTom ignores it for areas, so it cannot be combined with `entityType`),
`entityType` (answer with the enclosing area of that type instead of a street address) and
`returnSpeedLimit` (compact then keeps the address's `speedLimit`; TomTom Maps only: Orbis v2
returns no speed limit, so there the input is not offered and a call sending it is refused).
Orbis v2 has no Cross Street lookup either, and this tool offers none.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import FULL, Language, PointsDetail, Position, ShowUi, answer
from tools.definitions.geocode import Entity, area_type, coordinates, orbis_headers, orbis_results
from tools.definitions.search_common import search_path
from tools.inputs import UNIQUE, ToolInput, exclusive, only_on_backend
from tools.shaping.points import lat_lon_text
from tools.shaping.search import Requested, compact_reverse
from tools.tomtom.backends import Backend
from tools.widgets import MAP_APP_URI


class ReverseGeocodeInput(ToolInput):
    position: Annotated[Position, Field(description="The point, [lon, lat].")]
    response_detail: PointsDetail = "compact"
    show_ui: ShowUi = False
    radius: int | None = Field(None, ge=1, le=20_000_000, description="Only addresses within these metres.")
    language: Language | None = None
    heading: float | None = Field(
        None, ge=0, le=360, description="Degrees from north: prefers the road driven that way."
    )
    entityType: Annotated[list[Entity], Field(min_length=1, max_length=8), UNIQUE] | None = Field(
        None,
        description="Answer with the area of this type, not an address.",
    )
    returnSpeedLimit: Annotated[
        bool, only_on_backend(Backend.ORBIS, why="Orbis Reverse Geocoding v2 returns no speed limit")
    ] = False

    @model_validator(mode="after")
    def _rules(self) -> ReverseGeocodeInput:
        exclusive(self, "entityType", "heading", message="an area lookup takes no heading; give one or the other")
        return self


def orbis_request(input: ReverseGeocodeInput) -> tuple[str, dict[str, Any]]:
    """Orbis Reverse Geocoding v2: the path and query parameters (the language goes in a header)."""
    params: dict[str, Any] = {"position": coordinates(*input.position)}
    if input.radius is not None:
        params["radiusInMeters"] = input.radius
    if input.heading is not None:
        params["vehicleHeadingInDegrees"] = input.heading
    if input.entityType is not None:
        params["areaTypes"] = ",".join(area_type(e) for e in input.entityType)
    return "/maps/orbis/places/reverseGeocode", params


def decode_orbis(content: bytes) -> dict[str, Any]:
    """An Orbis Reverse Geocoding v2 answer in TomTom Maps' layout: `{summary, addresses}`, each
    address's `position` a `"lat,lon"` string, every other member kept."""
    body, results = orbis_results(content)
    addresses = [
        {**result, "position": f"{result['position']['lat']},{result['position']['lon']}"} for result in results
    ]
    rest = {key: value for key, value in body.items() if key != "results"}
    return {**rest, "summary": {"numResults": len(addresses)}, "addresses": addresses}


def build_request(input: ReverseGeocodeInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    if backend is Backend.ORBIS:
        return orbis_request(input)
    path, params = search_path(backend, f"reverseGeocode/{lat_lon_text(input.position)}.json")
    for name in ("radius", "language", "heading"):
        if (value := getattr(input, name)) is not None:
            params[name] = value
    if input.entityType is not None:
        params["entityType"] = ",".join(input.entityType)
    if input.returnSpeedLimit:
        params["returnSpeedLimit"] = True
    return path, params


async def run(input: ReverseGeocodeInput, context: CallContext) -> Answer:
    """The widget draws TomTom's addresses and the point looked up (`lookup`, [lon, lat])."""
    session = context.tomtom
    if session.backend is Backend.ORBIS:
        headers = orbis_headers(input.language)
        body = await session.get(*orbis_request(input), decode=decode_orbis, headers=headers)
    else:
        body = await session.get(*build_request(input, session.backend))
    if input.response_detail == FULL:
        data = body
    else:
        data = compact_reverse(body, Requested(speed_limit=input.returnSpeedLimit))
    return answer(input, data, {**body, "lookup": input.position})


TOOL = define_tool(
    name="tomtom-reverse-geocode",
    title="TomTom Reverse Geocode",
    description=(
        "The address at a point, or the municipality, postcode area or country around it. By name: tomtom-geocode."
    ),
    input=ReverseGeocodeInput,
    run=run,
    widget=MAP_APP_URI,
)
