"""The sphere every distance is measured on, and the local projections onto the plane.

Semantics
---------
Positions are ``[longitude, latitude]`` in degrees; arrays of them are handled column-wise
(``lon`` and ``lat`` of equal shape). Distances are on a sphere of radius ``EARTH_RADIUS_M``,
on which a degree of latitude is ``M_PER_DEG`` metres.

The simplifier measures in a local equirectangular projection, in degrees of latitude, that
scales longitudes by ``max_cos(low, high)``: the largest ``cos(latitude)`` within the
latitudes ``[low, high]`` of what is projected. A planar distance is then never shorter than
the distance on the sphere. Longitudes are first made continuous across the antimeridian
(`unwrap_longitudes`), so a path that crosses it is measured the short way.

Exact distances use unit vectors in 3 dimensions, stored as ``(3, n)`` arrays (one column a
position), which numpy handles with less overhead than ``(n, 3)`` at the sizes used here.

Edge cases
----------
The band's largest cosine is at the latitude nearest the equator, 0 if the band crosses it:

>>> max_cos(np.array([10.0, -30.0, -5.0]), np.array([20.0, -10.0, 5.0])).round(6).tolist()
[0.984808, 0.984808, 1.0]

Unwrapping keeps the first longitude and may leave [-180, 180]; a path with no step of more
than 180 degrees is returned as it is:

>>> unwrap_longitudes(np.array([179.5, -179.5, -178.5])).tolist()
[179.5, 180.5, 181.5]

The distance to an arc is across it when the foot of the perpendicular lies on it, otherwise
to its nearer end:

>>> distances = arc_distance_m(*np.array([[0.0, 2.0], [1.0, 0.0], [-1.0, -1.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]))
>>> (distances / M_PER_DEG).round(9).tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import math

import numpy as np

EARTH_RADIUS_M = 6_371_008.8
"""Mean Earth radius (IUGG), the sphere every distance is measured on."""

M_PER_DEG = EARTH_RADIUS_M * math.pi / 180
"""Metres in a degree of latitude (and of longitude on the equator)."""


def unwrap_longitudes(lon: np.ndarray) -> np.ndarray:
    """Longitudes made continuous across the antimeridian (steps of more than 180 degrees)."""
    if lon.size < 2 or np.abs(np.diff(lon)).max() <= 180.0:
        return lon
    return np.unwrap(lon, period=360.0)


def max_cos(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The largest cosine of a latitude within ``[low, high]`` (degrees)."""
    return np.cos(np.radians(np.minimum(np.maximum(low, 0.0), high)))


def unit_vectors(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Unit vectors (3, n) of positions in degrees."""
    lam, phi = np.radians(lon), np.radians(lat)
    return np.stack((np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)))


def cross(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Cross products of vectors (3, n) (np.cross costs more in overhead at these sizes)."""
    return np.stack((p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]))


def angle(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Angle in radians between unit vectors (3, n)."""
    product = cross(p, q)
    return np.arctan2(np.sqrt((product * product).sum(axis=0)), (p * q).sum(axis=0))


def arc_distance_m(
    plon: np.ndarray, plat: np.ndarray, alon: np.ndarray, alat: np.ndarray, blon: np.ndarray, blat: np.ndarray
) -> np.ndarray:
    """Great-circle distance in metres from points p to the arcs a -> b (degrees).

    An arc of length 0 counts as its end point.
    """
    p, u, v = unit_vectors(plon, plat), unit_vectors(alon, alat), unit_vectors(blon, blat)
    pole = cross(u, v)
    norm = np.sqrt((pole * pole).sum(axis=0))
    inside = (norm > 0) & ((cross(u, p) * pole).sum(axis=0) >= 0) & ((cross(p, v) * pole).sum(axis=0) >= 0)
    across = np.arcsin(np.minimum(np.abs((p * pole).sum(axis=0)) / np.where(norm > 0, norm, 1.0), 1.0))
    return np.where(inside, across, np.minimum(angle(p, u), angle(p, v))) * EARTH_RADIUS_M
