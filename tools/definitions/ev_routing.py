"""tomtom-ev-routing: a long-distance electric-vehicle route, with the charging stops it needs.

Orbis: POST `/maps/orbis/routing/calculateLongDistanceEVRoute/{locations}/json?apiVersion=2`,
TomTom's public preview (no Orbis v3 page documents it; the listing says so on Orbis);
TomTom Maps: POST `/routing/1/calculateLongDistanceEVRoute/{locations}/json`. On both, the
electric consumption model travels as query parameters (`vehicleEngineType=electric`,
`constantSpeedConsumptionInkWhPerHundredkm` as `speed,kWh:speed,kWh`, `currentChargeInkWh`,
`maxChargeInkWh`, `minChargeAtDestinationInkWh`, `minChargeAtChargingStopsInkWh`) and the
charging model as the JSON body: `{"chargingParameters": {"batteryCurve": [{stateOfChargeInkWh,
maxPowerInkW}], "chargingConnectors": [{currentType, plugTypes, maxPowerInkW}]}}`, plus
`avoidAreas` (tomtom-routing's rectangles) when given. TomTom needs all of them; the inputs a
caller rarely knows have documented defaults, and compact lists under `assumed` those the call
left to their default. The API plans the fastest route only, so there
is no route type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidatorFunctionWrapHandler, WrapValidator, model_validator

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import FULL, GEOMETRY, GeometryDetail, ShowUi, answer
from tools.definitions.routing import (
    ORBIS_PREVIEW,
    Avoid,
    AvoidAreas,
    DepartAt,
    Locations,
    TrafficMode,
    avoid_areas_body,
)
from tools.inputs import UNIQUE, ToolInput, listed_by_example, problem, rule
from tools.shaping.ev_routes import charging_stop_features, compact_ev_routes
from tools.shaping.geometry import route_features, with_geometry
from tools.shaping.points import lat_lon_text
from tools.tomtom.backends import Backend
from tools.widgets import MAP_APP_URI

PlugType = Literal[
    "Small_Paddle_Inductive",
    "Large_Paddle_Inductive",
    "IEC_60309_1_Phase",
    "IEC_60309_3_Phase",
    "IEC_62196_Type_1_Outlet",
    "IEC_62196_Type_2_Outlet",
    "IEC_62196_Type_3_Outlet",
    "IEC_62196_Type_1_Connector_Cable_Attached",
    "IEC_62196_Type_2_Connector_Cable_Attached",
    "IEC_62196_Type_3_Connector_Cable_Attached",
    "Combo_to_IEC_62196_Type_1_Base",
    "Combo_to_IEC_62196_Type_2_Base",
    "Type_E_French_Standard_CEE_7_5",
    "Type_F_Schuko_CEE_7_4",
    "Type_G_British_Standard_BS_1363",
    "Type_J_Swiss_Standard_SEV_1011",
    "China_GB_Part_2",
    "China_GB_Part_3",
    "IEC_309_DC_Plug",
    "AVCON_Connector",
    "Tesla_Connector",
    "NEMA_5_20",
    "CHAdeMO",
    "SAE_J1772",
    "TEPCO",
    "Better_Place_Socket",
    "Marechal_Socket",
    "Standard_Household_Country_Specific",
]
MAX_STOPS = 20
DEFAULT_CONSUMPTION = [[50, 15], [90, 18], [120, 23]]
DEFAULT_CONNECTORS = [
    {"currentType": "AC3", "plugTypes": ["IEC_62196_Type_2_Outlet"], "maxPowerInkW": 11},
    {"currentType": "DC", "plugTypes": ["Combo_to_IEC_62196_Type_2_Base"], "maxPowerInkW": 150},
]
DESTINATION_SHARE, STOPS_SHARE = 0.2, 0.1
MAX_CAPACITY_KWH = 2_000
"""Bounds the battery inputs (the largest truck batteries hold well under this)."""
MAX_POWER_KW = 4_000
"""Bounds a connector's and the battery curve's power (megawatt truck charging is under this)."""
MAX_CONSUMPTION_NUMBER = 1_000
"""Bounds both numbers of a consumption pair: km/h and kWh per 100 km."""
ASSUMABLE = (
    "minChargeAtDestinationInkWh",
    "minChargeAtChargingStopsInkWh",
    "consumption",
    "batteryCurve",
    "chargingConnectors",
)
"""The inputs with a default that stands in for the caller's vehicle (compact lists those assumed)."""


def _as_sent(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A number checked as a float but kept as the caller wrote it: 75 reaches TomTom as `75`."""
    checked = handler(value)
    return value if type(value) is int else checked


AS_SENT = WrapValidator(_as_sent)
Kwh = Annotated[float, Field(ge=0, le=MAX_CAPACITY_KWH), AS_SENT]
Capacity = Annotated[float, Field(gt=0, le=MAX_CAPACITY_KWH), AS_SENT]
Power = Annotated[float, Field(gt=0, le=MAX_POWER_KW), AS_SENT]
ConsumptionNumber = Annotated[float, Field(ge=0, le=MAX_CONSUMPTION_NUMBER), AS_SENT]
CurveNumber = Annotated[float, Field(ge=0, le=max(MAX_CAPACITY_KWH, MAX_POWER_KW)), AS_SENT]


def _increasing(what: str) -> Callable[[list[list[float]]], list[list[float]]]:
    def check(pairs: list[list[float]]) -> list[list[float]]:
        for index in range(1, len(pairs)):
            if pairs[index][0] <= pairs[index - 1][0]:
                raise problem(f"{what} must increase from one pair to the next", item=(index, 0))
        return pairs

    return check


Consumption = Annotated[
    list[Annotated[list[ConsumptionNumber], Field(min_length=2, max_length=2)]],
    Field(
        min_length=1,
        max_length=25,
        description="[[km/h, kWh per 100 km], ...], speeds rising; default [[50,15],[90,18],[120,23]].",
    ),
    AfterValidator(_increasing("speeds")),
]
BatteryCurve = Annotated[
    list[Annotated[list[CurveNumber], Field(min_length=2, max_length=2)]],
    Field(
        min_length=1,
        max_length=25,
        description="[[charge kWh, max kW], ...], rising; default: connector power to 50 %, half to 80 %, "
        "a fifth at full.",
    ),
    AfterValidator(_increasing("charges")),
]


LISTED_PLUG_TYPE = listed_by_example(PlugType, "IEC_62196_Type_2_Outlet", "Combo_to_IEC_62196_Type_2_Base", "CHAdeMO")
"""The 28 plug names are checked, and listed in the error a wrong one gets, but not in tools/list:
every conversation would pay for them, and the defaults cover most cars."""


class Connector(ToolInput):
    """One way the car charges: current, the plugs it takes, and its top power."""

    currentType: Literal["AC1", "AC3", "DC"]
    plugTypes: Annotated[
        list[Annotated[PlugType, LISTED_PLUG_TYPE]], Field(min_length=1, max_length=len(PlugType.__args__)), UNIQUE
    ]
    maxPowerInkW: Power


class EvRoutingInput(ToolInput):
    locations: Annotated[
        Locations,
        Field(
            max_length=MAX_STOPS,
            description="Stops in order: [[lon, lat], ...].",
        ),
    ]
    maxChargeInkWh: Capacity = Field(description="Battery capacity.")
    currentChargeInkWh: Kwh = Field(description="Charge at departure.")
    response_detail: GeometryDetail = "compact"
    show_ui: ShowUi = False
    minChargeAtDestinationInkWh: Kwh | None = Field(
        None, description="Kept on arrival; default 20 % of maxChargeInkWh."
    )
    minChargeAtChargingStopsInkWh: Kwh | None = Field(None, description="Kept at each stop; default 10 %.")
    consumption: Consumption | None = None
    batteryCurve: BatteryCurve | None = None
    chargingConnectors: list[Connector] | None = Field(
        None,
        min_length=1,
        max_length=10,
        description="Default: Type 2 AC 11 kW, CCS2 DC 150 kW.",
    )
    traffic: TrafficMode = "live"
    avoid: Avoid | None = None
    avoidAreas: AvoidAreas | None = None
    departAt: DepartAt | None = None

    @model_validator(mode="after")
    def _rules(self) -> EvRoutingInput:
        capacity = self.maxChargeInkWh
        for name in ("currentChargeInkWh", "minChargeAtDestinationInkWh", "minChargeAtChargingStopsInkWh"):
            charge = getattr(self, name)
            if charge is not None and charge > capacity:
                raise rule(name, "maxChargeInkWh", message="a charge cannot exceed the battery's capacity")
        if self.batteryCurve is not None and self.batteryCurve[-1][0] > capacity:
            raise rule("batteryCurve", "maxChargeInkWh", message="the curve's charges exceed the capacity")
        return self


def _share(capacity: float, share: float) -> float:
    """A share of the battery's capacity, to 0.01 kWh."""
    return round(capacity * share, 2)


def charging_model(input: EvRoutingInput) -> dict[str, Any]:
    """The POST body: the battery's charging curve and the connectors it can use."""
    if input.chargingConnectors is not None:
        connectors = [connector.model_dump() for connector in input.chargingConnectors]
    else:
        connectors = DEFAULT_CONNECTORS
    if input.batteryCurve is not None:
        curve = input.batteryCurve
    else:
        capacity, power = input.maxChargeInkWh, max(c["maxPowerInkW"] for c in connectors)
        curve = [[0, power], [_share(capacity, 0.5), power], [_share(capacity, 0.8), power / 2], [capacity, power / 5]]
    return {
        "chargingParameters": {
            "batteryCurve": [{"stateOfChargeInkWh": charge, "maxPowerInkW": power} for charge, power in curve],
            "chargingConnectors": [dict(connector) for connector in connectors],
        }
    }


def build_request(input: EvRoutingInput, backend: Backend) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The path, query parameters and JSON body for this call on this backend."""
    locations = ":".join(lat_lon_text(point) for point in input.locations)
    capacity = input.maxChargeInkWh
    if backend is Backend.ORBIS:
        path = f"/maps/orbis/routing/calculateLongDistanceEVRoute/{locations}/json"
        params: dict[str, Any] = {"apiVersion": 2, "traffic": input.traffic}
    else:
        path = f"/routing/1/calculateLongDistanceEVRoute/{locations}/json"
        params = {"traffic": input.traffic == "live"}
    consumption = input.consumption if input.consumption is not None else DEFAULT_CONSUMPTION
    at_destination, at_stops = input.minChargeAtDestinationInkWh, input.minChargeAtChargingStopsInkWh
    params.update(
        vehicleEngineType="electric",
        constantSpeedConsumptionInkWhPerHundredkm=":".join(f"{speed},{kwh}" for speed, kwh in consumption),
        currentChargeInkWh=input.currentChargeInkWh,
        maxChargeInkWh=capacity,
        minChargeAtDestinationInkWh=_share(capacity, DESTINATION_SHARE) if at_destination is None else at_destination,
        minChargeAtChargingStopsInkWh=_share(capacity, STOPS_SHARE) if at_stops is None else at_stops,
    )
    if input.departAt is not None:
        params["departAt"] = input.departAt
    if input.avoid is not None:
        params["avoid"] = list(input.avoid)
    return path, params, {**charging_model(input), **(avoid_areas_body(input.avoidAreas) or {})}


async def run(input: EvRoutingInput, context: CallContext) -> Answer:
    """The widget draws TomTom's untrimmed answer: the routes and, at the end of each leg, its
    charging stop with the park's power and the charge it reaches."""
    session = context.tomtom
    path, params, request_body = build_request(input, session.backend)
    body = await session.post(path, request_body, params)
    if input.response_detail == FULL:
        return answer(input, body, body)
    compact = compact_ev_routes(body)
    assumed = [name for name in ASSUMABLE if getattr(input, name) is None]
    if assumed:
        compact["assumed"] = assumed
    if input.response_detail == GEOMETRY:
        compact = with_geometry(compact, [*route_features(body), *charging_stop_features(compact)])
    return answer(input, compact, body)


TOOL = define_tool(
    name="tomtom-ev-routing",
    title="TomTom EV Route Planner",
    description=(
        "A long EV trip with its charging stops: where, connector, power, how long, charge left. "
        "No charging: tomtom-routing; chargers near a point: tomtom-ev-search."
    ),
    backend_notes={Backend.ORBIS: ORBIS_PREVIEW},
    input=EvRoutingInput,
    run=run,
    widget=MAP_APP_URI,
)
