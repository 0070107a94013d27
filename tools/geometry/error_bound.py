"""Error bounds in metres, on the sphere, for a simplified path.

Semantics
---------
A simplified path keeps some of its vertices (``kept``, sorted indices); each kept segment
replaces the vertices between its ends. The Douglas-Peucker search reports, per kept segment,
``seg_err``: the largest planar distance, in degrees of latitude, from a replaced vertex to the
segment in a projection that never shortens distances (`tools.geometry.douglas_peucker`).

A bound here is an upper bound on the distance, on the sphere of `tools.geometry.sphere`, from
every vertex of the path to the kept line. It holds whether a kept segment is read as straight
in longitude/latitude (RFC 7946) or as the great-circle arc between its ends, and for segments
of any length, so each segment adds ``gc_gap_m``, a proven bound on the distance between those
two readings. `unrounded_bound_m` bounds the kept vertices as they are; `rounded_bound_m` the
kept vertices once rounded to 5 decimals, which adds how far the rounding moved the ends.
`whole_metres` turns a bound into the integer that is reported, a micrometre of float
error included.

Edge cases
----------
Along a meridian and along the equator the two readings agree; along the 60th parallel a
degree of longitude is 105 m from its great-circle arc; a segment too long for the proof
(about half the globe) gets the trivial bound, half the circumference:

>>> gc_gap_m(np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])).tolist()
[0.0, 0.0]
>>> gc_gap_m(np.array([0.0, 1.0]), np.array([60.0, 60.0])).round(1).tolist()
[105.0]
>>> gc_gap_m(np.array([0.0, 179.0]), np.array([45.0, 45.0])).round(1).tolist()
[20015114.4]

A vertex 0.001 degree of latitude off a short segment is bounded at 111.2 m, rounding included:

>>> lon, lat = np.array([0.0, 0.5, 1.0]), np.array([52.0, 52.001, 52.0])
>>> round(rounded_bound_m(lon, lat, np.array([0, 2]), np.array([[0.0, 52.0], [1.0, 52.0]]), np.array([0.001])), 3)
111.195
>>> whole_metres(111.195), whole_metres(2.999998), whole_metres(3.0)
(112, 3, 4)
"""

from __future__ import annotations

import math

import numpy as np

from tools.geometry.compiled import kernel
from tools.geometry.sphere import EARTH_RADIUS_M, M_PER_DEG, arc_distance_m, cross, max_cos, unit_vectors

_HALF_CIRCLE_M = EARTH_RADIUS_M * math.pi  # the trivial bound on any distance
_FLOAT_SLACK_M = 1e-6  # float error allowed for before a bound is rounded up


def whole_metres(bound_m: float) -> int:
    """A bound as reported: rounded up to whole metres after adding a micrometre for float error."""
    return math.ceil(bound_m + _FLOAT_SLACK_M)


def unrounded_bound_m(lon: np.ndarray, lat: np.ndarray, kept: np.ndarray, seg_err: np.ndarray) -> float:
    """Bound in metres on the distance from the path's vertices to its ``kept`` vertices' line.

    ``lon`` (unwrapped) and ``lat`` are the whole path and ``seg_err`` the planar error of
    each kept segment (degrees); the kept vertices are taken as they are, not rounded.
    """
    gap = gc_gap_m(lon[kept], lat[kept])
    return float(np.max(np.where(np.diff(kept) > 1, seg_err * M_PER_DEG + gap, 0.0)))


def gc_gap_m(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
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
    if kernel is not None:  # the same formula in one pass
        gap = np.empty(max(lon.size - 1, 0))
        if lon.size:
            kernel.gaps(_contiguous(lon), _contiguous(lat), gap)
        return gap
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


def rounded_bound_m(lon: np.ndarray, lat: np.ndarray, kept: np.ndarray, out: np.ndarray, seg_err: np.ndarray) -> float:
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
    gap = np.where(inner, gc_gap_m(rlon, out[:, 1]), 0.0)
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
    if kernel is not None:  # the same bounds in one pass
        out = np.empty(segs.size)
        kernel.vertex_bounds(*map(_contiguous, (lon, lat, kept, rlon, rlat, segs, gap)), float(cut), out)
        return out
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
    z *= np.repeat(np.divide(1.0, chord, out=np.ones_like(chord), where=length > 0), count)
    t = np.minimum(np.maximum(z.real, 0.0), np.repeat(length > 0, count))  # a zero-length chord: to its start
    planar = np.abs(z - t) * np.repeat(np.where(length > 0, length, 1.0) * M_PER_DEG, count)
    gap = np.repeat(gap, count)
    arc = planar + np.where(gap < _HALF_CIRCLE_M, 4 * t * (1 - t), 1.0) * gap
    over = np.flatnonzero(arc > cut)
    if over.size:
        end_a, end_b = np.repeat(segs, count)[over], np.repeat(segs + 1, count)[over]
        exact = arc_distance_m(plon[over], plat[over], rlon[end_a], rlat[end_a], rlon[end_b], rlat[end_b])
        arc[over] = np.maximum(planar[over], np.minimum(arc[over], exact))
    return np.maximum.reduceat(arc, start)


def _contiguous(values: np.ndarray) -> np.ndarray:
    """``values`` as the kernel reads them: C-contiguous float64, or int64 for indices."""
    return np.ascontiguousarray(values, dtype=np.int64 if values.dtype.kind in "iu" else np.float64)
