"""Inputs the search tools share, and how each becomes a TomTom Search API parameter.

Both backends take the same Search API parameters and answer in the same shapes; only the path
differs: Orbis `/maps/orbis/places/<endpoint>` with `apiVersion=1`, TomTom Maps (Genesis)
`/search/2/<endpoint>`. Every input here reaches the request:

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
from typing import Any
from urllib.parse import quote

from tools.context import CallContext
from tools.definitions.common import FULL, bbox, check_bbox, check_position, detail, exclusive, position, requires
from tools.errors import conflicting
from tools.shaping.search import NOTHING_REQUESTED, Requested, compact_search
from tools.tomtom.backends import Backend

MAX_CATEGORIES = 10
MAX_BRANDS = 10
CONNECTOR_TYPES = [
    "StandardHouseholdCountrySpecific", "IEC62196Type1", "IEC62196Type1CCS", "IEC62196Type2CableAttached",
    "IEC62196Type2Outlet", "IEC62196Type2CCS", "IEC62196Type3", "Chademo", "GBT20234Part2", "GBT20234Part3",
    "IEC60309AC3PhaseRed", "IEC60309AC1PhaseBlue", "IEC60309DCWhite", "Tesla",
]  # fmt: skip
FUEL_TYPES = [
    "Petrol", "LPG", "Diesel", "Biodiesel", "DieselForCommercialVehicles", "E85", "LNG", "CNG", "Hydrogen", "AdBlue",
]  # fmt: skip
POI_FILTERS = ("poiCategories", "brandSet", "connectorSet", "fuelSet", "minPowerKW", "maxPowerKW")
"""The inputs that narrow which POIs come back (nearby search needs at least one)."""


def search_path(backend: Backend, endpoint: str) -> tuple[str, dict[str, Any]]:
    """`poiSearch/{query}.json` -> this backend's path and its fixed parameters."""
    if backend is Backend.ORBIS:
        return f"/maps/orbis/places/{endpoint}", {"apiVersion": 1}
    return f"/search/2/{endpoint}", {}


async def search(
    arguments: dict[str, Any],
    context: CallContext,
    build_request: Callable[[dict[str, Any], Backend], tuple[str, dict[str, Any]]],
    requested: Requested = NOTHING_REQUESTED,
) -> dict[str, Any]:
    """Send this tool's search request; answer TomTom's body (`full`) or its compact form."""
    session = context.tomtom
    body = await session.get(*build_request(arguments, session.backend))
    return body if detail(arguments) == FULL else compact_search(body, requested)


def nearby_search(backend: Backend, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Nearby Search around `position`, within `radius` when given: path and parameters."""
    path, params = search_path(backend, "nearbySearch/.json")
    params["lon"], params["lat"] = arguments["position"]
    if "radius" in arguments:
        params["radius"] = arguments["radius"]
    return path, params


def query_segment(query: str) -> str:
    """A free-text query as one path segment (`/` and `?` encoded)."""
    return quote(query, safe="")


def limit(default: int = 10, maximum: int = 100) -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": maximum,
        "default": default,
        "description": f"Max results (1-{maximum}).",
    }


LANGUAGE = {"type": "string", "description": "IETF language tag, e.g. en-GB."}
COUNTRIES = {
    "type": "array",
    "items": {"type": "string", "pattern": "^[A-Za-z]{2}$"},
    "maxItems": 50,
    "description": "Only these countries (ISO 3166-1 alpha-2).",
}
BIAS_POSITION = position("Prefer results near [longitude, latitude] (a bias, not a boundary).")
CENTRE_POSITION = position("Centre, [longitude, latitude].")
RADIUS = {"type": "integer", "minimum": 1, "description": "Only within this many metres of `position`."}
BOUNDING_BOX = bbox("Only inside [minLon, minLat, maxLon, maxLat]; not with `position`.")
POI_CATEGORIES = {
    "type": "array",
    "items": {"type": "integer", "minimum": 1000, "maximum": 9999999},
    "uniqueItems": True,
    "minItems": 1,
    "maxItems": MAX_CATEGORIES,
    "description": f"Up to {MAX_CATEGORIES} numeric category ids from tomtom-poi-categories (7315 restaurant).",
}
BRAND_SET = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "uniqueItems": True,
    "minItems": 1,
    "maxItems": MAX_BRANDS,
    "description": f"Only these brands (up to {MAX_BRANDS}), e.g. Shell.",
}
CONNECTOR_SET = {
    "type": "array",
    "items": {"type": "string", "enum": CONNECTOR_TYPES},
    "uniqueItems": True,
    "minItems": 1,
    "description": "Only charging stations with one of these connectors.",
}
FUEL_SET = {
    "type": "array",
    "items": {"type": "string", "enum": FUEL_TYPES},
    "uniqueItems": True,
    "minItems": 1,
    "description": "Only fuel stations selling one of these.",
}
MIN_POWER = {"type": "number", "exclusiveMinimum": 0, "description": "Only chargers of at least this many kW."}
MAX_POWER = {"type": "number", "exclusiveMinimum": 0, "description": "Only chargers of at most this many kW."}
OPENING_HOURS = {
    "type": "string",
    "enum": ["nextSevenDays"],
    "description": "Add each POI's opening hours for the next 7 days.",
}
TIME_ZONE = {"type": "string", "enum": ["iana"], "description": "Add each POI's IANA time zone."}


def area_inputs() -> dict[str, Any]:
    """`position` (bias), `radius` and `boundingBox`."""
    return {"position": BIAS_POSITION, "radius": RADIUS, "boundingBox": BOUNDING_BOX}


def poi_filter_inputs(*, fuel: bool = True) -> dict[str, Any]:
    """`poiCategories`, `brandSet`, `connectorSet`, `fuelSet` (unless `fuel=False`) and the power range."""
    inputs: dict[str, Any] = {"poiCategories": POI_CATEGORIES, "brandSet": BRAND_SET, "connectorSet": CONNECTOR_SET}
    if fuel:
        inputs["fuelSet"] = FUEL_SET
    inputs.update(minPowerKW=MIN_POWER, maxPowerKW=MAX_POWER)
    return inputs


def poi_detail_inputs() -> dict[str, Any]:
    return {"openingHours": OPENING_HOURS, "timeZone": TIME_ZONE}


def check_area(arguments: dict[str, Any]) -> None:
    """`radius` needs `position`; `position` and `boundingBox` exclude each other; both are in range."""
    requires(arguments, "radius", "position")
    exclusive(arguments, "position", "boundingBox", message="bias near a position or limit to a box, not both")
    if "position" in arguments:
        check_position("position", arguments["position"])
    if "boundingBox" in arguments:
        check_bbox("boundingBox", arguments["boundingBox"])


def check_power(arguments: dict[str, Any]) -> None:
    low, high = arguments.get("minPowerKW"), arguments.get("maxPowerKW")
    if low is not None and high is not None and low > high:
        raise conflicting("minPowerKW", "maxPowerKW", message="the minimum power is above the maximum")


def check_some_filter(arguments: dict[str, Any], what: str) -> None:
    """At least one POI filter: without one, `what` would list every kind of place."""
    if not any(name in arguments for name in POI_FILTERS):
        raise conflicting(*POI_FILTERS, message=f"{what} needs at least one of these")


def common_params(arguments: dict[str, Any], *, default_limit: int = 10) -> dict[str, Any]:
    """`limit` (always sent, so TomTom's default never differs from ours), `language`, `countrySet`."""
    params: dict[str, Any] = {"limit": arguments.get("limit", default_limit)}
    if "language" in arguments:
        params["language"] = arguments["language"]
    if "countries" in arguments:
        params["countrySet"] = ",".join(code.upper() for code in arguments["countries"])
    return params


def area_params(arguments: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if "position" in arguments:
        params["lon"], params["lat"] = arguments["position"]
    if "radius" in arguments:
        params["radius"] = arguments["radius"]
    if "boundingBox" in arguments:
        min_lon, min_lat, max_lon, max_lat = arguments["boundingBox"]
        params["topLeft"] = f"{max_lat},{min_lon}"
        params["btmRight"] = f"{min_lat},{max_lon}"
    return params


def poi_params(arguments: dict[str, Any]) -> dict[str, Any]:
    """POI filters and optional fields, as TomTom's comma-separated lists."""
    params: dict[str, Any] = {}
    if "poiCategories" in arguments:
        params["categorySet"] = ",".join(str(category) for category in arguments["poiCategories"])
    if "brandSet" in arguments:
        # A brand with a comma in its name travels in double quotes.
        params["brandSet"] = ",".join(f'"{b}"' if "," in b else b for b in arguments["brandSet"])
    for name in ("connectorSet", "fuelSet"):
        if name in arguments:
            params[name] = ",".join(arguments[name])
    for name in ("minPowerKW", "maxPowerKW", "openingHours", "timeZone"):
        if name in arguments:
            params[name] = arguments[name]
    return params


def requested(arguments: dict[str, Any]) -> Requested:
    """The optional fields this call asked TomTom for, which compact then keeps."""
    return Requested(opening_hours="openingHours" in arguments, time_zone="timeZone" in arguments)
