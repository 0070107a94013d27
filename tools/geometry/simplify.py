"""Round GeoJSON geometries to 5 decimals and cap them at a vertex budget.

Semantics
---------
Positions are RFC 7946 ``[longitude, latitude]`` (an altitude, if present, is validated and
dropped). ``cap_geometry(geometry, cap)`` returns a new geometry whose coordinates are rounded
to 5 decimals (about 1.1 m), with consecutive duplicate positions removed. When the geometry
has more than ``cap`` vertices over all its paths, each path (a line, or a polygon ring) is
simplified to its share of the cap and a `Simplification` report is returned; otherwise the
report is ``None``.

Simplification is an anchored, priority-driven Douglas-Peucker. A path's budget is
``floor(cap * n_path / n_total)``, at least 2 for a line and 4 for a ring (paths held at that
minimum are taken out of the share first, so the budgets fit the cap). The endpoints and the
``min(64, budget // 8) - 1`` anchors at ``round(k (n - 1) / anchors)`` are kept first; then the
vertex farthest from the segment between its kept neighbours (the projection onto the segment
clamped to its ends) is kept, again and again, until the path has its budget or no vertex is
off its segment; on equal distances the segment that starts first goes first. Distances are
planar in an equirectangular projection local to each anchor span: longitudes (made
continuous across the antimeridian) are scaled by the largest ``cos(latitude)`` within the
span, so a planar distance is never shorter than the distance on the sphere.

``Simplification.max_error_m`` is an integer upper bound (rounded up) on the distance in metres,
on a sphere of radius 6,371,008.8 m, from any original vertex to the returned line, the
5-decimal rounding included. It holds whether a returned segment is read as straight in
longitude/latitude (RFC 7946) or as a great-circle arc, and for lines of any length.

Edge cases
----------
At or below the cap only rounding happens:

>>> cap_geometry({"type": "LineString", "coordinates": [[4.9000001, 52.37], [4.9, 52.37], [5, 52]]})
({'type': 'LineString', 'coordinates': [[4.9, 52.37], [5.0, 52.0]]}, None)

A line crossing the antimeridian is simplified the short way and keeps its longitudes:

>>> line = [[179 + i / 100, i / 100] for i in range(100)] + [[j / 100 - 180, 1 - j / 100] for j in range(101)]
>>> geometry, report = cap_geometry({"type": "LineString", "coordinates": line}, cap=3)
>>> geometry["coordinates"], report.as_dict()
([[179.0, 0.0], [-180.0, 1.0], [-179.0, 0.0]], {'original_points': 201, 'points': 3, 'max_error_m': 5})

The legs are straight in lon/lat, so the error is only the 5 m between a 157 km leg and its
great-circle arc.

Rings are closed first; malformed input raises `MalformedGeometry`, a ``ValueError``:

>>> cap_geometry({"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [0, 1]]]})[0]["coordinates"]
[[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]]
>>> try:
...     cap_geometry({"type": "LineString", "coordinates": [[4.9, 95.0], [5.0, 52.0]]})
... except MalformedGeometry as error:
...     print(error)
position 0 [4.9, 95.0]: latitude must be within [-90, 90]

A polygon (or multipolygon) that simplification would make invalid gets 25 % more vertices on
every ring until it is valid; if that takes it over the cap, the report says
``cap_exceeded_for_validity``. A polygon already invalid once rounded is left as simplified.
Points and multipoints are only rounded. A feature with more paths than the cap can give each
its minimum keeps more than ``cap`` vertices.

The parts live in their own modules (see `tools.geometry`); this one reads the GeoJSON
nesting and puts the parts together.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from tools.geometry.douglas_peucker import priority_dp
from tools.geometry.error_bound import unrounded_bound_m, whole_metres
from tools.geometry.paths import LINE_MIN, RING_MIN, cap_path, dedupe, share_budgets
from tools.geometry.polygons import cap_rings, close_ring
from tools.geometry.positions import MalformedGeometry, check_positions, round_positions, rounded, shown
from tools.geometry.sphere import unwrap_longitudes

VERTEX_CAP: int = 1000
"""Vertices allowed per feature, over all its paths."""

_SIMPLE_TYPES = ("LineString", "MultiLineString", "Polygon", "MultiPolygon")


@dataclass(frozen=True, slots=True)
class Simplification:
    """What capping did to one feature.

    Attributes
    ----------
    original_points : int
        Vertices over all paths of the input (unclosed rings counted closed).
    points : int
        Vertices over all paths of the output.
    max_error_m : int
        Upper bound in metres on the distance from any input vertex to the output line,
        rounding included.
    cap_exceeded_for_validity : bool
        True when polygon rings kept more than the cap so that the polygon stays valid.
    """

    original_points: int
    points: int
    max_error_m: int
    cap_exceeded_for_validity: bool = False

    def as_dict(self) -> dict[str, int | bool]:
        """The report as JSON-ready data; ``cap_exceeded_for_validity`` appears only when true."""
        report: dict[str, int | bool] = {
            "original_points": self.original_points,
            "points": self.points,
            "max_error_m": self.max_error_m,
        }
        if self.cap_exceeded_for_validity:
            report["cap_exceeded_for_validity"] = True
        return report


def simplify_indices(
    coords: np.ndarray, budget: int, *, required: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """Choose the vertices one path keeps, by anchored priority Douglas-Peucker.

    Parameters
    ----------
    coords : (n, 2) array of [lon, lat]
        One path: a line, or a closed ring (first position repeated last).
    budget : int
        Vertices to keep, at least 2. Fewer are kept when the rest lie on their segments.
    required : array of int, optional
        Indices kept whatever their error (counted in the budget, which they may exceed).

    Returns
    -------
    indices : numpy.ndarray
        Sorted int64 indices of the kept vertices; the endpoints are always kept.
    max_error_m : float
        Upper bound in metres on the distance from any vertex of ``coords`` to the kept line
        (its segments read as straight in lon/lat or as great-circle arcs), rounding excluded.
    """
    if budget < LINE_MIN:
        raise ValueError(f"budget must be at least {LINE_MIN}, got {budget}")
    xy = check_positions(coords)
    n = len(xy)
    needed = np.unique(np.asarray([] if required is None else required, dtype=np.int64))
    if needed.size and (needed[0] < 0 or needed[-1] >= n):
        raise ValueError(f"required indices must be within [0, {n}), got {needed[0]}..{needed[-1]}")
    if n <= budget:
        return np.arange(n, dtype=np.int64), 0.0
    lon = unwrap_longitudes(xy[:, 0])
    kept, seg_err = priority_dp(lon, xy[:, 1], budget, needed)
    return kept, unrounded_bound_m(lon, xy[:, 1], kept, seg_err)


def cap_geometry(geometry: dict, cap: int = VERTEX_CAP) -> tuple[dict, Simplification | None]:
    """Round a GeoJSON geometry to 5 decimals and cap its vertices.

    Parameters
    ----------
    geometry : dict
        A GeoJSON Point, MultiPoint, LineString, MultiLineString, Polygon or MultiPolygon.
        Members other than ``coordinates`` are copied.
    cap : int
        Vertices allowed over all paths (rings closed); points are never simplified.

    Returns
    -------
    geometry : dict
        A new geometry; see the module docstring for the semantics.
    report : Simplification or None
        None when nothing was simplified.

    Raises
    ------
    MalformedGeometry
        Not a supported GeoJSON geometry: unknown type, wrong nesting, a bad position, or a
        ring of fewer than 4 positions once closed.
    """
    if not isinstance(geometry, dict):
        raise MalformedGeometry(f"a geometry is a JSON object, got {shown(geometry)}")
    kind, coords = geometry.get("type"), geometry.get("coordinates")
    if kind not in ("Point", "MultiPoint", *_SIMPLE_TYPES):
        raise MalformedGeometry(f"unsupported geometry type {shown(kind)}")
    if isinstance(coords, list | tuple) and not coords:
        return {**geometry, "coordinates": []}, None
    if kind == "Point":
        return {**geometry, "coordinates": round_positions(check_positions([coords]))[0]}, None
    if kind == "MultiPoint":
        return {**geometry, "coordinates": round_positions(check_positions(coords))}, None

    ring = kind in ("Polygon", "MultiPolygon")
    groups = [_members(p, "polygon") for p in _members(coords, kind)] if kind == "MultiPolygon" else None
    raw = [coords] if kind == "LineString" else list(chain.from_iterable(groups)) if groups else _members(coords, kind)
    paths = [close_ring(check_positions(p), i) if ring else check_positions(p) for i, p in enumerate(raw)]
    sizes = np.array([len(p) for p in paths], dtype=np.int64)
    total = int(sizes.sum())
    if total <= cap:
        out = [dedupe(rounded(p), ring) for p in paths]
        return {**geometry, "coordinates": _nest(kind, out, groups)}, None

    lons = [unwrap_longitudes(p[:, 0]) for p in paths]
    budgets = share_budgets(cap, sizes, RING_MIN if ring else LINE_MIN)
    if ring:
        capped, grown = cap_rings(paths, lons, budgets, groups)
    else:
        capped = [cap_path(p, lon, int(b), False) for p, lon, b in zip(paths, lons, budgets, strict=True)]
        grown = False
    out = [c[0] for c in capped]
    points = sum(len(o) for o in out)
    report = Simplification(
        original_points=total,
        points=points,
        max_error_m=whole_metres(max(c[1] for c in capped)),
        cap_exceeded_for_validity=grown and points > cap,
    )
    return {**geometry, "coordinates": _nest(kind, out, groups)}, report


# --- nesting --------------------------------------------------------------------------------


def _members(value: Any, what: str) -> list[Any]:
    """The members of a coordinates array (``what`` names it in the error if it is not one)."""
    if not isinstance(value, list | tuple):
        raise MalformedGeometry(f"{what} coordinates must be an array, got {shown(value)}")
    return list(value)


def _nest(kind: str, paths: list[np.ndarray], groups: list[list[Any]] | None) -> list[Any]:
    """Output paths back in the geometry's nesting."""
    lists = [p.tolist() for p in paths]
    if kind == "LineString":
        return lists[0]
    if groups is None:
        return lists
    nested, at = [], 0
    for group in groups:
        nested.append(lists[at : at + len(group)])
        at += len(group)
    return nested
