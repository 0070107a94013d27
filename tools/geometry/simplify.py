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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import shapely

from tools.geometry.douglas_peucker import priority_dp
from tools.geometry.positions import MalformedGeometry, check_positions, round_positions, rounded, shown
from tools.geometry.sphere import (
    EARTH_RADIUS_M,
    M_PER_DEG,
    arc_distance_m,
    cross,
    max_cos,
    unit_vectors,
    unwrap_longitudes,
)

VERTEX_CAP: int = 1000
"""Vertices allowed per feature, over all its paths."""

_HALF_CIRCLE_M = EARTH_RADIUS_M * math.pi  # the trivial bound on any distance
_LINE_MIN = 2
_RING_MIN = 4
_GROWTH = 1.25
_FLOAT_SLACK_M = 1e-6
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
    if budget < _LINE_MIN:
        raise ValueError(f"budget must be at least {_LINE_MIN}, got {budget}")
    xy = check_positions(coords)
    n = len(xy)
    needed = np.unique(np.asarray([] if required is None else required, dtype=np.int64))
    if needed.size and (needed[0] < 0 or needed[-1] >= n):
        raise ValueError(f"required indices must be within [0, {n}), got {needed[0]}..{needed[-1]}")
    if n <= budget:
        return np.arange(n, dtype=np.int64), 0.0
    lon = unwrap_longitudes(xy[:, 0])
    kept, seg_err = priority_dp(lon, xy[:, 1], budget, needed)
    gap = _gc_gap_m(lon[kept], xy[kept, 1])
    return kept, float(np.max(np.where(np.diff(kept) > 1, seg_err * M_PER_DEG + gap, 0.0)))


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
    paths = [_close(check_positions(p), i) if ring else check_positions(p) for i, p in enumerate(raw)]
    sizes = np.array([len(p) for p in paths], dtype=np.int64)
    total = int(sizes.sum())
    if total <= cap:
        out = [_dedupe(rounded(p), ring) for p in paths]
        return {**geometry, "coordinates": _nest(kind, out, groups)}, None

    lons = [unwrap_longitudes(p[:, 0]) for p in paths]
    budgets = _share(cap, sizes, _RING_MIN if ring else _LINE_MIN)
    grown = False
    while True:
        capped = [_cap_path(p, lon, int(b), ring) for p, lon, b in zip(paths, lons, budgets, strict=True)]
        out = [c[0] for c in capped]
        if not ring or (budgets >= sizes).all() or _valid(out, groups):
            break
        if not grown and not _valid([_dedupe(rounded(p), ring) for p in paths], groups):
            break  # the full rounded polygon is invalid too: more vertices cannot help
        budgets, grown = np.minimum(sizes, np.ceil(budgets * _GROWTH).astype(np.int64)), True
    points = sum(len(o) for o in out)
    report = Simplification(
        original_points=total,
        points=points,
        max_error_m=math.ceil(max(c[1] for c in capped) + _FLOAT_SLACK_M),
        cap_exceeded_for_validity=grown and points > cap,
    )
    return {**geometry, "coordinates": _nest(kind, out, groups)}, report


# --- validation -----------------------------------------------------------------------------


def _members(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise MalformedGeometry(f"{what} coordinates must be an array, got {shown(value)}")
    return list(value)


def _close(ring: np.ndarray, i: int) -> np.ndarray:
    """The ring, closed if needed; rings shorter than 4 positions once closed are malformed."""
    if len(ring) and not (ring[0] == ring[-1]).all():
        ring = np.vstack((ring, ring[:1]))
    if len(ring) < _RING_MIN:
        raise MalformedGeometry(f"ring {i} has {len(ring)} positions once closed; a ring needs at least 4")
    return ring


# --- error bounds ---------------------------------------------------------------------------


def _gc_gap_m(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """For each segment of a path, a bound in metres on the distance from its straight
    lon/lat line to the great-circle arc between the same endpoints.

    On the unit sphere let ``g(t)`` run along the lon/lat line, ``n`` be the arc's pole and
    ``f(t) = g(t).n``, so ``f(0) = f(1) = 0`` and ``|f(t)| <= t (1 - t) max|f''| / 2``. From
    ``g'' = -dphi^2 g + 2 dphi dlon sin(phi) (sin lon, -cos lon, 0) - dlon^2 (g - sin(phi) z)``,
    ``max|f''| <= (dphi^2 + dlon^2) max|f| + sin_max (2 dphi dlon h + dlon^2 |n_z|)`` with ``h``
    the horizontal part of ``n``, hence ``max|f| <= sin_max (...) / (8 - dphi^2 - dlon^2)`` and
    the distance to the great circle is ``asin(max|f|)``. Its foot lies on the arc when
    ``sin(theta) >= (dphi + dlon)^2 / 2`` (the same bound on the along-arc components);
    otherwise half the circumference is returned.
    """
    dlon, dphi = np.radians(np.abs(np.diff(lon))), np.radians(np.abs(np.diff(lat)))
    u = unit_vectors(lon, lat)
    pole = cross(u[:, :-1], u[:, 1:])
    sin_theta = np.sqrt((pole * pole).sum(axis=0))
    pole /= np.where(sin_theta > 0, sin_theta, 1.0)
    sin_max = np.sin(np.radians(np.maximum(np.abs(lat[:-1]), np.abs(lat[1:]))))
    curve = 2 * dphi * dlon * np.hypot(pole[0], pole[1]) + dlon * dlon * np.abs(pole[2])
    with np.errstate(divide="ignore", invalid="ignore"):
        f_max = sin_max * curve / (8 - dphi * dphi - dlon * dlon)
    on_arc = (dphi * dphi + dlon * dlon < 8) & (sin_theta >= (dphi + dlon) ** 2 / 2) & (sin_theta > 0)
    gap = np.where(on_arc, np.arcsin(np.clip(f_max, 0.0, 1.0)) * EARTH_RADIUS_M, _HALF_CIRCLE_M)
    return np.where(dlon == 0, 0.0, gap)


def _bound_m(lon: np.ndarray, lat: np.ndarray, kept: np.ndarray, out: np.ndarray, seg_err: np.ndarray) -> float:
    """Bound in metres on the distance from the path's vertices to the rounded kept line.

    ``lon`` (unwrapped) and ``lat`` are the whole path, ``out`` its ``kept`` vertices rounded
    and ``seg_err`` the planar error of each kept segment (degrees). A vertex within
    ``seg_err`` of a segment is within ``seg_err + shift`` of the rounded segment (``shift``:
    the larger endpoint move, its longitude scaled by the largest cosine of latitude involved),
    and within a further great-circle gap of the rounded arc. Segments whose bound exceeds
    ``floor`` (about what the result must be) are then bounded vertex by vertex
    (`_vertex_bounds_m`).
    """
    klat = lat[kept]
    dlon = np.mod(out[:, 0] - lon[kept] + 180.0, 360.0) - 180.0  # drops the unwrapping offset
    dlat = out[:, 1] - klat
    if kept.size == 1:
        return float(np.hypot(dlon, dlat)[0]) * M_PER_DEG
    rlon = lon[kept] + dlon
    lats = np.stack((klat[:-1], klat[1:], out[:-1, 1], out[1:, 1]))
    kx = max_cos(lats.min(axis=0), lats.max(axis=0))
    shift = np.maximum(np.hypot(kx * dlon[:-1], dlat[:-1]), np.hypot(kx * dlon[1:], dlat[1:])) * M_PER_DEG
    inner = np.diff(kept) > 1  # segments that replace vertices
    gap = np.where(inner, _gc_gap_m(rlon, out[:, 1]), 0.0)
    bound = shift + seg_err * M_PER_DEG + gap
    floor = math.ceil(max(float((seg_err * M_PER_DEG - shift).max()), 0.0))  # the result is about this
    redo = np.flatnonzero(inner & (bound + _FLOAT_SLACK_M > floor))
    if redo.size:
        vertices = _vertex_bounds_m(lon, lat, kept, rlon, out[:, 1], redo, gap[redo], floor - _FLOAT_SLACK_M)
        bound[redo] = np.maximum(shift[redo], vertices)
    return float(bound.max())


def _vertex_bounds_m(
    lon: np.ndarray,
    lat: np.ndarray,
    kept: np.ndarray,
    rlon: np.ndarray,
    rlat: np.ndarray,
    segs: np.ndarray,
    gap: np.ndarray,
    cut: float,
) -> np.ndarray:
    """For each kept segment in ``segs``, a bound in metres on the distance from the vertices
    it replaces to the rounded segment ``(rlon, rlat)[j] -> [j + 1]``, vertex by vertex.

    A vertex's planar distance to the straight lon/lat segment, longitudes scaled by the largest
    cosine of a latitude between the segment's vertices, bounds that reading. The arc lies
    within ``4 t (1 - t) gap`` of the point at parameter ``t`` of that segment (the gap bound
    comes from a second derivative, so it scales as a parabola through the ends); where that
    sum exceeds ``cut``, the exact great-circle distance to the arc is used instead. (A trivial
    gap, half the circumference, is not scaled.)
    """
    a, b = kept[segs], kept[segs + 1]
    count = b - a - 1
    start = np.cumsum(count) - count
    idx = np.arange(int(count.sum())) + np.repeat(a + 1 - start, count)
    plon, plat = lon[idx], lat[idx]
    ends = np.stack((rlat[segs], rlat[segs + 1]))
    kx = max_cos(
        np.minimum(np.minimum.reduceat(plat, start), ends.min(axis=0)),
        np.maximum(np.maximum.reduceat(plat, start), ends.max(axis=0)),
    )
    chord = (rlon[segs + 1] - rlon[segs]) * kx + 1j * (rlat[segs + 1] - rlat[segs])
    length = np.abs(chord)
    z = np.empty(idx.size, dtype=np.complex128)
    z.real = (plon - np.repeat(rlon[segs], count)) * np.repeat(kx, count)
    z.imag = plat - np.repeat(rlat[segs], count)
    z *= np.repeat(np.divide(1.0, chord, out=np.zeros_like(chord), where=length > 0), count)
    t = np.minimum(np.maximum(z.real, 0.0), np.repeat(length > 0, count))  # t = 0 on a zero-length chord
    planar = np.abs(z - t) * np.repeat(np.where(length > 0, length, 1.0) * M_PER_DEG, count)
    gap = np.repeat(gap, count)
    arc = planar + np.where(gap < _HALF_CIRCLE_M, 4 * t * (1 - t), 1.0) * gap
    over = np.flatnonzero(arc > cut)
    if over.size:
        end_a, end_b = np.repeat(segs, count)[over], np.repeat(segs + 1, count)[over]
        exact = arc_distance_m(plon[over], plat[over], rlon[end_a], rlat[end_a], rlon[end_b], rlat[end_b])
        arc[over] = np.maximum(planar[over], np.minimum(arc[over], exact))
    return np.maximum.reduceat(arc, start)


# --- features -------------------------------------------------------------------------------


def _share(cap: int, sizes: np.ndarray, minimum: int) -> np.ndarray:
    """Each path's budget: ``floor(cap * n_path / n_total)``, at least ``minimum``.

    Paths held at their minimum are taken out of the share first (repeatedly), so the budgets
    add up to at most ``cap`` whenever the minimums fit.
    """
    floor = np.minimum(sizes, minimum)
    pinned = np.zeros(sizes.size, dtype=bool)
    while True:
        free, weight = cap - int(floor[pinned].sum()), int(sizes[~pinned].sum())
        share = np.maximum(free, 0) * sizes // max(weight, 1)
        low = ~pinned & (share < floor)
        if not low.any():
            return np.where(pinned, floor, np.minimum(share, sizes))
        pinned |= low


def _cap_path(xy: np.ndarray, lon: np.ndarray, budget: int, ring: bool) -> tuple[np.ndarray, float]:
    """One path simplified to ``budget`` vertices and rounded, with its error bound in metres."""
    if not len(xy):
        return xy, 0.0
    if len(xy) <= budget:
        kept, seg_err = np.arange(len(xy)), np.zeros(max(len(xy) - 1, 0))
    else:
        kept, seg_err = priority_dp(lon, xy[:, 1], budget, np.empty(0, dtype=np.int64))
    out = rounded(xy[kept])
    return _dedupe(out, ring), _bound_m(lon, xy[:, 1], kept, out, seg_err)


def _dedupe(xy: np.ndarray, ring: bool) -> np.ndarray:
    """Drop consecutive duplicates, keeping a line at 2 positions and a ring at 4."""
    if len(xy) < 2:
        return xy
    keep = np.concatenate(([True], (xy[1:] != xy[:-1]).any(axis=1)))
    if keep.all():
        return xy
    if ring:
        return xy[keep] if keep.sum() >= _RING_MIN else xy
    return xy[keep] if keep.sum() >= _LINE_MIN else xy[[0, -1]]


def _valid(rings: list[np.ndarray], groups: list[list[Any]] | None) -> bool:
    """Whether the rings make a valid Polygon (``groups`` None) or MultiPolygon."""
    sizes = [len(g) for g in groups] if groups else [len(rings)]
    polygons, at = [], 0
    for size in sizes:
        polygons.append(shapely.Polygon(rings[at], rings[at + 1 : at + size]) if size else shapely.Polygon())
        at += size
    return bool(shapely.is_valid(shapely.MultiPolygon(polygons) if groups else polygons[0]))


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
