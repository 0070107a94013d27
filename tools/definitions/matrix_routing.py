"""tomtom-matrix-routing: travel time and distance from each origin to each destination.

TomTom Maps only: POST `/routing/matrix/2` (Matrix Routing v2, synchronous) with the body
`{"origins": [{"point": {latitude, longitude}}], "destinations": [...], "options": {...}}`.
TomTom documents no matrix service on Orbis, so the tomtom-orbis-maps backend answers
`unsupported` (docs/adr/0012).

Limits are TomTom's synchronous ones for the Freemium and Pay-As-You-Grow plans: at most
`MAX_CELLS` (200) cells, origins x destinations, each side at most `MAX_SIDE`; past 100 cells
TomTom needs every point inside a 400 km by 400 km box and answers OUT_OF_REGION for cells
outside it (compact reports them as cell errors). Larger matrices are asynchronous only
(submit, poll, download by redirect) and for Enterprise plans; this tool does not offer them.

Compact: `matrix[i][j]` is `{time_s, distance_m, delay_s}` from origin i to destination j (or
`{"error": code}` for a cell TomTom could not route), and `nearest[i]` the destination reached
soonest from origin i. `full` is TomTom's answer.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions.common import FULL, PointsDetail, Position
from tools.definitions.routing import DepartAt, TrafficMode
from tools.errors import ErrorCode, ToolError
from tools.inputs import UNIQUE, ToolInput, rule
from tools.shaping.shape import ID, INTEGER, NUMBER, Required, compile_spec, expect
from tools.tomtom.backends import Backend

PATH = "/routing/matrix/2"
MAX_CELLS = 200
"""TomTom's synchronous matrix limit on the Freemium and Pay-As-You-Grow plans (origins x destinations)."""
MAX_SIDE = 100
"""Origins, or destinations, in one call (a 100 x 2 matrix is already 200 cells)."""

Points = Annotated[list[Position], Field(min_length=1, max_length=MAX_SIDE)]


class MatrixRoutingInput(ToolInput):
    origins: Points = Field(description=f"Where trips start, [[longitude, latitude], ...] (1-{MAX_SIDE}).")
    destinations: Points = Field(
        description=f"Where trips end, [[longitude, latitude], ...]; origins x destinations at most {MAX_CELLS}."
    )
    response_detail: PointsDetail = "compact"
    departAt: DepartAt | None = None
    traffic: TrafficMode = "live"
    travelMode: Literal["car", "truck"] = "car"
    avoid: Annotated[list[Literal["tollRoads", "unpavedRoads"]], UNIQUE, Field(max_length=2)] | None = None

    @model_validator(mode="after")
    def _cells(self) -> MatrixRoutingInput:
        cells = len(self.origins) * len(self.destinations)
        if cells > MAX_CELLS:
            raise rule(
                "origins",
                "destinations",
                message=f"{len(self.origins)} x {len(self.destinations)} = {cells} cells; the limit is {MAX_CELLS}",
            )
        return self


def _point(position: list[float]) -> dict[str, Any]:
    lon, lat = position
    return {"point": {"latitude": lat, "longitude": lon}}


def build_request(input: MatrixRoutingInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and JSON body of the synchronous matrix call (`unsupported` on Orbis)."""
    if backend is Backend.ORBIS:
        raise ToolError(
            ErrorCode.UNSUPPORTED,
            "tomtom-matrix-routing is not available on tomtom-orbis-maps: TomTom offers Matrix Routing v2 on "
            "TomTom Maps only; use the tomtom-maps backend.",
        )
    options: dict[str, Any] = {"traffic": input.traffic, "travelMode": input.travelMode}
    if input.departAt is not None:
        options["departAt"] = input.departAt
    if input.avoid is not None:
        options["avoid"] = list(input.avoid)
    return PATH, {
        "origins": [_point(p) for p in input.origins],
        "destinations": [_point(p) for p in input.destinations],
        "options": options,
    }


CELL = {
    "originIndex": Required(INTEGER),
    "destinationIndex": Required(INTEGER),
    "routeSummary": {"travelTimeInSeconds": NUMBER, "lengthInMeters": NUMBER, "trafficDelayInSeconds": NUMBER},
    "detailedError": {"code": ID},
}
MATRIX_ANSWER = compile_spec({"data": Required([CELL])})
"""What compact reads of a Matrix Routing answer (tools.shaping.shape)."""


def compact_matrix(body: dict[str, Any], origins: int, destinations: int) -> dict[str, Any]:
    """The cells as a rows-by-origin matrix, and each origin's soonest-reached destination."""
    expect(body, MATRIX_ANSWER)
    matrix: list[list[dict[str, Any] | None]] = [[None] * destinations for _ in range(origins)]
    for cell in body["data"]:
        i, j = cell["originIndex"], cell["destinationIndex"]
        if not (0 <= i < origins and 0 <= j < destinations):
            raise ToolError(ErrorCode.MALFORMED, "TomTom answered a matrix cell outside the matrix.")
        summary = cell.get("routeSummary")
        if summary is not None:
            matrix[i][j] = {
                "time_s": summary.get("travelTimeInSeconds"),
                "distance_m": summary.get("lengthInMeters"),
                "delay_s": summary.get("trafficDelayInSeconds", 0),
            }
        else:
            error = cell.get("detailedError") or {}
            matrix[i][j] = {"error": str(error.get("code") or "NO_ROUTE")[:100]}
    nearest = []
    for i, row in enumerate(matrix):
        timed = [
            (c["time_s"], j, c["distance_m"])
            for j, c in enumerate(row)
            if c and isinstance(c.get("time_s"), (int, float))
        ]
        if timed:  # soonest first, then the lowest index (indexes are unique: distances are never compared)
            time_s, j, distance_m = min(timed)
            nearest.append({"origin": i, "destination": j, "time_s": time_s, "distance_m": distance_m})
        else:
            nearest.append({"origin": i, "destination": None})
    failed = sum(1 for row in matrix for c in row if c is None or "error" in c)
    return {
        "matrix": [[c or {"error": "MISSING"} for c in row] for row in matrix],
        "nearest": nearest,
        "failed": failed,
    }


async def run(input: MatrixRoutingInput, context: CallContext) -> dict[str, Any]:
    session = context.tomtom
    body = await session.post(*build_request(input, session.backend))
    if input.response_detail == FULL:
        return body
    return compact_matrix(body, len(input.origins), len(input.destinations))


TOOL = define_tool(
    name="tomtom-matrix-routing",
    title="TomTom Matrix Routing",
    description=(
        "Travel time, distance and traffic delay from each origin to each destination (up to 200 pairs), "
        "and the nearest destination by time for each origin. TomTom Maps backend only."
    ),
    input=MatrixRoutingInput,
    run=run,
)
