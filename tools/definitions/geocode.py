"""tomtom-geocode: an address or place name -> coordinates."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import (
    FULL,
    BoundingBox,
    Countries,
    Language,
    Limit,
    PointsDetail,
    Position,
    ShowUi,
    answer,
)
from tools.definitions.search_common import query_segment
from tools.inputs import UNIQUE, ToolInput, exclusive, listed_by_example, requires
from tools.shaping.search import compact_search
from tools.tomtom.backends import Backend
from tools.widgets import MAP_APP_URI

EntityType = Literal[
    "Country", "CountrySubdivision", "CountrySecondarySubdivision", "CountryTertiarySubdivision",
    "Municipality", "MunicipalitySubdivision", "Neighbourhood", "PostalCodeArea",
]  # fmt: skip
Entity = Annotated[EntityType, listed_by_example(EntityType, "Municipality", "PostalCodeArea", "Country")]
"""A geography type, listed by example (eight of TomTom's names)."""


class GeocodeInput(ToolInput):
    query: Annotated[str, Field(min_length=1, max_length=400, description="Address or place name.")]
    response_detail: PointsDetail = "compact"
    show_ui: ShowUi = False
    limit: Limit = 10
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
        requires(self, "radius", "position")
        exclusive(self, "position", "boundingBox", message="bias near a position or limit to a box, not both")
        return self


def build_request(input: GeocodeInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    query = query_segment(input.query)
    params: dict[str, Any]
    if backend is Backend.ORBIS:
        path, params = f"/maps/orbis/places/geocode/{query}.json", {"apiVersion": 1}
    else:
        path, params = f"/search/2/geocode/{query}.json", {}
    params["limit"] = input.limit
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
    return path, params


async def run(input: GeocodeInput, context: CallContext) -> Answer:
    session = context.tomtom
    body = await session.get(*build_request(input, session.backend))
    return answer(input, body if input.response_detail == FULL else compact_search(body), body)


TOOL = define_tool(
    name="tomtom-geocode",
    title="TomTom Geocode",
    description=(
        "Coordinates of an address or place name (street, city, postcode, region). "
        "For businesses and other POIs use tomtom-poi-search or tomtom-fuzzy-search."
    ),
    input=GeocodeInput,
    run=run,
    widget=MAP_APP_URI,
)
