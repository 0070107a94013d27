"""tomtom-routing: a route through two or more ordered locations.

Also the Routing API's shared vocabulary: the inputs other routing tools take as they are
(`RouteType`, `Traffic`, `Avoid`, `DepartAt`, `ArriveAt`, the `RouteOptions` group),
`routing_service`, each backend's names for them on the v2-style services, and `build_request`
/ `calculate_route`, the one way any tool asks for a route.

Calculate Route per backend:

- TomTom Maps: GET `/routing/1/calculateRoute/{lat,lon:...}/json` (a POST whose body carries
  `avoidAreas` when given), `sectionType=traffic` (every type for `full`).
- Orbis: Routing v3, generally available: POST `/maps/orbis/routing/routes/calculate` with
  `TomTom-Api-Version: 3` and an `Attributes` header naming the parts wanted; the JSON body is
  the whole request: `routePlanningLocations` (GeoJSON, [lon, lat]: origin, destination, the
  stops between as `waypoints`), `routeType`, `traffic`, `avoids`, `avoidAreas` (Features with a
  `bbox`), `departureDateTime` / `arrivalDateTime`, `maxPathAlternativeRoutes`,
  `vehicleHeadingInDegrees`. v3 answers in its own words (tools.shaping.routes): the compact,
  geometry and widget answers are translated into the shape both backends share, so callers see
  the same answer on both; `full` is TomTom's own v3 answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import BoundingBox, GeometryDetail, Position, ShowUi, answer
from tools.inputs import UNIQUE, ToolInput, exclusive, listed_by_example, only_on_backend, problem, rule
from tools.shaping.geometry import decode_route_geometry, feature, route_features, with_geometry
from tools.shaping.points import lat_lon_text
from tools.shaping.routes import (
    compact_routes,
    decode_compact_routes,
    decode_compact_routes_v3,
    decode_routes_and_lines_v3,
    decode_shared_routes,
    decode_v3_with_shared,
)
from tools.tomtom.backends import Backend
from tools.tomtom.client import TomTomSession, json_object
from tools.widgets import MAP_APP_URI

AvoidOption = Literal[
    "tollRoads",
    "motorways",
    "ferries",
    "unpavedRoads",
    "carpools",
    "alreadyUsedRoads",
    "borderCrossings",
    "tunnels",
    "carTrains",
    "lowEmissionZones",
]
LoadType = Literal[
    "USHazmatClass1",
    "USHazmatClass2",
    "USHazmatClass3",
    "USHazmatClass4",
    "USHazmatClass5",
    "USHazmatClass6",
    "USHazmatClass7",
    "USHazmatClass8",
    "USHazmatClass9",
    "otherHazmatExplosive",
    "otherHazmatGeneral",
    "otherHazmatHarmfulToWater",
]
"""TomTom's `vehicleLoadType` values (Calculate Route, TomTom Maps: US Hazmat classes and three others)."""
VEHICLE_PARAMS = {
    "weightKg": "vehicleWeight",
    "axleWeightKg": "vehicleAxleWeight",
    "lengthM": "vehicleLength",
    "widthM": "vehicleWidth",
    "heightM": "vehicleHeight",
}
"""Each `vehicle` dimension and the Calculate Route parameter it becomes (kilograms, metres)."""
GENESIS_ROUTE_TYPES = {"fast": "fastest", "short": "shortest", "efficient": "eco", "thrilling": "thrilling"}
MAX_LOCATIONS = 150
MAX_AVOID_AREAS = 10
"""Rectangles one request may avoid (docs/adr/0012: TomTom's Routing API limit)."""
MAX_AVOID_SIDE_KM = 160
"""The longest side of one avoided rectangle (docs/adr/0012)."""
GENESIS_FULL_SECTIONS = (
    "carTrain",
    "country",
    "ferry",
    "motorway",
    "pedestrian",
    "tollRoad",
    "tollVignette",
    "traffic",
    "travelMode",
    "tunnel",
    "carpool",
    "urban",
    "unpaved",
    "lowEmissionZone",
)
"""`sectionType` for `full` on TomTom Maps: every section type it documents (compact asks for traffic only)."""
ORBIS_PREVIEW = "On this backend a TomTom public preview (Orbis Routing v2): answers may change."
"""The listing note of a routing tool Orbis serves only from its v2 public preview (no v3 yet):
Calculate Reachable Range, Calculate Long Distance EV Route."""
ORBIS_ROUTE_PATH = "/maps/orbis/routing/routes/calculate"
"""Orbis Routing v3's Calculate Route: POST only, the whole request in the JSON body."""
ORBIS_ROUTE_VERSION = "3"
"""Sent as the `TomTom-Api-Version` header (Orbis takes it there or as `apiVersion`)."""
ORBIS_ATTRIBUTES = {
    "compact": "routes(summary,legs(summary,path),sections)",
    "full": (
        "routes(summary,legs(summary,path),sections,sections.tollVignette,sections.importantRoadStretch,progressPoints)"
    ),
    "summary": "routes(summary)",
}
"""The `Attributes` header: the parts of a v3 answer asked for. Compact and geometry read the
summaries, each leg's line and the traffic sections; `full` adds the section types v3 returns
only when named; the composed matrix reads the summary alone. v3 takes no `sectionType`."""
ORBIS_BODY_NAMES = {
    "avoid": "avoids",
    "departAt": "departureDateTime",
    "arriveAt": "arrivalDateTime",
    "maxAlternatives": "maxPathAlternativeRoutes",
    "vehicleHeading": "vehicleHeadingInDegrees",
}
"""Each routing input Orbis v3 takes in its body, and its v3 name there."""


def _date_time(value: str) -> str:
    if value != "now":
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise problem(f"{value!r} is not an ISO 8601 date-time such as 2026-12-01T08:30:00+01:00") from None
    return value


def _arrival(value: str) -> str:
    if value == "now":
        raise problem("'now' is a departure time; give the ISO 8601 date-time to arrive by")
    return _date_time(value)


def _avoidable(value: list[float]) -> list[float]:
    min_lon, min_lat, max_lon, max_lat = value
    if min_lon > max_lon:
        raise problem("must not cross the antimeridian (minLon is east of maxLon)")
    mean_lat = math.radians((min_lat + max_lat) / 2)
    width, height = (max_lon - min_lon) * 111.32 * math.cos(mean_lat), (max_lat - min_lat) * 110.57
    if max(width, height) > MAX_AVOID_SIDE_KM:
        raise problem(f"is about {width:,.0f} by {height:,.0f} km; each side may be at most {MAX_AVOID_SIDE_KM} km")
    return value


RouteType = Literal["fast", "short", "efficient", "thrilling"]
TrafficMode = Literal["live", "historical"]
"""live: today's traffic; historical: typical traffic for the time (the values say it: listed bare)."""
ORBIS_CARS_ONLY = only_on_backend(Backend.ORBIS, "car", why="Orbis plans routes for cars only")
"""What Orbis's Routing API takes as `travelMode` (its documentation: car only)."""
TravelMode = Annotated[Literal["car", "truck", "pedestrian", "bicycle"], ORBIS_CARS_ONLY]
Avoid = Annotated[
    list[Annotated[AvoidOption, listed_by_example(AvoidOption, "tollRoads", "motorways", "ferries")]],
    Field(max_length=10),
    UNIQUE,
]
DepartAt = Annotated[str, Field(max_length=40, description="ISO 8601 date-time, or `now`."), AfterValidator(_date_time)]
ArriveAt = Annotated[
    str, Field(max_length=40, description="ISO 8601 date-time to arrive by."), AfterValidator(_arrival)
]
AvoidAreas = Annotated[
    list[Annotated[BoundingBox, AfterValidator(_avoidable)]],
    Field(
        min_length=1,
        max_length=MAX_AVOID_AREAS,
        description=f"[[minLon, minLat, maxLon, maxLat], ...], sides up to {MAX_AVOID_SIDE_KM} km.",
    ),
]
Locations = Annotated[
    list[Position],
    Field(
        min_length=2,
        max_length=MAX_LOCATIONS,
        description="Stops in order: [[lon, lat], ...].",
    ),
]


class Vehicle(ToolInput):
    """The truck a route is planned for (TomTom Maps' Calculate Route `vehicle*` parameters)."""

    weightKg: int | None = Field(None, ge=1, le=200_000)
    axleWeightKg: int | None = Field(None, ge=1, le=100_000)
    lengthM: float | None = Field(None, gt=0, le=50)
    widthM: float | None = Field(None, gt=0, le=10)
    heightM: float | None = Field(None, gt=0, le=10)
    commercial: bool = False
    loadType: (
        Annotated[
            list[Annotated[LoadType, listed_by_example(LoadType, "USHazmatClass3", "otherHazmatGeneral")]],
            Field(min_length=1, max_length=12),
            UNIQUE,
        ]
        | None
    ) = None

    def params(self) -> dict[str, Any]:
        """The Calculate Route parameters for this vehicle (a load type list repeats the parameter)."""
        params: dict[str, Any] = {
            VEHICLE_PARAMS[name]: getattr(self, name) for name in VEHICLE_PARAMS if getattr(self, name) is not None
        }
        if self.commercial:
            params["vehicleCommercial"] = True
        if self.loadType is not None:
            params["vehicleLoadType"] = list(self.loadType)
        return params


TruckVehicle = Annotated[
    Vehicle,
    only_on_backend(Backend.ORBIS, why="Orbis plans routes for cars only"),
    Field(description="For travelMode truck."),
]


class RouteOptions(ToolInput):
    """How a route is planned: the inputs every Routing API service takes."""

    routeType: RouteType = "fast"
    travelMode: TravelMode = "car"
    traffic: TrafficMode = "live"


class RoutingInput(RouteOptions):
    locations: Locations
    response_detail: GeometryDetail = "compact"
    show_ui: ShowUi = False
    avoid: Avoid | None = None
    avoidAreas: AvoidAreas | None = None
    departAt: DepartAt | None = None
    arriveAt: ArriveAt | None = None
    maxAlternatives: int = Field(0, ge=0, le=5)
    vehicleHeading: int | None = Field(None, ge=0, le=359, description="Degrees from north.")
    vehicle: TruckVehicle | None = None

    @model_validator(mode="after")
    def _rules(self) -> RoutingInput:
        exclusive(self, "departAt", "arriveAt", message="a route can leave at a time or arrive by one, not both")
        if self.vehicle is not None and self.travelMode != "truck":
            raise rule("vehicle", "travelMode", message="a vehicle is routed as a truck: send travelMode truck")
        if self.arriveAt is not None and self.maxAlternatives:
            raise rule("maxAlternatives", "arriveAt", message="alternatives cannot be computed with `arriveAt`")
        return self


def routing_service(service: str, where: str, options: RouteOptions, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path of a v2-style Routing API `service` (`calculateRoute` on TomTom Maps,
    `calculateReachableRange` on both) at `where`, and the route type, traffic and travel mode in
    the backend's own vocabulary. On Orbis it is the v2 public preview (`apiVersion=2`), the only
    version of Calculate Reachable Range there; Calculate Route moved to v3 (`build_request`).
    Orbis plans for cars only and takes no travel mode (`ORBIS_CARS_ONLY` refuses the others)."""
    if backend is Backend.ORBIS:
        return (
            f"/maps/orbis/routing/{service}/{where}/json",
            {"apiVersion": 2, "routeType": options.routeType, "traffic": options.traffic},
        )
    return (
        f"/routing/1/{service}/{where}/json",
        {
            "routeType": GENESIS_ROUTE_TYPES[options.routeType],
            "traffic": options.traffic == "live",
            "travelMode": options.travelMode,
        },
    )


@dataclass(frozen=True, slots=True)
class RouteRequest:
    """One Calculate Route request as sent: a GET when there is no body, else a POST.

    TomTom Maps: `/routing/1/calculateRoute/{lat,lon:...}/json` with parameters, a body only to
    carry `avoidAreas`. Orbis: Routing v3, always a POST of `ORBIS_ROUTE_PATH` whose JSON body is
    the whole request and whose headers carry the version and the parts of the answer wanted;
    it answers in v3's shape (`v3`), which `calculate_route` translates."""

    path: str
    params: dict[str, Any]
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def v3(self) -> bool:
        return self.path == ORBIS_ROUTE_PATH


def planning_locations(locations: Sequence[Sequence[float]]) -> dict[str, Any]:
    """v3's `routePlanningLocations`: GeoJSON ([lon, lat], as our inputs already are) origin and
    destination Points, and the stops between them, in order, as one MultiPoint."""
    where: dict[str, Any] = {
        "origin": {"type": "Point", "coordinates": list(locations[0])},
        "destination": {"type": "Point", "coordinates": list(locations[-1])},
    }
    if len(locations) > 2:
        where["waypoints"] = {"type": "MultiPoint", "coordinates": [list(point) for point in locations[1:-1]]}
    return where


def orbis_avoid_areas(areas: Sequence[Sequence[float]]) -> dict[str, Any]:
    """v3's `avoidAreas`: each rectangle a GeoJSON Feature with its `bbox` and no geometry."""
    return {"rectangles": [{"type": "Feature", "bbox": list(area), "geometry": None} for area in areas]}


def _orbis_request(
    locations: Sequence[Sequence[float]],
    options: RouteOptions,
    extra: dict[str, Any],
    areas: Sequence[Sequence[float]] | None,
    attributes: str,
) -> RouteRequest:
    body: dict[str, Any] = {
        "routePlanningLocations": planning_locations(locations),
        "routeType": options.routeType,
        "traffic": options.traffic,
    }
    body.update({ORBIS_BODY_NAMES[name]: value for name, value in extra.items() if value is not None})
    if areas:
        body["avoidAreas"] = orbis_avoid_areas(areas)
    headers = {"TomTom-Api-Version": ORBIS_ROUTE_VERSION, "Attributes": attributes}
    return RouteRequest(ORBIS_ROUTE_PATH, {}, body, headers)


def build_request(
    locations: Sequence[Sequence[float]],
    options: RouteOptions,
    backend: Backend,
    *,
    avoid: Sequence[str] | None = None,
    avoidAreas: Sequence[Sequence[float]] | None = None,
    departAt: str | None = None,
    arriveAt: str | None = None,
    maxAlternatives: int = 0,
    vehicleHeading: int | None = None,
    vehicle: Vehicle | None = None,
    full: bool = False,
    summary_only: bool = False,
) -> RouteRequest:
    """Calculate Route through `locations` (also for the tools that plan a route on the way to
    their answer: search along route, the composed matrix, the dynamic map's plans). Compact
    answers need the traffic sections only; `full` asks for every section type the backend has;
    `summary_only` (the composed matrix) asks Orbis for the summaries alone. A departure `now`
    is Orbis's default and is not sent there. A vehicle never reaches Orbis (`TruckVehicle`)."""
    extra: dict[str, Any] = {
        "avoid": list(avoid) if avoid else None,
        "departAt": departAt if departAt != "now" or backend is not Backend.ORBIS else None,
        "arriveAt": arriveAt,
        "maxAlternatives": maxAlternatives or None,
        "vehicleHeading": vehicleHeading,
    }
    if backend is Backend.ORBIS:
        parts = "summary" if summary_only else "full" if full else "compact"
        return _orbis_request(locations, options, extra, avoidAreas, ORBIS_ATTRIBUTES[parts])
    where = ":".join(lat_lon_text(list(point)) for point in locations)
    path, params = routing_service("calculateRoute", where, options, backend)
    params["sectionType"] = list(GENESIS_FULL_SECTIONS) if full else ["traffic"]
    params.update({name: value for name, value in extra.items() if value is not None})
    if vehicle is not None:
        params.update(vehicle.params())
    return RouteRequest(path, params, avoid_areas_body(avoidAreas))


def avoid_areas_body(areas: Sequence[Sequence[float]] | None) -> dict[str, Any] | None:
    """The POST body that carries `avoidAreas` on the v2-style services (TomTom Maps' Calculate
    Route, Calculate Reachable Range on both backends), or None without areas."""
    if not areas:
        return None
    rectangles = [
        {
            "southWestCorner": {"latitude": min_lat, "longitude": min_lon},
            "northEastCorner": {"latitude": max_lat, "longitude": max_lon},
        }
        for min_lon, min_lat, max_lon, max_lat in areas
    ]
    return {"avoidAreas": {"rectangles": rectangles}}


async def calculate(
    session: TomTomSession,
    path: str,
    params: dict[str, Any],
    areas: list[list[float]] | None,
    *,
    decode: Callable[[bytes], Any] = json_object,
) -> Any:
    """A v2-style Routing API call (Calculate Reachable Range): GET, or POST when areas to avoid
    travel in the body (TomTom takes them only there and rejects a POST without a body). The
    answer is `decode` of the body: by default TomTom's whole JSON object."""
    body = avoid_areas_body(areas)
    if body is None:
        return await session.get(path, params, decode=decode)
    return await session.post(path, body, params, decode=decode)


async def calculate_route(
    session: TomTomSession, request: RouteRequest, *, decode: Callable[[bytes], Any] | None = None
) -> Any:
    """A Calculate Route call. The answer is `decode` of the body; by default the routes in the
    shape both backends share: TomTom Maps' JSON object as it is, Orbis v3's translated
    (`decode_shared_routes`, `malformed` when it is not a v3 answer)."""
    if decode is None:
        decode = decode_shared_routes if request.v3 else json_object
    if request.body is None:
        return await session.get(request.path, request.params, decode=decode)
    return await session.post(request.path, request.body, request.params, decode=decode, headers=request.headers)


def request_for(input: RoutingInput, backend: Backend) -> RouteRequest:
    return build_request(
        input.locations,
        input,
        backend,
        avoid=input.avoid,
        avoidAreas=input.avoidAreas,
        departAt=input.departAt,
        arriveAt=input.arriveAt,
        maxAlternatives=input.maxAlternatives,
        vehicleHeading=input.vehicleHeading,
        vehicle=input.vehicle,
        full=input.response_detail == "full",
    )


def _v3_geometry(content: bytes) -> dict[str, Any]:
    """`geometry` of an Orbis v3 body: compact and one LineString per route (tools.shaping.routes)."""
    compact, lines = decode_routes_and_lines_v3(content)
    return with_geometry(
        compact, [feature({"type": "LineString", "coordinates": xy}, {"route": i}) for i, xy in enumerate(lines)]
    )


def _compact_decoder(request: RouteRequest, detail: str) -> Callable[[bytes], dict[str, Any]]:
    """The decoder that gives `compact` or `geometry` straight from the body's bytes."""
    if request.v3:
        return decode_compact_routes_v3 if detail == "compact" else _v3_geometry
    return decode_compact_routes if detail == "compact" else decode_route_geometry


async def run(input: RoutingInput, context: CallContext) -> Answer:
    """The widget reads the routes in the shared shape; `full` is TomTom's own answer (on Orbis,
    v3's)."""
    session = context.tomtom
    request = request_for(input, session.backend)
    if not input.show_ui and input.response_detail != "full":  # only our shaping reads the body
        return answer(
            input, await calculate_route(session, request, decode=_compact_decoder(request, input.response_detail))
        )
    if request.v3:
        body, shared = await calculate_route(session, request, decode=decode_v3_with_shared)
    else:
        body = shared = await calculate_route(session, request)
    match input.response_detail:
        case "full":
            data = body
        case "geometry":
            data = with_geometry(compact_routes(shared), route_features(shared))
        case _:
            data = compact_routes(shared)
    return answer(input, data, shared)


TOOL = define_tool(
    name="tomtom-routing",
    title="TomTom Routing",
    description=(
        "A route through 2+ stops in order: distance, time, traffic delay; leave or arrive at a time, "
        "avoid roads or areas. EV charging stops: tomtom-ev-routing."
    ),
    input=RoutingInput,
    run=run,
    widget=MAP_APP_URI,
)
