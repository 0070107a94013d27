"""tomtom-traffic-flow: live speed and travel time on the road nearest a point.

TomTom Maps only: GET `/traffic/services/4/flowSegmentData/absolute/{zoom}/json` with
`point=lat,lon` and `unit=KMPH` (Flow Segment Data). Orbis's Traffic API (v1, and the v2 public
preview checked again in December 2026) documents flow as map tiles only, vector and raster, with
no answer for a point: reading one would mean decoding a vector tile's road shapes and picking
the nearest, so the tool is not listed there (docs/adr/0032). `zoom` picks which roads count as
nearest: at low zoom only major roads.

Compact: the road class, current and free-flow speed (km/h), current and free-flow travel time
and the delay between them (seconds), TomTom's confidence (0-1), whether the road is closed,
and the segment's first and last point. There is no `full`: TomTom's answer adds only the
segment's every point.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions.common import Position
from tools.inputs import ToolInput
from tools.shaping.points import lat_lon_text, pick
from tools.shaping.shape import BOOL, NUMBER, STRING, Required, compile_spec, expect
from tools.tomtom.backends import Backend

FLOW_ANSWER = compile_spec(
    {
        "flowSegmentData": Required(
            {
                "frc": STRING,
                "currentSpeed": NUMBER,
                "freeFlowSpeed": NUMBER,
                "currentTravelTime": NUMBER,
                "freeFlowTravelTime": NUMBER,
                "confidence": NUMBER,
                "roadClosure": BOOL,
                "coordinates": {"coordinate": [{"latitude": Required(NUMBER), "longitude": Required(NUMBER)}]},
            }
        )
    }
)
ROAD_CLASSES = {
    "FRC0": "motorway",
    "FRC1": "major road",
    "FRC2": "other major road",
    "FRC3": "secondary road",
    "FRC4": "local connecting road",
    "FRC5": "local road of high importance",
    "FRC6": "local road",
}
"""Flow Segment Data's functional road classes, in words."""
KEPT = ("currentSpeed", "freeFlowSpeed", "currentTravelTime", "freeFlowTravelTime", "confidence", "roadClosure")


class TrafficFlowInput(ToolInput):
    position: Annotated[Position, Field(description="On or near the road.")]
    zoom: int = Field(10, ge=0, le=22, description="Higher reaches smaller roads.")


def build_request(input: TrafficFlowInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters (TomTom Maps; the tool is not offered on Orbis)."""
    return (
        f"/traffic/services/4/flowSegmentData/absolute/{input.zoom}/json",
        {"point": lat_lon_text(input.position), "unit": "KMPH"},
    )


def compact_flow(body: dict[str, Any]) -> dict[str, Any]:
    expect(body, FLOW_ANSWER)
    segment = body["flowSegmentData"]
    flow: dict[str, Any] = {}
    if segment.get("frc"):
        flow["road"] = ROAD_CLASSES.get(segment["frc"], segment["frc"])
    flow.update(pick(segment, KEPT))
    current, free = segment.get("currentTravelTime"), segment.get("freeFlowTravelTime")
    if isinstance(current, (int, float)) and isinstance(free, (int, float)):
        flow["delaySec"] = max(0, round(current - free))
    points = (segment.get("coordinates") or {}).get("coordinate") or []
    points = [p for p in points if isinstance(p, dict)]
    if points:
        flow["from"] = [points[0]["longitude"], points[0]["latitude"]]
        flow["to"] = [points[-1]["longitude"], points[-1]["latitude"]]
    return {"flow": flow, "units": {"speed": "km/h", "time": "s"}}


async def run(input: TrafficFlowInput, context: CallContext) -> dict[str, Any]:
    session = context.tomtom
    body = await session.get(*build_request(input, session.backend))
    return compact_flow(body)


TOOL = define_tool(
    name="tomtom-traffic-flow",
    title="TomTom Traffic Flow",
    description=(
        "Live speed and travel time vs free flow on the road nearest a point; delay, closure. "
        "Incidents: tomtom-traffic."
    ),
    input=TrafficFlowInput,
    run=run,
    unavailable_on={
        Backend.ORBIS: "Orbis has no flow answer for a point: use tomtom-traffic for incidents near it, "
        "or tomtom-routing for the delay on a route."
    },
)
