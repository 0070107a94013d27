"""The farthest vertex of many spans of a path at once, skipping blocks that cannot hold it.

Semantics
---------
`Projected(lon, lat, init)` is a path projected for the anchored Douglas-Peucker
(`tools.geometry.douglas_peucker`): each anchor span ``[init[j], init[j+1]]`` in an
equirectangular projection of its own, in degrees of latitude, longitudes scaled by the largest
``cos(latitude)`` within the span.

`Projected.farthest(s, e)` returns, for each span ``[s, e)`` (sorted, disjoint, each inside one
anchor span), the first vertex at the largest distance from the segment ``s -> e`` (the
projection parameter clamped to [0, 1]) and that distance; ``s`` itself, at 0, when every vertex
lies on the segment. A distance below ``1e-12`` degrees (0.1 micrometre) counts as 0. Each
distance is computed with the float operations of `douglas_peucker.priority_dp_reference` (the
chord turned into [0, 1] on the real axis by one complex multiply, then numpy's complex absolute
value), so both find the same vertex and the same distance, to the bit; only the work differs:

A span of at least ``MIN_BLOCKS`` whole blocks of ``BLOCK`` vertices measures each block's
  bounding box first (centre ``c``, half-diagonal ``r``): distance to a segment moves by at most
  the distance moved, so a block's vertices lie within ``d(c) - r`` and ``d(c) + r`` of the
  segment, and only the blocks whose upper bound reaches the span's best lower bound are
  measured vertex by vertex (plus the partial blocks at the span's ends). The bounds are widened
  by far more than the rounding of a distance, so a block holding the farthest vertex, or one
  tied with it, is always measured. On a road-like line this skips most vertices of the long
  spans of the first levels; where it skips too little (a zigzag, whose vertices all tie) the
  path stops using blocks.

>>> path = Projected(np.arange(200.0) / 100, np.where(np.arange(200) == 150, 0.5, 0.0), np.array([0, 199]))
>>> far, dist = path.farthest(np.array([0]), np.array([199]), path.anchor_end)
>>> far.tolist(), dist.round(6).tolist()
([150], [0.5])
"""

from __future__ import annotations

import numpy as np

from tools.geometry.sphere import max_cos

BLOCK = 16
"""Vertices a block summarises."""

MIN_BLOCKS = 16
"""Whole blocks a span needs before its blocks are bounded rather than every vertex measured."""

_TINY_DEG = 1e-12  # as in douglas_peucker: a planar distance below this counts as 0
_SLACK = 1e-9  # relative widening of a block's bounds (a distance's rounding is about 1e-16)
_WORTH = 0.5  # blocks are dropped once a level measures more than this share of its vertices


class Projected:
    """A path projected per anchor span; block summaries are built on first use."""

    def __init__(self, lon: np.ndarray, lat: np.ndarray, init: np.ndarray) -> None:
        n = lon.size
        s, e = init[:-1], init[1:]
        low = np.minimum(np.minimum.reduceat(lat, s), lat[e])
        high = np.maximum(np.maximum.reduceat(lat, s), lat[e])
        kx = max_cos(low, high)
        self.init = init
        xy = np.empty((n, 2))
        np.multiply(lon, np.repeat(kx, np.diff(s, append=n)), out=xy[:, 0])
        xy[:, 1] = lat
        self.z = xy.view(np.complex128).ravel()
        """Each vertex projected for the anchor span it starts or lies inside."""
        self.anchor_end = lon[e] * kx + 1j * lat[e]
        """``init[1:]`` projected for the anchor span each ends."""
        self._blocks: tuple[np.ndarray, ...] | None = None
        self._use_blocks = True
        self._w = np.empty(n, dtype=np.complex128)  # scratch: on fresh multi-megabyte arrays,
        self._q = np.empty(n)  # page faults cost more than the arithmetic
        self._hit = np.empty(n, dtype=bool)

    def farthest(self, s: np.ndarray, e: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each span ``[s, e)``, its first vertex farthest from ``s -> e``, and that distance
        in degrees of latitude (see the module docstring); ``end`` is each ``e`` projected for the
        span it ends (``z[e]``, or the ``anchor_end`` of an anchor)."""
        a = self.z[s]
        chord = end - a
        length = np.abs(chord)
        lo, count, per_span = s, e - s, None
        stop = count.cumsum()
        m = int(stop[-1])
        if self._use_blocks and m >= s.size * MIN_BLOCKS * BLOCK // 2:  # long spans, on average
            ranges = self._ranges(s, e, a, chord, length)
            if ranges is not None:
                lo, hi, owner = ranges
                count = hi - lo
                per_span = np.bincount(owner, weights=count, minlength=s.size).astype(np.int64)
                whole, stop = m, count.cumsum()
                m = int(stop[-1])
                self._use_blocks = m <= _WORTH * whole
        if per_span is None:
            per_span = count
        w, q, hit = self._w[:m], self._q[:m], self._hit[:m]
        tiled = m == e[-1] - s[0]
        if tiled:
            np.subtract(self.z[s[0] : e[-1]], a.repeat(per_span), out=w)
        else:
            idx = np.arange(m) + (lo - (stop - count)).repeat(count)
            np.subtract(self.z[idx], a.repeat(per_span), out=w)
        if length.all():
            w *= (1.0 / chord).repeat(per_span)  # the chord becomes [0, 1] on the real axis
            t = np.minimum(np.maximum(w.real, 0.0, out=q), 1.0, out=q)
        else:  # a zero-length chord: the distance is to its start
            w *= (1.0 / np.where(length > 0, chord, 1.0)).repeat(per_span)
            t = np.minimum(np.maximum(w.real, 0.0, out=q), (length > 0).repeat(per_span), out=q)
            length = np.where(length > 0, length, 1.0)
        w.real -= t
        np.abs(w, out=q)
        stop = per_span.cumsum() if per_span is not count else stop
        start = stop - per_span
        top = np.maximum.reduceat(q, start)
        hits = np.equal(q, top.repeat(per_span), out=hit).nonzero()[0]
        if hits.size > s.size:  # ties: keep the first hit of each span
            hits = hits[hits.searchsorted(start)]
        dist = top * length
        dist[dist < _TINY_DEG] = 0.0  # rounding noise of the division, e.g. a copy of an endpoint
        return (s[0] + hits if tiled else idx[hits]), dist

    def blocks(self) -> tuple[np.ndarray, ...]:
        """Block starts and ends, each vertex's block, and each block's bounding-box centre and
        half-diagonal. Blocks tile each anchor span from its start; the path's last vertex is in
        a block of its own, never whole (it starts no span)."""
        if self._blocks is None:
            n = self.z.size
            s, e = self.init[:-1], self.init[1:]
            count = (e - s + BLOCK - 1) // BLOCK
            first = np.cumsum(count) - count
            start = np.arange(int(count.sum())) * BLOCK + np.repeat(s - first * BLOCK, count)
            end = np.minimum(start + BLOCK, np.repeat(e, count))
            owner = np.repeat(np.arange(start.size + 1), np.append(end - start, 1))
            x, y = self.z.real, self.z.imag
            x0, x1 = np.minimum.reduceat(x, start), np.maximum.reduceat(x, start)
            y0, y1 = np.minimum.reduceat(y, start), np.maximum.reduceat(y, start)
            centre = (x0 + x1) / 2 + 1j * ((y0 + y1) / 2)
            radius = np.hypot(x1 - x0, y1 - y0) / 2
            self._blocks = (np.append(start, n - 1), np.append(end, n), owner, centre, radius)
        return self._blocks

    def _ranges(
        self, s: np.ndarray, e: np.ndarray, a: np.ndarray, chord: np.ndarray, length: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The vertex ranges worth measuring, in order, and the span of each: spans of fewer
        than ``MIN_BLOCKS`` whole blocks whole; of the others, the partial block at each end and
        the whole blocks whose upper bound reaches the span's best lower bound. None when no
        span has that many blocks."""
        bstart, bend, owner, centre, radius = self.blocks()
        k1, k2 = owner[s] + 1, owner[e]  # the whole blocks of span j: k1[j] .. k2[j] - 1
        whole = k2 - k1
        big = np.flatnonzero(whole >= MIN_BLOCKS)
        if not big.size:
            return None
        nb = whole[big]
        first = np.cumsum(nb) - nb
        inv = 1.0 / np.where(length > 0, chord, 1.0)
        block = np.arange(int(nb.sum())) + np.repeat(k1[big] - first, nb)
        span = np.repeat(big, nb)
        wc = (centre[block] - a[span]) * inv[span]
        reach = np.abs(wc)
        wc.real -= np.clip(wc.real, 0.0, 1.0 if length.all() else (length[span] > 0))
        qc = np.abs(wc)
        rn = radius[block] * np.repeat(np.abs(inv[big]), nb)
        slack = _SLACK * (reach + rn + 1.0)
        floor = np.maximum.reduceat(qc - rn - slack, first)
        keep = qc + rn + slack >= np.repeat(floor, nb)
        small = np.flatnonzero(whole < MIN_BLOCKS)
        starts = np.concatenate((s[small], s[big], bstart[block[keep]], bend[k2[big] - 1]))
        ends = np.concatenate((e[small], bstart[k1[big]], bend[block[keep]], e[big]))
        spans = np.concatenate((small, big, span[keep], big))
        order = np.argsort(starts, kind="stable")
        starts, ends, spans = starts[order], ends[order], spans[order]
        nonempty = ends > starts
        return starts[nonempty], ends[nonempty], spans[nonempty]
