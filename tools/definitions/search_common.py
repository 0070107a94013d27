"""Inputs the search tools share, and how each becomes a TomTom Search API parameter.

The shared inputs are types and groups of inputs (`ToolInput` mixins a tool's model inherits:
`AreaInputs`, `PoiFilters`, `PoiDetails`). Both backends take the same Search API parameters
and answer in the same shapes; only the path differs: Orbis `/maps/orbis/places/<endpoint>`
with `apiVersion=1`, TomTom Maps (Genesis) `/search/2/<endpoint>`. Every input here reaches the request:

- location: `position` -> `lat`/`lon` (a bias: nearer results rank higher), `radius` -> `radius`
  (with `position`: only results inside that circle), `boundingBox` -> `topLeft`/`btmRight`;
- `limit`, `language`, `countries` -> `limit`, `language`, `countrySet`;
- POI filters: `poiCategories` -> `categorySet` (numeric category ids, see below), `brandSet`,
  `connectorSet`, `fuelSet`, `minPowerKW`, `maxPowerKW`;
- optional fields: `openingHours` and `timeZone` ask TomTom for them; compact keeps them only then.

Categories are TomTom's numeric ids (7315 restaurant, 7309 charging station), exactly what
`categorySet` takes on both backends: `tomtom-poi-categories` turns words into ids. We do not
accept the maps-sdk's category codes, which would need a second lookup on every call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal
from urllib.parse import quote

from pydantic import Field, model_validator

from tools.context import CallContext
from tools.definition import Answer
from tools.definitions.common import FULL, BoundingBox, Position, answer
from tools.inputs import UNIQUE, ToolInput, exclusive, listed_by_example, requires, rule
from tools.shaping.search import NOTHING_REQUESTED, Requested, compact_search
from tools.tomtom.backends import Backend

MAX_CATEGORIES = 10
MAX_BRANDS = 10
ConnectorType = Literal[
    "StandardHouseholdCountrySpecific",
    "IEC62196Type1",
    "IEC62196Type1CCS",
    "IEC62196Type2CableAttached",
    "IEC62196Type2Outlet",
    "IEC62196Type2CCS",
    "IEC62196Type3",
    "Chademo",
    "GBT20234Part2",
    "GBT20234Part3",
    "IEC60309AC3PhaseRed",
    "IEC60309AC1PhaseBlue",
    "IEC60309DCWhite",
    "Tesla",
]
FuelType = Literal[
    "Petrol",
    "LPG",
    "Diesel",
    "Biodiesel",
    "DieselForCommercialVehicles",
    "E85",
    "LNG",
    "CNG",
    "Hydrogen",
    "AdBlue",
]
POI_FILTERS = ("poiCategories", "brandSet", "connectorSet", "fuelSet", "minPowerKW", "maxPowerKW")
"""The inputs that narrow which POIs come back (nearby search needs at least one)."""

Query = Annotated[str, Field(min_length=1, max_length=400)]
BiasPosition = Annotated[Position, Field(description="Prefer results near [lon, lat] (not a boundary).")]
CentrePosition = Annotated[Position, Field(description="Centre, [lon, lat].")]
Radius = Annotated[int, Field(ge=1, le=20_000_000, description="Only within these metres of `position`.")]
PoiCategories = Annotated[
    list[Annotated[int, Field(ge=1000, le=9999999)]],
    Field(
        min_length=1,
        max_length=MAX_CATEGORIES,
        description="Ids from tomtom-poi-categories, e.g. 7315.",
    ),
    UNIQUE,
]
BrandSet = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=100)]],
    Field(min_length=1, max_length=MAX_BRANDS),
    UNIQUE,
]
ConnectorSet = Annotated[
    list[Annotated[ConnectorType, listed_by_example(ConnectorType, "IEC62196Type2CCS", "Chademo", "Tesla")]],
    Field(min_length=1, max_length=14),
    UNIQUE,
]
FuelSet = Annotated[
    list[Annotated[FuelType, listed_by_example(FuelType, "Petrol", "Diesel", "LPG")]],
    Field(min_length=1, max_length=10),
    UNIQUE,
]
MinPower = Annotated[float, Field(gt=0, le=10_000)]
MaxPower = Annotated[float, Field(gt=0, le=10_000)]
OpeningHours = Literal["nextSevenDays"]
"""Add each POI's opening hours for the next 7 days (the name and value say so: listed bare)."""
TimeZone = Literal["iana"]
"""Add each POI's IANA time zone."""


class AreaInputs(ToolInput):
    """`position` (a bias), `radius` (with `position`: only inside that circle) and `boundingBox`."""

    position: BiasPosition | None = None
    radius: Radius | None = None
    boundingBox: BoundingBox | None = Field(None, description="Only inside [minLon, minLat, maxLon, maxLat].")

    @model_validator(mode="after")
    def _area_rules(self) -> AreaInputs:
        requires(self, "radius", "position")
        exclusive(self, "position", "boundingBox", message="bias near a position or limit to a box, not both")
        return self


class PoiFilters(ToolInput):
    """`poiCategories`, `brandSet`, `connectorSet`, `fuelSet` and the charging-power range."""

    poiCategories: PoiCategories | None = None
    brandSet: BrandSet | None = None
    connectorSet: ConnectorSet | None = None
    fuelSet: FuelSet | None = None
    minPowerKW: MinPower | None = None
    maxPowerKW: MaxPower | None = None

    @model_validator(mode="after")
    def _power_rule(self) -> PoiFilters:
        if self.minPowerKW is not None and self.maxPowerKW is not None and self.minPowerKW > self.maxPowerKW:
            raise rule("minPowerKW", "maxPowerKW", message="the minimum power is above the maximum")
        return self

    def require_some_filter(self, what: str) -> None:
        """At least one POI filter: without one, `what` would list every kind of place."""
        if not self.given_any(POI_FILTERS):
            raise rule(*POI_FILTERS, message=f"{what} needs at least one of these")


class PoiDetails(ToolInput):
    """`openingHours` and `timeZone`: optional fields TomTom adds when asked (compact keeps them then)."""

    openingHours: OpeningHours | None = None
    timeZone: TimeZone | None = None

    def requested(self) -> Requested:
        return Requested(opening_hours=self.openingHours is not None, time_zone=self.timeZone is not None)


def search_path(backend: Backend, endpoint: str) -> tuple[str, dict[str, Any]]:
    """`poiSearch/{query}.json` -> this backend's path and its fixed parameters."""
    if backend is Backend.ORBIS:
        return f"/maps/orbis/places/{endpoint}", {"apiVersion": 1}
    return f"/search/2/{endpoint}", {}


async def search[I: ToolInput](
    input: I,
    context: CallContext,
    build_request: Callable[[I, Backend], tuple[str, dict[str, Any]]],
    requested: Requested = NOTHING_REQUESTED,
) -> Answer:
    """Send this tool's search request; answer TomTom's body (`full`) or its compact form, and
    the body as the widget's app data when the input asks for the map (`show_ui`)."""
    session = context.tomtom
    body = await session.get(*build_request(input, session.backend))
    data = body if getattr(input, "response_detail", None) == FULL else compact_search(body, requested)
    return answer(input, data, body)


def nearby_search(backend: Backend, position: list[float], radius: int | None) -> tuple[str, dict[str, Any]]:
    """Nearby Search around `position`, within `radius` when given: path and parameters."""
    path, params = search_path(backend, "nearbySearch/.json")
    params["lon"], params["lat"] = position
    if radius is not None:
        params["radius"] = radius
    return path, params


def query_segment(query: str) -> str:
    """A free-text query as one path segment, percent-encoded whole (every character but the
    unreserved `A-Z a-z 0-9 - . _ ~`, UTF-8), as TomTom asks: reserved characters such as `;`,
    `=`, `&`, `,`, `/` or `?` never reach it as delimiters."""
    return quote(query, safe="")


def common_params(input: ToolInput) -> dict[str, Any]:
    """`limit` (always sent, so TomTom's default never differs from ours), `language`, `countrySet`."""
    params: dict[str, Any] = {"limit": getattr(input, "limit")}  # noqa: B009 - every search input has a limit
    language, countries = getattr(input, "language", None), getattr(input, "countries", None)
    if language is not None:
        params["language"] = language
    if countries is not None:
        params["countrySet"] = ",".join(code.upper() for code in countries)
    return params


def area_params(input: AreaInputs) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if input.position is not None:
        params["lon"], params["lat"] = input.position
    if input.radius is not None:
        params["radius"] = input.radius
    if input.boundingBox is not None:
        min_lon, min_lat, max_lon, max_lat = input.boundingBox
        params["topLeft"] = f"{max_lat},{min_lon}"
        params["btmRight"] = f"{min_lat},{max_lon}"
    return params


def poi_params(input: ToolInput) -> dict[str, Any]:
    """POI filters and optional fields given, as TomTom's comma-separated lists (a tool may
    take only some of them: `poiCategories` and `brandSet`, say)."""
    values: dict[str, Any] = {name: getattr(input, name, None) for name in (*POI_FILTERS, "openingHours", "timeZone")}
    params: dict[str, Any] = {}
    if values["poiCategories"] is not None:
        params["categorySet"] = ",".join(str(category) for category in values["poiCategories"])
    if values["brandSet"] is not None:
        # A brand with a comma in its name travels in double quotes.
        params["brandSet"] = ",".join(f'"{b}"' if "," in b else b for b in values["brandSet"])
    for name in ("connectorSet", "fuelSet"):
        if values[name] is not None:
            params[name] = ",".join(values[name])
    for name in ("minPowerKW", "maxPowerKW", "openingHours", "timeZone"):
        if values[name] is not None:
            params[name] = values[name]
    return params
