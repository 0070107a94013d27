"""Polygon rings: closing them, and capping them without making the polygon invalid.

Semantics
---------
A ring is closed by repeating its first position when its last differs (`close_ring`); a
ring of fewer than ``RING_MIN`` (4) positions once closed is `MalformedGeometry`.

Simplifying the rings of a polygon one by one can make it invalid (a ring crossing itself or
another, a hole poking out of its shell). `cap_rings` caps every ring to its budget and checks
the result with ``shapely.is_valid``; while it is invalid, every budget grows by 25 %
(rounded up, at most the whole ring) and the rings are capped again, until the polygon is
valid or every ring is whole. A polygon that is invalid already once rounded, at full
resolution, is left as first simplified: more vertices cannot help it.

Rings come as one flat list. ``groups`` is ``None`` for a Polygon (its first ring the shell,
the rest its holes) and, for a MultiPolygon, its member polygons' ring lists, whose lengths
cut the flat list into polygons.

Edge cases
----------
>>> close_ring(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), 0).tolist()
[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
>>> try:
...     close_ring(np.array([[0.0, 0.0], [1.0, 0.0]]), 2)
... except MalformedGeometry as error:
...     print(error)
ring 2 has 3 positions once closed; a ring needs at least 4

An octagon with a diamond hole: at 4 positions each, the shell is a triangle the hole pokes
out of, so both rings grow to 5 and the polygon stays valid:

>>> shell = np.array([[1, 0], [0.7, 0.7], [0, 1], [-0.7, 0.7], [-1, 0], [-0.7, -0.7], [0, -1], [0.7, -0.7], [1, 0]])
>>> hole = np.array([[0.8, 0], [0, -0.8], [-0.8, 0], [0, 0.8], [0.8, 0]])
>>> capped, grown = cap_rings([shell, hole], [shell[:, 0], hole[:, 0]], np.array([4, 4]), None)
>>> [len(ring) for ring, _ in capped], grown
([5, 5], True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tools.geometry.paths import RING_MIN, cap_path, dedupe
from tools.geometry.positions import MalformedGeometry, rounded

_GROWTH = 1.25


def close_ring(ring: np.ndarray, i: int) -> np.ndarray:
    """The ring, closed if needed; rings shorter than 4 positions once closed are malformed."""
    if len(ring) and not (ring[0] == ring[-1]).all():
        ring = np.vstack((ring, ring[:1]))
    if len(ring) < RING_MIN:
        raise MalformedGeometry(f"ring {i} has {len(ring)} positions once closed; a ring needs at least 4")
    return ring


def cap_rings(
    rings: list[np.ndarray], lons: list[np.ndarray], budgets: np.ndarray, groups: list[list[Any]] | None
) -> tuple[list[tuple[np.ndarray, float]], bool]:
    """The rings capped to their budgets, grown until the polygon is valid.

    Parameters
    ----------
    rings : list of (n, 2) arrays
        The closed rings, checked.
    lons : list of arrays
        Each ring's longitudes, made continuous across the antimeridian.
    budgets : int array
        Each ring's budget, at least 4 or the whole ring.
    groups : list of lists, or None
        None for a Polygon; a MultiPolygon's member ring lists (only their lengths count).

    Returns
    -------
    capped : list of (ring, max_error_m)
        Each ring rounded and capped (`tools.geometry.paths.cap_path`), with its error bound.
    grown : bool
        Whether the budgets had to grow.
    """
    sizes = np.array([len(ring) for ring in rings], dtype=np.int64)
    grown = False
    while True:
        capped = [cap_path(ring, lon, int(b), True) for ring, lon, b in zip(rings, lons, budgets, strict=True)]
        if (budgets >= sizes).all() or is_valid_polygon([c[0] for c in capped], groups):
            return capped, grown
        if not grown and not is_valid_polygon([dedupe(rounded(ring), True) for ring in rings], groups):
            return capped, grown  # the full rounded polygon is invalid too: more vertices cannot help
        budgets, grown = np.minimum(sizes, np.ceil(budgets * _GROWTH).astype(np.int64)), True


def is_valid_polygon(rings: list[np.ndarray], groups: list[list[Any]] | None) -> bool:
    """Whether the rings make a valid Polygon (``groups`` None) or MultiPolygon."""
    import shapely  # on first use: only a capped polygon needs GEOS (4 MB a worker need not hold)

    sizes = [len(g) for g in groups] if groups else [len(rings)]
    polygons, at = [], 0
    for size in sizes:
        polygons.append(shapely.Polygon(rings[at], rings[at + 1 : at + size]) if size else shapely.Polygon())
        at += size
    return bool(shapely.is_valid(shapely.MultiPolygon(polygons) if groups else polygons[0]))
