"""Compact shape of a Calculate Route answer (both backends answer the same REST shape).

Per route: the summary (length, time, traffic delay, departure and arrival), the point
coordinates of its start and end (always), one summary per leg when there are several, and the
traffic sections that explain delays. Dropped: the line's points, guidance, vertex indexes.
"""

from __future__ import annotations

from typing import Any

from tools.errors import ErrorCode, ToolError
from tools.shaping.points import lon_lat, pick
from tools.shaping.shape import NUMBER, POINTS, STRING, compile_spec, expect

SUMMARY_KEPT = (
    "lengthInMeters", "travelTimeInSeconds", "trafficDelayInSeconds", "trafficLengthInMeters",
    "departureTime", "arrivalTime", "batteryConsumptionInkWh", "fuelConsumptionInLiters",
)  # fmt: skip
TRAFFIC_SECTION_KEPT = ("simpleCategory", "magnitudeOfDelay", "delayInSeconds", "effectiveSpeedInKmh")

SUMMARY = {key: STRING if key.endswith("Time") else NUMBER for key in SUMMARY_KEPT}
LEG = {"summary": SUMMARY, "points": POINTS}
SECTION = {key: NUMBER for key in ("delayInSeconds", "effectiveSpeedInKmh", "magnitudeOfDelay")}
ROUTE_SPEC = {"summary": SUMMARY, "legs": [LEG], "sections": [SECTION]}
"""What shaping reads of one route (tools.shaping.shape); `ev_routes` extends it."""
ROUTE = compile_spec(ROUTE_SPEC)
ROUTE_ANSWER = compile_spec({"routes": [ROUTE]})
"""A Calculate Route answer as shaping reads it."""


def route_points(route: dict[str, Any]) -> list[dict[str, Any]]:
    """All points of a route, legs concatenated, as TomTom sent them (`malformed` unless the
    route has the shape of `ROUTE`: every point with finite `latitude` and `longitude`)."""
    expect(route, ROUTE, where="route")
    return [p for leg in route.get("legs") or [] for p in leg.get("points") or []]


def compact_route(route: dict[str, Any]) -> dict[str, Any]:
    legs = route.get("legs") or []
    if not legs or not legs[0].get("points"):
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with a route without points.")
    item: dict[str, Any] = {
        "summary": pick(route.get("summary") or {}, SUMMARY_KEPT),
        "start": lon_lat(legs[0]["points"][0]),
        "end": lon_lat(legs[-1]["points"][-1]),
    }
    if len(legs) > 1:
        item["legs"] = [
            {
                "summary": pick(leg.get("summary") or {}, SUMMARY_KEPT),
                "start": lon_lat(leg["points"][0]),
                "end": lon_lat(leg["points"][-1]),
            }
            for leg in legs
        ]
    traffic = [
        pick(section, TRAFFIC_SECTION_KEPT)
        for section in route.get("sections") or []
        if section.get("sectionType") == "TRAFFIC"
    ]
    if traffic:
        item["traffic"] = traffic
    return item


def compact_routes(body: dict[str, Any]) -> dict[str, Any]:
    expect(body, ROUTE_ANSWER)
    routes = body.get("routes")
    if not isinstance(routes, list) or not routes:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered without a route.")
    return {"routes": [compact_route(route) for route in routes]}
