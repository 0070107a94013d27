"""tomtom-ev-routing: a long-distance electric-vehicle route, with the charging stops it needs.

Orbis: POST `/maps/orbis/routing/calculateLongDistanceEVRoute/{locations}/json?apiVersion=2`;
TomTom Maps: POST `/routing/1/calculateLongDistanceEVRoute/{locations}/json`. On both, the
electric consumption model travels as query parameters (`vehicleEngineType=electric`,
`constantSpeedConsumptionInkWhPerHundredkm` as `speed,kWh:speed,kWh`, `currentChargeInkWh`,
`maxChargeInkWh`, `minChargeAtDestinationInkWh`, `minChargeAtChargingStopsInkWh`) and the
charging model as the JSON body: `{"chargingParameters": {"batteryCurve": [{stateOfChargeInkWh,
maxPowerInkW}], "chargingConnectors": [{currentType, plugTypes, maxPowerInkW}]}}`. TomTom needs
all of them; the inputs a caller rarely knows have documented defaults, and compact lists under
`assumed` those the call left to their default. The API plans the fastest route only, so there
is no route type.
"""

from __future__ import annotations

from typing import Any

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions import routing
from tools.definitions.common import detail, response_detail
from tools.errors import conflicting, invalid
from tools.shaping.ev_routes import charging_stop_features, compact_ev_routes
from tools.shaping.geometry import route_features, with_geometry
from tools.shaping.points import lat_lon_text
from tools.tomtom.backends import Backend

PLUG_TYPES = [
    "Small_Paddle_Inductive", "Large_Paddle_Inductive", "IEC_60309_1_Phase", "IEC_60309_3_Phase",
    "IEC_62196_Type_1_Outlet", "IEC_62196_Type_2_Outlet", "IEC_62196_Type_3_Outlet",
    "IEC_62196_Type_1_Connector_Cable_Attached", "IEC_62196_Type_2_Connector_Cable_Attached",
    "IEC_62196_Type_3_Connector_Cable_Attached", "Combo_to_IEC_62196_Type_1_Base", "Combo_to_IEC_62196_Type_2_Base",
    "Type_E_French_Standard_CEE_7_5", "Type_F_Schuko_CEE_7_4", "Type_G_British_Standard_BS_1363",
    "Type_J_Swiss_Standard_SEV_1011", "China_GB_Part_2", "China_GB_Part_3", "IEC_309_DC_Plug", "AVCON_Connector",
    "Tesla_Connector", "NEMA_5_20", "CHAdeMO", "SAE_J1772", "TEPCO", "Better_Place_Socket", "Marechal_Socket",
    "Standard_Household_Country_Specific",
]  # fmt: skip
MAX_STOPS = 20
DEFAULT_CONSUMPTION = [[50, 15], [90, 18], [120, 23]]
DEFAULT_CONNECTORS = [
    {"currentType": "AC3", "plugTypes": ["IEC_62196_Type_2_Outlet"], "maxPowerInkW": 11},
    {"currentType": "DC", "plugTypes": ["Combo_to_IEC_62196_Type_2_Base"], "maxPowerInkW": 150},
]
DESTINATION_SHARE, STOPS_SHARE = 0.2, 0.1
_ROUTING = routing.INPUT_SCHEMA["properties"]


def _pairs(description: str) -> dict[str, Any]:
    pair = {"type": "array", "items": {"type": "number", "minimum": 0}, "minItems": 2, "maxItems": 2}
    return {"type": "array", "items": pair, "minItems": 1, "maxItems": 25, "description": description}


def _kwh(description: str) -> dict[str, Any]:
    return {"type": "number", "minimum": 0, "description": description}


INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "locations": {
            **_ROUTING["locations"],
            "maxItems": MAX_STOPS,
            "description": f"Origin, optional waypoints, destination (2-{MAX_STOPS}): [[longitude, latitude], ...].",
        },
        "response_detail": response_detail(geometry=True),
        "maxChargeInkWh": {"type": "number", "exclusiveMinimum": 0, "description": "Battery capacity."},
        "currentChargeInkWh": _kwh("Charge at departure."),
        "minChargeAtDestinationInkWh": _kwh("Charge to keep on arrival. Default: 20 % of maxChargeInkWh."),
        "minChargeAtChargingStopsInkWh": _kwh("Charge to keep on reaching a stop. Default: 10 % of maxChargeInkWh."),
        "consumption": _pairs(
            "[[speed km/h, kWh per 100 km], ...], speeds increasing. Default: [[50,15],[90,18],[120,23]]."
        ),
        "batteryCurve": _pairs(
            "[[charge kWh, max charging power kW], ...], charges increasing. Default: the fastest connector's "
            "power to 50 % charge, half to 80 %, a fifth at full."
        ),
        "chargingConnectors": {
            "type": "array",
            "minItems": 1,
            "maxItems": 10,
            "description": "How the car charges. Default: Type 2 AC 11 kW and CCS2 DC 150 kW.",
            "items": {
                "type": "object",
                "properties": {
                    "currentType": {"type": "string", "enum": ["AC1", "AC3", "DC"]},
                    "plugTypes": {
                        "type": "array",
                        "items": {"type": "string", "enum": PLUG_TYPES},
                        "minItems": 1,
                        "uniqueItems": True,
                    },
                    "maxPowerInkW": {"type": "number", "exclusiveMinimum": 0},
                },
                "required": ["currentType", "plugTypes", "maxPowerInkW"],
                "additionalProperties": False,
            },
        },
        "traffic": _ROUTING["traffic"],
        "avoid": _ROUTING["avoid"],
        "departAt": _ROUTING["departAt"],
    },
    "required": ["locations", "maxChargeInkWh", "currentChargeInkWh"],
    "additionalProperties": False,
}
ASSUMABLE = (
    "minChargeAtDestinationInkWh", "minChargeAtChargingStopsInkWh", "consumption", "batteryCurve", "chargingConnectors",
)  # fmt: skip
"""The inputs with a default that stands in for the caller's vehicle (compact lists those assumed)."""


def _increasing(name: str, pairs: list[list[float]], what: str) -> None:
    for index in range(1, len(pairs)):
        if pairs[index][0] <= pairs[index - 1][0]:
            raise invalid(f"{name}[{index}][0]", f"{what} must increase from one pair to the next")


def check_arguments(arguments: dict[str, Any]) -> None:
    routing.check_arguments(arguments)  # locations and departAt, as tomtom-routing checks them
    capacity = arguments["maxChargeInkWh"]
    for name in ("currentChargeInkWh", "minChargeAtDestinationInkWh", "minChargeAtChargingStopsInkWh"):
        if arguments.get(name, 0) > capacity:
            raise conflicting(name, "maxChargeInkWh", message="a charge cannot exceed the battery's capacity")
    if "consumption" in arguments:
        _increasing("consumption", arguments["consumption"], "speeds")
    if "batteryCurve" in arguments:
        curve = arguments["batteryCurve"]
        _increasing("batteryCurve", curve, "charges")
        if curve[-1][0] > capacity:
            raise conflicting("batteryCurve", "maxChargeInkWh", message="the curve's charges exceed the capacity")


def _share(capacity: float, share: float) -> float:
    """A share of the battery's capacity, to 0.01 kWh."""
    return round(capacity * share, 2)


def charging_model(arguments: dict[str, Any]) -> dict[str, Any]:
    """The POST body: the battery's charging curve and the connectors it can use."""
    connectors = arguments.get("chargingConnectors", DEFAULT_CONNECTORS)
    if "batteryCurve" in arguments:
        curve = arguments["batteryCurve"]
    else:
        capacity, power = arguments["maxChargeInkWh"], max(c["maxPowerInkW"] for c in connectors)
        curve = [[0, power], [_share(capacity, 0.5), power], [_share(capacity, 0.8), power / 2], [capacity, power / 5]]
    return {
        "chargingParameters": {
            "batteryCurve": [{"stateOfChargeInkWh": charge, "maxPowerInkW": power} for charge, power in curve],
            "chargingConnectors": [dict(connector) for connector in connectors],
        }
    }


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The path, query parameters and JSON body for this call on this backend."""
    locations = ":".join(lat_lon_text(point) for point in arguments["locations"])
    traffic = arguments.get("traffic", "live")
    capacity = arguments["maxChargeInkWh"]
    if backend is Backend.ORBIS:
        path = f"/maps/orbis/routing/calculateLongDistanceEVRoute/{locations}/json"
        params: dict[str, Any] = {"apiVersion": 2, "traffic": traffic}
    else:
        path = f"/routing/1/calculateLongDistanceEVRoute/{locations}/json"
        params = {"traffic": traffic == "live"}
    consumption = arguments.get("consumption", DEFAULT_CONSUMPTION)
    params.update(
        vehicleEngineType="electric",
        constantSpeedConsumptionInkWhPerHundredkm=":".join(f"{speed},{kwh}" for speed, kwh in consumption),
        currentChargeInkWh=arguments["currentChargeInkWh"],
        maxChargeInkWh=capacity,
        minChargeAtDestinationInkWh=arguments.get("minChargeAtDestinationInkWh", _share(capacity, DESTINATION_SHARE)),
        minChargeAtChargingStopsInkWh=arguments.get("minChargeAtChargingStopsInkWh", _share(capacity, STOPS_SHARE)),
    )
    if "departAt" in arguments:
        params["departAt"] = arguments["departAt"]
    if "avoid" in arguments:
        params["avoid"] = list(arguments["avoid"])
    return path, params, charging_model(arguments)


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    check_arguments(arguments)
    session = context.tomtom
    path, params, body = build_request(arguments, session.backend)
    answer = await session.post(path, body, params)
    if detail(arguments) == "full":
        return answer
    compact = compact_ev_routes(answer)
    assumed = [name for name in ASSUMABLE if name not in arguments]
    if assumed:
        compact["assumed"] = assumed
    if detail(arguments) == "geometry":
        return with_geometry(compact, [*route_features(answer), *charging_stop_features(compact)])
    return compact


TOOL = define_tool(
    name="tomtom-ev-routing",
    title="TomTom EV Route Planner",
    description=(
        "Plan a long electric-vehicle trip with the charging stops it needs: where to stop, which connector "
        "and power, how long to charge and the charge left. Give the battery capacity and current charge. "
        "For a route without charging use tomtom-routing; for chargers near a point, tomtom-ev-search."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
)
