"""A circle on the Earth as a polygon ring, to draw a search circle as GeoJSON.

``circle_ring(center, radius_m)`` returns ``CIRCLE_VERTICES`` positions at ``radius_m`` metres
(great-circle distance on the sphere every distance here uses) from ``center``, starting due
north and going counter-clockwise (west first), as RFC 7946 wants an exterior ring, closed by
repeating the first position. Positions are ``[longitude, latitude]`` with longitudes wrapped
into [-180, 180]; they are not rounded (the geometry cap rounds them).

>>> ring = circle_ring([0.0, 0.0], 111_195.08)
>>> len(ring), ring[0] == ring[-1]
(65, True)
>>> [round(value, 5) for value in ring[0]], [round(value, 5) for value in ring[16]]
([0.0, 1.0], [-1.0, 0.0])
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tools.geometry.sphere import EARTH_RADIUS_M

CIRCLE_VERTICES = 64
"""Distinct vertices of the polygon drawn for a circle (65 positions once closed)."""


def circle_ring(center: Sequence[float], radius_m: float, vertices: int = CIRCLE_VERTICES) -> list[list[float]]:
    """The closed ring of ``vertices`` points at ``radius_m`` metres around ``center`` [lon, lat]."""
    lon, lat = (math.radians(value) for value in center)
    angle = radius_m / EARTH_RADIUS_M
    ring = []
    for step in range(vertices):
        bearing = -2 * math.pi * step / vertices
        sin_lat = math.sin(lat) * math.cos(angle) + math.cos(lat) * math.sin(angle) * math.cos(bearing)
        to_lat = math.asin(max(-1.0, min(1.0, sin_lat)))
        to_lon = lon + math.atan2(
            math.sin(bearing) * math.sin(angle) * math.cos(lat), math.cos(angle) - math.sin(lat) * sin_lat
        )
        wrapped = (math.degrees(to_lon) + 180.0) % 360.0 - 180.0
        ring.append([wrapped, math.degrees(to_lat)])
    ring.append(list(ring[0]))
    return ring
