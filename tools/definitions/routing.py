"""tomtom-routing: a route through two or more ordered locations.

Also the Routing API's shared vocabulary: the inputs other routing tools take as they are
(`RouteType`, `Traffic`, `Avoid`, `DepartAt`, `ArriveAt`, the `RouteOptions` group), and
`routing_service`, the one place each backend's names for them live.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import BoundingBox, GeometryDetail, Position, ShowUi, answer
from tools.inputs import UNIQUE, ToolInput, exclusive, listed_by_example, only_on_backend, problem, rule
from tools.shaping.geometry import decode_route_geometry, route_features, with_geometry
from tools.shaping.points import lat_lon_text
from tools.shaping.routes import compact_routes, decode_compact_routes
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
FULL_SECTIONS = {
    Backend.GENESIS: [
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
    ],
    Backend.ORBIS: ["traffic", "travelMode"],
}
"""`sectionType` for `full`: every section type each backend documents (compact asks for traffic only)."""


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
        description="Stops in order, origin first: [[lon, lat], ...].",
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
    """The path of a Routing API `service` (`calculateRoute`, `calculateReachableRange`) at
    `where`, and the route type, traffic and travel mode in the backend's own vocabulary.
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


def build_request(
    locations: list[list[float]],
    options: RouteOptions,
    backend: Backend,
    *,
    avoid: Sequence[str] | None = None,
    departAt: str | None = None,
    arriveAt: str | None = None,
    maxAlternatives: int = 0,
    vehicleHeading: int | None = None,
    vehicle: Vehicle | None = None,
    full: bool = False,
) -> tuple[str, dict[str, Any]]:
    """Calculate Route through `locations`: path and parameters (also for the tools that plan
    a route on the way to their answer: search along route, the dynamic map's plans). Compact
    answers need the traffic sections only; `full` asks for every section type the backend has."""
    where = ":".join(lat_lon_text(point) for point in locations)
    path, params = routing_service("calculateRoute", where, options, backend)
    params["sectionType"] = list(FULL_SECTIONS[backend]) if full else ["traffic"]
    extra = {"departAt": departAt, "arriveAt": arriveAt, "vehicleHeading": vehicleHeading}
    params.update({name: value for name, value in extra.items() if value is not None})
    if maxAlternatives:
        params["maxAlternatives"] = maxAlternatives
    if avoid:
        params["avoid"] = list(avoid)
    if vehicle is not None:
        params.update(vehicle.params())
    return path, params


def avoid_areas_body(areas: list[list[float]] | None) -> dict[str, Any] | None:
    """The POST body that carries `avoidAreas` (the same on both backends), or None without areas."""
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
    """A Routing API call: GET, or POST when areas to avoid travel in the body (TomTom takes
    them only there and rejects a POST without a body). The answer is `decode` of the body:
    by default TomTom's whole JSON object."""
    body = avoid_areas_body(areas)
    if body is None:
        return await session.get(path, params, decode=decode)
    return await session.post(path, body, params, decode=decode)


def request_for(input: RoutingInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    return build_request(
        input.locations,
        input,
        backend,
        avoid=input.avoid,
        departAt=input.departAt,
        arriveAt=input.arriveAt,
        maxAlternatives=input.maxAlternatives,
        vehicleHeading=input.vehicleHeading,
        vehicle=input.vehicle,
        full=input.response_detail == "full",
    )


async def run(input: RoutingInput, context: CallContext) -> Answer:
    session = context.tomtom
    if not input.show_ui and input.response_detail != "full":  # only our shaping reads the body
        decode = decode_compact_routes if input.response_detail == "compact" else decode_route_geometry
        return answer(
            input, await calculate(session, *request_for(input, session.backend), input.avoidAreas, decode=decode)
        )
    body = await calculate(session, *request_for(input, session.backend), input.avoidAreas)
    match input.response_detail:
        case "full":
            data = body
        case "geometry":
            data = with_geometry(compact_routes(body), route_features(body))
        case _:
            data = compact_routes(body)
    return answer(input, data, body)


TOOL = define_tool(
    name="tomtom-routing",
    title="TomTom Routing",
    description=(
        "A route through 2+ stops in order: distance, time, traffic delay; leave or arrive at a time, "
        "avoid roads or areas. EV trip with charging stops: tomtom-ev-routing."
    ),
    input=RoutingInput,
    run=run,
    widget=MAP_APP_URI,
)
