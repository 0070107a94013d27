"""`response_detail: "geometry"`: the compact answer plus a GeoJSON FeatureCollection.

Contract (docs/adr/0005 and CONTEXT.md, Geometry):
- the body is the compact answer with every vertex index (`startPointIndex`, `endPointIndex`,
  `pointIndex`) removed at any depth, plus `"geometry": {"type": "FeatureCollection", ...}` in
  the same JSON text;
- one feature per geometric item, RFC 7946 `[longitude, latitude]`, 5 decimals, capped at
  `VERTEX_CAP` vertices with a `simplification` report when capping changed it;
- feature `properties` are built here (a join key into the compact answer, and the report),
  never copied from TomTom: its properties can echo the request, key included.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter
from typing import Any

import numpy as np

from core.errors import ErrorCode, ToolError
from tools.geometry.positions import MalformedGeometry
from tools.geometry.simplify import cap_geometry
from tools.shaping.routes import (
    ROUTE,
    ROUTE_ANSWER,
    TypedRoute,
    compact_routes,
    compact_typed_routes,
    joined_line,
    typed_routes,
)
from tools.shaping.shape import expect
from tools.tomtom.client import json_object

_LON, _LAT = attrgetter("longitude"), attrgetter("latitude")

VERTEX_INDEX_KEYS = frozenset({"startPointIndex", "endPointIndex", "pointIndex"})


def without_vertex_indexes(value: Any) -> Any:
    """A copy of `value` with every vertex-index key removed, at any depth."""
    if isinstance(value, dict):
        return {k: without_vertex_indexes(v) for k, v in value.items() if k not in VERTEX_INDEX_KEYS}
    if isinstance(value, list):
        return [without_vertex_indexes(v) for v in value]
    return value


def feature(geometry: dict[str, Any], properties: dict[str, Any]) -> dict[str, Any]:
    """One capped, rounded feature with our own properties (`malformed` on bad coordinates)."""
    try:
        capped, report = cap_geometry(geometry)
    except MalformedGeometry as exc:
        raise ToolError(ErrorCode.MALFORMED, f"TomTom answered with geometry we cannot read: {exc}") from None
    props = dict(properties)
    if report is not None:
        props["simplification"] = report.as_dict()
    return {"type": "Feature", "geometry": capped, "properties": props}


def with_geometry(compact: dict[str, Any], features: Iterable[dict[str, Any]]) -> dict[str, Any]:
    answer = without_vertex_indexes(compact)
    answer["geometry"] = {"type": "FeatureCollection", "features": list(features)}
    return answer


def route_line(route: dict[str, Any]) -> dict[str, Any]:
    """A route's whole line as a LineString (legs joined, the shared point once)."""
    expect(route, ROUTE, where="route")
    coordinates: list[list[float]] = []
    for leg in route.get("legs") or []:
        points = [[p.get("longitude"), p.get("latitude")] for p in leg.get("points") or []]
        if coordinates and points and points[0] == coordinates[-1]:
            points = points[1:]
        coordinates.extend(points)
    if len(coordinates) < 2:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with a route line of fewer than two points.")
    return {"type": "LineString", "coordinates": coordinates}


def route_features(body: dict[str, Any]) -> list[dict[str, Any]]:
    """`{"route": i}`: one LineString per route, in the order of the compact `routes`."""
    expect(body, ROUTE_ANSWER)
    return [feature(route_line(route), {"route": i}) for i, route in enumerate(body.get("routes") or [])]


def typed_route_line(route: TypedRoute) -> dict[str, Any]:
    """`route_line` of a typed route, its coordinates an (n, 2) array read straight from the
    points (no per-point lists); `cap_geometry` takes the array as it is."""

    def leg_line(points: list[Any]) -> np.ndarray:
        xy = np.empty((len(points), 2))
        xy[:, 0] = np.fromiter(map(_LON, points), np.float64, count=len(points))
        xy[:, 1] = np.fromiter(map(_LAT, points), np.float64, count=len(points))
        return xy

    return {"type": "LineString", "coordinates": joined_line(leg_line(leg.points or []) for leg in route.legs or [])}


def decode_route_geometry(content: bytes) -> dict[str, Any]:
    """A Calculate Route body's `response_detail: "geometry"` answer, from its bytes: the typed
    decoder's routes (tools.shaping.routes), or, when it refuses the body, the whole object
    shaped by `compact_routes` and `route_features` (same answer, same errors)."""
    routes = typed_routes(content)
    if routes is None:
        body = json_object(content)
        return with_geometry(compact_routes(body), route_features(body))
    compact = compact_typed_routes(routes)
    return with_geometry(compact, [feature(typed_route_line(route), {"route": i}) for i, route in enumerate(routes)])


def incident_features(incidents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`{"incident": i}`: one feature per incident, in the order of the (capped) compact list."""
    features = []
    for i, incident in enumerate(incidents):
        geometry = incident.get("geometry")
        if not isinstance(geometry, dict) or "type" not in geometry:
            raise ToolError(ErrorCode.MALFORMED, f"TomTom answered with incident {i} without geometry.")
        features.append(
            feature({"type": geometry["type"], "coordinates": geometry.get("coordinates")}, {"incident": i})
        )
    return features
