"""tomtom-matrix-routing: travel time and distance from each origin to each destination.

TomTom Maps: POST `/routing/matrix/2` (Matrix Routing v2, synchronous) with the body
`{"origins": [{"point": {latitude, longitude}}], "destinations": [...], "options": {...}}`.
Limits are TomTom's synchronous ones for the Freemium and Pay-As-You-Grow plans: at most
`MAX_CELLS` (200) cells, origins x destinations, each side at most `MAX_SIDE`; past 100 cells
TomTom needs every point inside a 400 km by 400 km box and answers OUT_OF_REGION for cells
outside it (compact reports them as cell errors). Larger matrices are asynchronous only
(submit, poll, download by redirect) and for Enterprise plans; this tool does not offer them.

Orbis documents no matrix service (neither in its v2 preview nor in Routing v3), so there the
matrix is composed of Calculate Route calls (Routing v3, `routing.build_request`, asking for the
summary alone), one per cell (`COMPOSED_MAX_CELLS`, at most `COMPOSED_AT_ONCE` at a time), each
a routing request TomTom bills: the description says so, and the answer counts them in
`routing_requests` (docs/adr/0023-listings-per-caller.md). A cell TomTom finds no route for is
a cell error (when it refuses every cell, it refused the request: that is the answer); any
other failure (key, rate limit, outage) is the call's. Orbis plans for cars only.

Compact: `matrix[i][j]` is `{time_s, distance_m, delay_s}` from origin i to destination j (or
`{"error": code}` for a cell TomTom could not route), and `nearest[i]` the destination reached
soonest from origin i. `full` is TomTom's answer: the matrix on TomTom Maps; on Orbis each
cell's Calculate Route summary, `{"cells": [{"origin", "destination", "route" | "error"}]}`,
`route` in the shape both backends share (`{"routes": [{"summary": {...}}]}`).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, model_validator

from core.errors import ErrorCode, ToolError, conflicting
from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions import routing
from tools.definitions.common import FULL, PointsDetail, Position
from tools.definitions.routing import ORBIS_CARS_ONLY, DepartAt, TrafficMode
from tools.inputs import UNIQUE, ToolInput, backend_of, rule
from tools.shaping.shape import ID, INTEGER, NUMBER, Required, compile_spec, expect
from tools.tomtom.backends import Backend
from tools.tomtom.client import TomTomSession

PATH = "/routing/matrix/2"
MAX_CELLS = 200
"""TomTom's synchronous matrix limit on the Freemium and Pay-As-You-Grow plans (origins x destinations)."""
MAX_SIDE = 100
"""Origins, or destinations, in one call (a 100 x 2 matrix is already 200 cells)."""
COMPOSED_MAX_CELLS = 25
"""Cells of a matrix composed of Calculate Route calls (Orbis): each is one billed routing request."""
COMPOSED_AT_ONCE = 5
"""Calculate Route calls of one composed matrix under way at a time."""

Points = Annotated[list[Position], Field(min_length=1, max_length=MAX_SIDE)]


class MatrixRoutingInput(ToolInput):
    origins: Points = Field(description="[[lon, lat], ...].")
    destinations: Points = Field(description="[[lon, lat], ...].")
    response_detail: PointsDetail = "compact"
    departAt: DepartAt | None = None
    traffic: TrafficMode = "live"
    travelMode: Annotated[Literal["car", "truck"], ORBIS_CARS_ONLY] = "car"
    avoid: Annotated[list[Literal["tollRoads", "unpavedRoads"]], Field(max_length=2), UNIQUE] | None = None

    @model_validator(mode="after")
    def _cells(self, info: ValidationInfo) -> MatrixRoutingInput:
        problem = self.too_many_cells(backend_of(info))
        if problem:
            raise rule("origins", "destinations", message=problem)
        return self

    def too_many_cells(self, backend: Backend | None) -> str | None:
        """Why this matrix is too large for `backend` (None: it is not)."""
        cells = len(self.origins) * len(self.destinations)
        limit = COMPOSED_MAX_CELLS if backend is Backend.ORBIS else MAX_CELLS
        if cells <= limit:
            return None
        where = f" on {Backend.ORBIS.value}, where each cell is one routing request" if limit < MAX_CELLS else ""
        return f"{len(self.origins)} x {len(self.destinations)} = {cells} cells; the limit is {limit}{where}"


def _point(position: list[float]) -> dict[str, Any]:
    lon, lat = position
    return {"point": {"latitude": lat, "longitude": lon}}


def build_request(input: MatrixRoutingInput) -> tuple[str, dict[str, Any]]:
    """The path and JSON body of the synchronous matrix call (TomTom Maps)."""
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


async def composed_cells(input: MatrixRoutingInput, session: TomTomSession) -> list[dict[str, Any]]:
    """Each cell from its own Calculate Route call (Orbis), in row order: `{"origin", "destination"}`
    with TomTom's answer as `route`, or `error` when TomTom found no route."""
    problem = input.too_many_cells(session.backend)
    if problem:
        raise conflicting("origins", "destinations", message=problem)
    gate = asyncio.Semaphore(COMPOSED_AT_ONCE)
    options = routing.RouteOptions(traffic=input.traffic)

    refused: list[ToolError] = []

    async def cell(i: int, j: int) -> dict[str, Any]:
        request = routing.build_request(
            [input.origins[i], input.destinations[j]],
            options,
            session.backend,
            avoid=input.avoid,
            departAt=input.departAt,
            summary_only=True,
        )
        async with gate:
            try:
                route = await routing.calculate_route(session, request)
            except ToolError as error:
                if error.code is not ErrorCode.INVALID_ARGUMENTS:  # TomTom's 400/404: no route for this pair
                    raise
                refused.append(error)
                return {"origin": i, "destination": j, "error": "NO_ROUTE"}
        return {"origin": i, "destination": j, "route": route}

    pairs = [(i, j) for i in range(len(input.origins)) for j in range(len(input.destinations))]
    try:  # the first failure ends the call: the calls still waiting are cancelled, never billed
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(cell(i, j)) for i, j in pairs]
    except ExceptionGroup as failed:
        first = failed.exceptions[0]
        if isinstance(first, ToolError):
            raise first from None
        raise
    if len(refused) == len(tasks):  # TomTom refused the request itself, not a pair: say why
        raise refused[0]
    return [task.result() for task in tasks]


def composed_matrix(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """Composed cells in the Matrix Routing answer's shape (`data[]`), for `compact_matrix`."""
    data = []
    for cell in cells:
        entry: dict[str, Any] = {"originIndex": cell["origin"], "destinationIndex": cell["destination"]}
        if "error" in cell:
            entry["detailedError"] = {"code": cell["error"]}
        else:
            routes = cell["route"].get("routes")
            first = routes[0] if isinstance(routes, list) and routes and isinstance(routes[0], dict) else None
            if first is None or not isinstance(first.get("summary"), dict):
                raise ToolError(ErrorCode.MALFORMED, "TomTom answered a route without a summary.")
            entry["routeSummary"] = first["summary"]
        data.append(entry)
    return {"data": data}


async def run(input: MatrixRoutingInput, context: CallContext) -> dict[str, Any]:
    session = context.tomtom
    if session.backend is Backend.ORBIS:
        cells = await composed_cells(input, session)
        if input.response_detail == FULL:
            return {"cells": cells, "routing_requests": len(cells)}
        compact = compact_matrix(composed_matrix(cells), len(input.origins), len(input.destinations))
        return {**compact, "routing_requests": len(cells)}
    body = await session.post(*build_request(input))
    if input.response_detail == FULL:
        return body
    return compact_matrix(body, len(input.origins), len(input.destinations))


TOOL = define_tool(
    name="tomtom-matrix-routing",
    title="TomTom Matrix Routing",
    description=(
        "Time, distance and delay from each origin to each destination, and each origin's nearest "
        "(closest store, depot, driver). One route: tomtom-routing."
    ),
    backend_notes={
        Backend.GENESIS: f"Up to {MAX_CELLS} pairs.",
        Backend.ORBIS: f"Up to {COMPOSED_MAX_CELLS} pairs; each pair costs one TomTom routing request.",
    },
    input=MatrixRoutingInput,
    run=run,
)
