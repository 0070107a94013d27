"""Anchored, priority-driven Douglas-Peucker: which vertices one path keeps for a budget.

Semantics
---------
``priority_dp(lon, lat, budget, required)`` works on one path of more than ``budget``
vertices, longitudes already made continuous (`tools.geometry.sphere.unwrap_longitudes`).
It keeps the endpoints, the ``required`` indices and ``min(64, budget // 8) - 1`` anchors at
``round(k (n - 1) / anchors)`` (halves rounded up). Then, again and again, the vertex farthest
from the segment between its kept neighbours is kept, until ``budget`` vertices are kept or
none is off its segment. The distance to a segment is to the projection onto it clamped to
its ends. On equal distances the segment that starts first goes first; within a segment the
first of the farthest vertices is taken.

Distances are planar, in degrees of latitude, in an equirectangular projection of its own for
each anchor span: longitudes are scaled by the largest ``cos(latitude)`` within the span, so a
planar distance is never shorter than the distance on the sphere. A distance below
``1e-12`` degrees (0.1 micrometre) is rounding noise and counts as 0.

Two implementations keep the same vertices and report the same errors, to the bit (tests
compare them, ties included). `priority_dp` runs the compiled kernel (`tools.geometry.compiled`)
when this installation has it: the priority queue itself, each vertex's distance computed with
the float operations numpy uses below. `priority_dp_reference`, in numpy, finds the queue's
result a tree level at a time; `priority_dp` runs it where the kernel was not built.

Edge cases
----------
The vertex 1 degree off the line is kept first; the error left on each kept segment is
reported (the first segment replaces no vertex):

>>> kept, seg_err = priority_dp(np.arange(5.0), np.array([0, 1, 0, 0.5, 0]), 3, np.empty(0, dtype=np.int64))
>>> kept.tolist(), seg_err.round(4).tolist()
([0, 1, 4], [0.0, 0.6325])

Of two vertices equally far from a segment, the first is kept:

>>> priority_dp(np.arange(5.0), np.array([0, 1, 0, -1, 0]), 3, np.empty(0, dtype=np.int64))[0].tolist()
[0, 1, 4]

A required vertex counts in the budget; vertices on their segment are never kept:

>>> priority_dp(np.arange(5.0), np.array([0, 1, 0, 0.5, 0]), 3, np.array([2]))[0].tolist()
[0, 2, 4]
>>> priority_dp(np.arange(5.0), np.zeros(5), 3, np.empty(0, dtype=np.int64))[0].tolist()
[0, 4]
"""

from __future__ import annotations

import heapq

import numpy as np

from tools.geometry.compiled import kernel
from tools.geometry.sphere import max_cos

_MAX_ANCHORS = 64
_TINY_DEG = 1e-12  # a planar distance below this (0.1 micrometre) counts as 0
_SMALLEST = np.nextafter(0.0, 1.0)  # the smallest positive bottleneck


def priority_dp(lon: np.ndarray, lat: np.ndarray, budget: int, required: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Anchored priority Douglas-Peucker on one path (``budget < len(lon)``): the parameters and
    result of `priority_dp_reference`, by the compiled kernel's priority queue when it is built."""
    if kernel is None:
        return priority_dp_reference(lon, lat, budget, required)
    init, pops = _start(lon.size, budget, required)
    z, anchor_end = _projected(lon, lat, init)
    kept = np.empty(init.size + max(pops, 0), dtype=np.int64)
    seg_err = np.empty(kept.size - 1)
    count = kernel.search(z, anchor_end, init, pops, kept, seg_err)
    return kept[:count], seg_err[: count - 1]


def _start(n: int, budget: int, required: np.ndarray) -> tuple[np.ndarray, int]:
    """The indices kept from the start (endpoints, anchors, ``required``) and the pops left."""
    anchors = min(_MAX_ANCHORS, budget // 8)
    k = np.arange(1, anchors, dtype=np.int64)
    seeds = (2 * k * (n - 1) + anchors) // (2 * anchors)  # round(k (n-1) / anchors), halves up
    init = np.unique(np.concatenate(([0, n - 1], seeds, required)))
    return init, budget - init.size


def _projected(lon: np.ndarray, lat: np.ndarray, init: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The path projected per anchor span ``[init[j], init[j+1]]``, in degrees of latitude, with
    longitudes scaled by the largest ``cos(latitude)`` within the span's latitudes: each vertex
    for the span it starts or lies inside (``z``), and each span's end for that span."""
    s, e = init[:-1], init[1:]
    low = np.minimum(np.minimum.reduceat(lat, s), lat[e])
    high = np.maximum(np.maximum.reduceat(lat, s), lat[e])
    kx = max_cos(low, high)
    z = np.empty(lon.size, dtype=np.complex128)
    z.real = lon * np.repeat(kx, np.diff(s, append=lon.size))
    z.imag = lat
    return z, lon[e] * kx + 1j * lat[e]


def priority_dp_reference(
    lon: np.ndarray, lat: np.ndarray, budget: int, required: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Anchored priority Douglas-Peucker on one path (``budget < len(lon)``), in numpy.

    A pop of the priority queue splits a segment at its farthest vertex, so the pops form a
    forest of split nodes, one tree per anchor span. Best-first search pops nodes in decreasing
    order of their bottleneck ``b`` (the smallest error on the path from the root), hence the
    first ``pops`` pops are the nodes with the largest ``b``; among nodes of the last, tied
    ``b`` the queue's own order decides (`_pop_order`).
    The forest is grown breadth first, a level at a time in numpy, and a node whose ``b`` is
    below the ``pops``-th largest ``b`` found so far is not split: none of its descendants can
    be popped.

    Parameters
    ----------
    lon, lat : (n,) float arrays
        The path in degrees, longitudes continuous across the antimeridian.
    budget : int
        Vertices to keep, fewer than ``n``.
    required : int array
        Indices kept whatever their error; they count in the budget.

    Returns
    -------
    kept : numpy.ndarray
        Sorted indices of the kept vertices.
    seg_err : numpy.ndarray
        For each kept segment, the largest planar distance (degrees of latitude) from a vertex
        it replaces; 0 where it replaces none.
    """
    init, pops = _start(lon.size, budget, required)
    work = _Spans(lon, lat, init)
    s, e = init[:-1], init[1:]
    parent, ceiling = np.full(s.size, -1), np.full(s.size, np.inf)
    levels: list[tuple[np.ndarray, ...]] = []
    best = np.empty(0)  # the (at most) `pops` largest positive bottlenecks seen so far
    total = 0
    while True:
        far, dist = work.farthest(s, e)
        b = np.minimum(ceiling, dist)
        levels.append((s, far, dist, b, parent))
        if pops <= 0:
            break
        best = np.concatenate((best, b[b > 0]))
        if best.size > pops:
            best = np.partition(best, best.size - pops)[best.size - pops :]
        split = np.flatnonzero(b >= (best.min() if best.size == pops else _SMALLEST))
        if not split.size:
            break
        s, e = np.sort(np.concatenate((s[split], far[split]))), np.sort(np.concatenate((far[split], e[split])))
        parent, ceiling = np.repeat(split + total, 2), np.repeat(b[split], 2)
        total += b.size
    return _selected(init, pops, levels)


def _selected(init: np.ndarray, pops: int, levels: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """The kept vertices and each kept segment's error, from the tree grown a level at a time:
    the first ``pops`` pops are the nodes with the largest bottleneck (ties: `_pop_order`)."""
    node_s, node_far, node_dist, node_b, node_parent = (np.concatenate(c) for c in zip(*levels, strict=True))
    chosen = np.zeros(node_b.size, dtype=bool)
    candidates = np.flatnonzero(node_b > 0)
    if pops <= 0:
        candidates = candidates[:0]
    elif candidates.size > pops:
        tie = np.partition(node_b[candidates], candidates.size - pops)[candidates.size - pops]
        above = candidates[node_b[candidates] > tie]
        group = candidates[node_b[candidates] == tie]
        candidates = np.concatenate((above, _pop_order(group, pops - above.size, node_parent, node_dist, node_s)))
    chosen[candidates] = True
    kept = np.union1d(init, node_far[chosen])
    frontier = ~chosen & ((node_parent < 0) | chosen[node_parent])
    seg_err = np.zeros(kept.size - 1)
    seg_err[np.searchsorted(kept, node_s[frontier])] = node_dist[frontier]
    return kept, seg_err


def _pop_order(group: np.ndarray, count: int, parent: np.ndarray, dist: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The first ``count`` pops among nodes of equal bottleneck: best-first by distance (ties:
    the segment that starts first), a node becoming available once its parent is popped."""
    members = set(group.tolist())
    children: dict[int, list[int]] = {}
    heap = []
    for node in group.tolist():
        up = int(parent[node])
        if up in members:
            children.setdefault(up, []).append(node)
        else:
            heap.append((-dist[node], start[node], node))
    heapq.heapify(heap)
    popped: list[int] = []
    while len(popped) < count:
        node = heapq.heappop(heap)[2]
        popped.append(node)
        for child in children.get(node, ()):
            heapq.heappush(heap, (-dist[child], start[child], child))
    return np.array(popped, dtype=np.int64)


class _Spans:
    """A path projected for Douglas-Peucker, with scratch buffers for `farthest`.

    Each anchor span ``[init[j], init[j+1]]`` gets its own equirectangular projection, in
    degrees of latitude, with longitudes scaled by the largest ``cos(latitude)`` within the
    span's latitude range: a planar distance is then never shorter than the distance on the
    sphere. ``z[i]`` is vertex ``i`` projected for the span it starts or lies inside, ``z_end[i]``
    for the span it ends or lies inside. Large temporaries are avoided: on fresh
    multi-megabyte arrays, page faults cost more than the arithmetic.
    """

    def __init__(self, lon: np.ndarray, lat: np.ndarray, init: np.ndarray) -> None:
        self.z, anchor_end = _projected(lon, lat, init)
        self.z_end = self.z.copy()
        self.z_end[init[1:]] = anchor_end
        self.w = np.empty(lon.size, dtype=np.complex128)
        self.q = np.empty(lon.size)
        self.hit = np.empty(lon.size, dtype=bool)

    def farthest(self, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each span ``[s, e)`` (sorted, disjoint), its vertex farthest from ``s -> e``.

        Returns
        -------
        far : numpy.ndarray
            The first vertex at the largest distance from the segment (projection parameter
            clamped to [0, 1]); ``s`` itself when every vertex lies on the segment.
        dist : numpy.ndarray
            That distance, in degrees of latitude.
        """
        count = e - s
        stop = count.cumsum()
        start = stop - count
        m = int(stop[-1])
        w, q, hit = self.w[:m], self.q[:m], self.hit[:m]
        a = self.z[s]
        chord = self.z_end[e] - a
        length = np.abs(chord)
        if m == e[-1] - s[0]:  # the spans tile one range
            np.subtract(self.z[s[0] : e[-1]], np.repeat(a, count), out=w)
        else:
            idx = np.arange(m) + np.repeat(s - start, count)
            np.subtract(self.z[idx], np.repeat(a, count), out=w)
        if length.all():
            w *= np.repeat(1.0 / chord, count)  # the chord becomes [0, 1] on the real axis
            t = np.minimum(np.maximum(w.real, 0.0, out=q), 1.0, out=q)
        else:  # a zero-length chord: the distance is to its start
            w *= np.repeat(1.0 / np.where(length > 0, chord, 1.0), count)
            t = np.minimum(np.maximum(w.real, 0.0, out=q), np.repeat(length > 0, count), out=q)
            length = np.where(length > 0, length, 1.0)
        w -= t
        np.abs(w, out=q)
        top = np.maximum.reduceat(q, start)
        hits = np.flatnonzero(np.equal(q, np.repeat(top, count), out=hit))
        if hits.size > s.size:  # ties: keep the first hit of each span
            owner = np.searchsorted(stop, hits, side="right")
            hits = hits[np.concatenate(([True], owner[1:] != owner[:-1]))]
        dist = top * length
        dist[dist < _TINY_DEG] = 0.0  # rounding noise of the division, e.g. a copy of an endpoint
        return (s[0] + hits if m == e[-1] - s[0] else idx[hits]), dist
