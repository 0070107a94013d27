"""Compact shape of a Calculate Long Distance EV Route answer, and its charging-stop points.

Both backends answer the Calculate Route shape, where every leg but the last ends at a charging
stop described by `legs[j].summary.chargingInformationAtEndOfLeg`. Per route compact keeps:

- `summary`: length, times, traffic delay, energy used, total charging time and the charge left
  on arrival (kWh values rounded to 0.01);
- `start`, `end`: point coordinates;
- `chargingStops`: how many stops the route makes;
- `legs`: for every leg its summary, start and end, and, for a leg that ends at a charging stop,
  `chargingStop`: the park's name and operator, its point coordinates (where TomTom gave none,
  the leg's end), its address, the charging time, the charge to reach, and the connector (plug
  type), power and current to use.

Dropped: line points, park and operator ids, opening hours, nearby services, vertex indexes.
`geometry` adds the route lines `{"route": i}`, then one Point per charging stop
`{"route": i, "leg": j}` at the stop's compact `position` (the stop at the end of leg j).
"""

from __future__ import annotations

from typing import Any

from core.errors import ErrorCode, ToolError
from tools.shaping.geometry import feature
from tools.shaping.points import lon_lat, pick
from tools.shaping.routes import LEG, ROUTE_SPEC, SUMMARY, SUMMARY_KEPT
from tools.shaping.shape import ANY, NUMBER, OBJECT, STRING, compile_spec, expect

ROUTE_KEPT = (*SUMMARY_KEPT, "totalChargingTimeInSeconds", "remainingChargeAtArrivalInkWh")
LEG_KEPT = (
    "lengthInMeters",
    "travelTimeInSeconds",
    "trafficDelayInSeconds",
    "departureTime",
    "arrivalTime",
    "batteryConsumptionInkWh",
    "remainingChargeAtArrivalInkWh",
)
ADDRESS_KEPT = ("street", "houseNumber", "postalCode", "city", "country", "countryCode")

CHARGING_INFORMATION = {
    "chargingParkLocation": {"coordinate": ANY},  # read by lon_lat, which checks it
    "chargingConnectionInfo": OBJECT,
    "chargingTimeInSeconds": NUMBER,
    "targetChargeInkWh": NUMBER,
    "chargingParkPowerInkW": NUMBER,
    "chargingParkName": STRING,
    "chargingParkOperatorName": STRING,
}
EV_SUMMARY = {**SUMMARY, "totalChargingTimeInSeconds": NUMBER, "remainingChargeAtArrivalInkWh": NUMBER}
EV_LEG = {**LEG, "summary": {**EV_SUMMARY, "chargingInformationAtEndOfLeg": CHARGING_INFORMATION}}
EV_ROUTE_ANSWER = compile_spec({"routes": [{**ROUTE_SPEC, "summary": EV_SUMMARY, "legs": [EV_LEG]}]})
"""A Calculate Long Distance EV Route answer as shaping reads it (tools.shaping.shape)."""


def _kwh(values: dict[str, Any]) -> dict[str, Any]:
    """kWh figures to 0.01 kWh: TomTom sends them with float noise (72.30000000000001)."""
    return {k: round(v, 2) if k.endswith("InkWh") and isinstance(v, float) else v for k, v in values.items()}


def charging_stop(info: dict[str, Any], leg_end: list[float]) -> dict[str, Any]:
    location = info.get("chargingParkLocation") or {}
    connection = info.get("chargingConnectionInfo") or {}
    names = {"name": info.get("chargingParkName"), "operator": info.get("chargingParkOperatorName")}
    stop = pick(names, ("name", "operator"))
    stop["position"] = lon_lat(location["coordinate"]) if location.get("coordinate") else leg_end
    address = pick(location, ADDRESS_KEPT)
    if address:
        stop["address"] = address
    facts = {
        "chargingTimeInSeconds": info.get("chargingTimeInSeconds"),
        "targetChargeInkWh": info.get("targetChargeInkWh"),
        "connector": connection.get("chargingPlugType"),
        "powerInkW": connection.get("chargingPowerInkW", info.get("chargingParkPowerInkW")),
        "currentType": connection.get("chargingCurrentType"),
    }
    stop.update(_kwh(pick(facts, tuple(facts))))
    return stop


def compact_ev_route(route: dict[str, Any]) -> dict[str, Any]:
    legs = route.get("legs") or []
    if not legs or not all(leg.get("points") for leg in legs):
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with a route leg without points.")
    shown = []
    for leg in legs:
        summary = leg.get("summary") or {}
        item: dict[str, Any] = {
            "summary": _kwh(pick(summary, LEG_KEPT)),
            "start": lon_lat(leg["points"][0]),
            "end": lon_lat(leg["points"][-1]),
        }
        if isinstance(summary.get("chargingInformationAtEndOfLeg"), dict):
            item["chargingStop"] = charging_stop(summary["chargingInformationAtEndOfLeg"], item["end"])
        shown.append(item)
    return {
        "summary": _kwh(pick(route.get("summary") or {}, ROUTE_KEPT)),
        "start": shown[0]["start"],
        "end": shown[-1]["end"],
        "chargingStops": sum("chargingStop" in leg for leg in shown),
        "legs": shown,
    }


def compact_ev_routes(body: dict[str, Any]) -> dict[str, Any]:
    expect(body, EV_ROUTE_ANSWER)
    routes = body.get("routes")
    if not isinstance(routes, list) or not routes:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered without a route.")
    return {"routes": [compact_ev_route(route) for route in routes]}


def charging_stop_features(compact: dict[str, Any]) -> list[dict[str, Any]]:
    """`{"route": i, "leg": j}`: one Point per charging stop, at its compact position."""
    return [
        feature({"type": "Point", "coordinates": leg["chargingStop"]["position"]}, {"route": i, "leg": j})
        for i, route in enumerate(compact["routes"])
        for j, leg in enumerate(route["legs"])
        if "chargingStop" in leg
    ]
