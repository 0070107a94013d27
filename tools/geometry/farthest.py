"""The farthest vertex of many spans of a path at once, skipping blocks that cannot hold it.

Semantics
---------
`Projected(lon, lat, init)` is a path projected for the anchored Douglas-Peucker
(`tools.geometry.douglas_peucker`): each anchor span ``[init[j], init[j+1]]`` in an
equirectangular projection of its own, in degrees of latitude, longitudes scaled by the largest
``cos(latitude)`` within the span.

`Projected.farthest(s, e, end)` returns, for each span ``[s, e)`` (sorted, disjoint, each inside
one anchor span; ``end`` is ``e`` projected for the span it ends), the first vertex at the
largest distance from the segment ``s -> e`` (the projection parameter clamped to [0, 1]) and
that distance; ``s`` itself, at 0, when every vertex lies on the segment. A distance below
``1e-12`` degrees (0.1 micrometre) counts as 0. Each distance is computed with the float
operations of `douglas_peucker.priority_dp_reference` (the chord turned into [0, 1] on the real
axis by one complex multiply, then numpy's complex absolute value), so both find the same vertex
and the same distance, to the bit (but see the tie below). Only the work differs.

Blocks
------
A span of at least ``MIN_BLOCKS`` whole blocks of ``BLOCK`` vertices is measured in parts. Its
front (the partial block at its start and the first whole block) and its back (the partial block
at its end) are measured first. Each block between is bounded by its bounding box: distance to a
segment is convex, so no vertex of the box is farther than its farthest corner; and it moves by at
most the distance moved, so some vertex is at least as far as the centre less the half-diagonal.
A block between is measured vertex by vertex only when its bound is above the front's largest
distance (on a tie the front's vertex comes first) and reaches the span's best lower bound (the
front's, the back's, the blocks'). The second test is widened by far more than the rounding of a
distance, so a block holding a farther vertex is always measured; the first is exact, so a block
whose corners tie with the front is skipped: on a zigzag, whose vertices all tie, only the front
and the back are measured. (Only a vertex whose distance exceeds the box's farthest corner by
rounding alone, a tie in all but the last bits, could then go unseen: either is the farthest.)
On a road-like line the first levels measure a small part of their vertices; once a level
measures more than half, the path stops using blocks.

Layout
------
Spans that cover most of their range are measured with the short gaps between them, as spans of
their own whose results are dropped, rather than gathered; the arrays of a search are kept for
the next one (`_Scratch`), since touching fresh pages costs more here than the arithmetic.

>>> path = Projected(np.arange(200.0) / 100, np.where(np.arange(200) == 150, 0.5, 0.0), np.array([0, 199]))
>>> far, dist = path.farthest(np.array([0]), np.array([199]), path.anchor_end)
>>> far.tolist(), dist.round(6).tolist()
([150], [0.5])
"""

from __future__ import annotations

import numpy as np

from tools.geometry.sphere import max_cos

BLOCK = 32
"""Vertices a block summarises."""

MIN_BLOCKS = 8
"""Whole blocks a span needs before its blocks are bounded rather than every vertex measured."""

_TINY_DEG = 1e-12  # as in douglas_peucker: a planar distance below this counts as 0
_SLACK = 1e-9  # relative widening of a block's bounds (a distance's rounding is about 1e-16)
_WORTH = 0.5  # blocks are dropped once a level measures more than this share of its vertices
_LONG = 4096  # measured vertices from which one clip pass pays for np.clip's own cost
_DENSE = 0.75  # spans covering this share of their range are measured with the gaps between them


class Projected:
    """A path projected per anchor span; block summaries are built on first use."""

    def __init__(self, lon: np.ndarray, lat: np.ndarray, init: np.ndarray) -> None:
        n = lon.size
        s, e = init[:-1], init[1:]
        low = np.minimum(np.minimum.reduceat(lat, s), lat[e])
        high = np.maximum(np.maximum.reduceat(lat, s), lat[e])
        kx = max_cos(low, high)
        self.init = init
        self._scratch = _Scratch.take(n)
        self.z = self._scratch.z[:n]
        """Each vertex projected for the anchor span it starts or lies inside."""
        np.multiply(lon, np.repeat(kx, np.diff(s, append=n)), out=self.z.real)
        self.z.imag = lat
        self.anchor_end = lon[e] * kx + 1j * lat[e]
        """``init[1:]`` projected for the anchor span each ends."""
        self._blocks: tuple[np.ndarray, ...] | None = None
        self._use_blocks = True
        self._w, self._q, self._hit = self._scratch.w, self._scratch.q, self._scratch.hit

    def close(self) -> None:
        """Hand the scratch arrays back for the next path (nothing here may be used after)."""
        self._scratch.give_back()

    def farthest(self, s: np.ndarray, e: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each span ``[s, e)``, its first vertex farthest from ``s -> e``, and that distance
        in degrees of latitude (see the module docstring); ``end`` is each ``e`` projected for the
        span it ends (``z[e]``, or the ``anchor_end`` of an anchor)."""
        a = self.z[s]
        chord = end - a
        length = np.abs(chord)
        flat = bool(length.all())
        if not flat:  # a zero-length chord: the distance is to its start
            chord = np.where(length > 0, chord, 1.0)
        inv = 1.0 / chord  # the chord becomes [0, 1] on the real axis
        count = e - s
        m, cover = int(count.sum()), int(e[-1] - s[0])
        idx = None
        long_spans = self._use_blocks and m >= s.size * MIN_BLOCKS * BLOCK // 2  # on average
        if long_spans and (ranges := self._ranges(s, e, a, inv, length > 0)):
            lo, hi, owner = ranges  # the vertices worth measuring, by range
            count = hi - lo
            measured = int(count.sum())
            self._use_blocks = measured <= _WORTH * m
            idx = np.arange(measured) + (lo - (count.cumsum() - count)).repeat(count)
            count = np.bincount(owner, weights=count, minlength=s.size).astype(np.int64)
            m = measured
        elif m < cover and m < _DENSE * cover:  # gather the spans' vertices
            idx = np.arange(m) + (s - (count.cumsum() - count)).repeat(count)
        elif m < cover:  # measure the gaps between the spans too, as spans of their own, and drop them
            gap = s[1:] - e[:-1]
            count, a, inv = _with(count, gap), _with(a, a[1:]), _with(inv, np.zeros(gap.size))
            length = _with(length, np.ones(gap.size))
            m = cover
        w, q, hit = self._w[:m], self._q[:m], self._hit[:m]
        z = self.z[s[0] : s[0] + m] if idx is None else self.z[idx]
        np.subtract(z.view(np.float64), a.repeat(count).view(np.float64), out=w.view(np.float64))  # as pairs: faster
        w *= inv.repeat(count)
        if flat and m > _LONG:
            t = np.clip(w.real, 0.0, 1.0, out=q)
        elif flat:
            t = np.minimum(np.maximum(w.real, 0.0, out=q), 1.0, out=q)
        else:
            t = np.minimum(np.maximum(w.real, 0.0, out=q), (length > 0).repeat(count), out=q)
        w.real -= t
        np.abs(w, out=q)
        start = count.cumsum() - count
        top = np.maximum.reduceat(q, start)
        hits = np.equal(q, top.repeat(count), out=hit).nonzero()[0]
        if top.size > s.size:  # drop the gaps
            top, start, length = top[0::2], start[0::2], length[0::2]
        if hits.size > s.size:  # ties, or the gaps: the first hit in each span
            hits = hits[hits.searchsorted(start)]
        dist = top * (length if flat else np.where(length > 0, length, 1.0))
        dist[dist < _TINY_DEG] = 0.0  # rounding noise of the division, e.g. a copy of an endpoint
        return (s[0] + hits if idx is None else idx[hits]), dist

    def blocks(self) -> tuple[np.ndarray, ...]:
        """Block starts and ends, each vertex's block, each block's bounding-box corners and
        centre (5, blocks), and its half-diagonal. Blocks tile each anchor span from its start;
        the path's last vertex is in a block of its own, never whole (it starts no span)."""
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
            corners = np.stack((x0 + 1j * y0, x0 + 1j * y1, x1 + 1j * y0, x1 + 1j * y1, centre))
            radius = np.hypot(x1 - x0, y1 - y0) / 2
            self._blocks = (np.append(start, n - 1), np.append(end, n), owner, corners, radius)
        return self._blocks

    def _ranges(
        self, s: np.ndarray, e: np.ndarray, a: np.ndarray, inv: np.ndarray, long: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The vertex ranges worth measuring, in order, and the span of each: spans of fewer
        than ``MIN_BLOCKS`` whole blocks whole; of the others, the front (the partial block at
        the start and the first whole block), the back (the partial block at the end) and the
        blocks between whose bound can beat the front and reach the back. None when no span has
        that many blocks."""
        bstart, bend, owner, corners, radius = self.blocks()
        k1, k2 = owner[s] + 1, owner[e]  # the whole blocks of span j: k1[j] .. k2[j] - 1
        whole = k2 - k1
        big = np.flatnonzero(whole >= MIN_BLOCKS)
        if not big.size:
            return None
        front = _largest(self, np.concatenate((s[big], bend[k2[big] - 1])),
                         np.concatenate((bend[k1[big]], e[big])), a[big], inv[big], long[big])  # fmt: skip
        front, back = front[: big.size], front[big.size :]
        nb = whole[big] - 1  # the blocks between
        first = np.cumsum(nb) - nb
        block = np.arange(int(nb.sum())) + np.repeat(k1[big] + 1 - first, nb)
        span = np.repeat(np.arange(big.size), nb)
        w = corners.take(block, axis=1) - a[big][span]
        w *= inv[big][span]
        pairs = w.view(np.float64).reshape(5, -1, 2)
        parts = np.abs(pairs)  # (numpy's complex absolute value is slow on most values)
        reach = (parts[:, :, 0] + parts[:, :, 1]).max(axis=0) + 1.0  # more than any distance here
        w.real -= np.minimum(np.maximum(w.real, 0.0), long[big][span])  # a zero-length chord: to its start
        np.square(pairs, out=parts)
        squares = parts[:, :, 0] + parts[:, :, 1]
        # Distance is convex: no vertex of a box is farther than its farthest corner; and it
        # moves by at most the distance moved: every vertex is within the half-diagonal of the
        # centre's distance, so some vertex of the block is at least that far.
        bound = np.sqrt(squares[:4].max(axis=0))
        floor = np.sqrt(squares[4]) - radius[block] * np.abs(inv[big])[span] - _SLACK * reach
        floor = np.maximum(np.maximum(front, back), np.maximum.reduceat(floor, first))[span]
        # A block between is measured when its bound is above the front's largest distance (on a
        # tie the front's vertex comes first) and, widened for rounding, reaches the best lower
        # bound of its span.
        keep = (bound > front[span]) & (bound + _SLACK * reach >= floor)
        small = np.flatnonzero(whole < MIN_BLOCKS)
        starts = np.concatenate((s[small], s[big], bstart[block[keep]], bend[k2[big] - 1]))
        ends = np.concatenate((e[small], bend[k1[big]], bend[block[keep]], e[big]))
        spans = np.concatenate((small, big, big[span[keep]], big))
        order = np.argsort(starts, kind="stable")
        starts, ends, spans = starts[order], ends[order], spans[order]
        nonempty = ends > starts
        return starts[nonempty], ends[nonempty], spans[nonempty]


def _with(spans: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """``spans[0], gaps[0], spans[1], ..., spans[-1]``: the spans with the gaps between them."""
    out = np.empty(spans.size + gaps.size, dtype=np.result_type(spans, gaps))
    out[0::2], out[1::2] = spans, gaps
    return out


class _Scratch:
    """Arrays for one path's search, kept for the next path when small enough.

    On this kind of machine a page touched for the first time costs about a microsecond, more
    than the arithmetic done on it: the arrays take 41 bytes a vertex, 3.7 MB for 90,000. One set
    for up to ``KEEP`` vertices (at most 5.4 MB) is kept between searches and lent to one search
    at a time; a search that finds it lent, or needs more, gets arrays of its own.
    """

    KEEP = 1 << 17
    _spare: list[_Scratch] = []

    def __init__(self, size: int) -> None:
        self.size = size
        self.z = np.empty(size, dtype=np.complex128)
        self.w = np.empty(size, dtype=np.complex128)
        self.q = np.empty(size)
        self.hit = np.empty(size, dtype=bool)

    @classmethod
    def take(cls, size: int) -> _Scratch:
        try:
            spare = cls._spare.pop()  # atomic: two threads never get the same arrays
        except IndexError:
            spare = None
        if spare is not None and spare.size >= size:
            return spare
        return cls(max(size, min(cls.KEEP, 2 * size)) if size <= cls.KEEP else size)

    def give_back(self) -> None:
        if self.size <= self.KEEP and not self._spare:
            self._spare.append(self)


def _largest(
    path: Projected, lo: np.ndarray, hi: np.ndarray, a: np.ndarray, inv: np.ndarray, long: np.ndarray
) -> np.ndarray:
    """The largest distance (in chord lengths) from the vertices ``[lo, hi)`` of each span to
    its segment; ``a``, ``inv`` and ``long`` are the span's, repeated for each of its ranges."""
    count = hi - lo
    repeat = np.tile(np.arange(a.size), lo.size // a.size)
    w = path.z[np.arange(int(count.sum())) + (lo - (count.cumsum() - count)).repeat(count)]
    w.view(np.float64)[:] -= a[repeat].repeat(count).view(np.float64)
    w *= inv[repeat].repeat(count)
    w.real -= np.minimum(np.maximum(w.real, 0.0), long[repeat].repeat(count))
    largest = np.zeros(lo.size)  # an empty range (a span ending on a block's end has no back)
    some = count > 0
    largest[some] = np.maximum.reduceat(np.abs(w), (count.cumsum() - count)[some])
    return largest
