"""One path (a line or a polygon ring) capped: its budget, its kept vertices, rounding.

Semantics
---------
A feature's cap is shared among its paths by `share_budgets`: ``floor(cap * n_path /
n_total)`` vertices each, at least ``LINE_MIN`` (2) for a line and ``RING_MIN`` (4) for a
ring, and never more than the path has. Paths held at that minimum are taken out of the share
first, again and again, so the budgets add up to at most ``cap`` whenever the minimums fit.

`cap_path` keeps a path's vertices by the anchored priority Douglas-Peucker
(`tools.geometry.douglas_peucker`) when it has more than its budget, rounds them to 5 decimals
and drops consecutive duplicates (`dedupe`), and bounds in metres the distance from every
original vertex to the result (`tools.geometry.error_bound`).

Edge cases
----------
The two short paths are held at their minimum, and the long ones share the rest:

>>> share_budgets(10, np.array([100, 3, 2, 50]), LINE_MIN).tolist()
[4, 2, 2, 2]

When the minimums do not fit, every path keeps its minimum and the cap is exceeded:

>>> share_budgets(5, np.array([10, 10, 10, 10]), LINE_MIN).tolist()
[2, 2, 2, 2]

Dropping duplicates never leaves a line under 2 positions or a ring under 4; a ring that
would fall under 4 is kept as it is:

>>> dedupe(np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]), ring=False).tolist()
[[0.0, 0.0], [1.0, 1.0]]
>>> dedupe(np.array([[0.0, 0.0], [0.0, 0.0]]), ring=False).tolist()
[[0.0, 0.0], [0.0, 0.0]]
>>> dedupe(np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 0.0]]), ring=True).tolist()
[[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 0.0]]
"""

from __future__ import annotations

import numpy as np

from tools.geometry.douglas_peucker import priority_dp
from tools.geometry.error_bound import rounded_bound_m
from tools.geometry.positions import rounded

LINE_MIN = 2
"""Vertices a line keeps at least: its endpoints."""

RING_MIN = 4
"""Positions a polygon ring keeps at least: a triangle, closed."""


def share_budgets(cap: int, sizes: np.ndarray, minimum: int) -> np.ndarray:
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


def cap_path(xy: np.ndarray, lon: np.ndarray, budget: int, ring: bool) -> tuple[np.ndarray, float]:
    """One path simplified to ``budget`` vertices and rounded, with its error bound in metres.

    ``xy`` is the checked path and ``lon`` its longitudes made continuous across the
    antimeridian; an empty path is returned as it is, with a bound of 0.
    """
    if not len(xy):
        return xy, 0.0
    if len(xy) <= budget:
        kept, seg_err = np.arange(len(xy)), np.zeros(len(xy) - 1)
    else:
        kept, seg_err = priority_dp(lon, xy[:, 1], budget, np.empty(0, dtype=np.int64))
    out = rounded(xy[kept])
    return dedupe(out, ring), rounded_bound_m(lon, xy[:, 1], kept, out, seg_err)


def dedupe(xy: np.ndarray, ring: bool) -> np.ndarray:
    """Drop consecutive duplicates, keeping a line at 2 positions and a ring at 4."""
    if len(xy) < 2:
        return xy
    keep = np.concatenate(([True], (xy[1:] != xy[:-1]).any(axis=1)))
    if keep.all():
        return xy
    if ring:
        return xy[keep] if keep.sum() >= RING_MIN else xy
    return xy[keep] if keep.sum() >= LINE_MIN else xy[[0, -1]]
