"""The anchored priority Douglas-Peucker as one compiled loop (numba), for `douglas_peucker`.

Semantics
---------
`priority_dp_kernel(zr, zi, er, ei, init, pops)` is the literal priority queue of
`tools.geometry.douglas_peucker.priority_dp`: starting from the segments between the ``init``
indices, it pops the segment whose farthest vertex is farthest (ties: the segment that starts
first), keeps that vertex and pushes the two halves, ``pops`` times or until no vertex is off
its segment. ``(zr, zi)`` is each vertex projected for the span it starts or lies inside and
``(er, ei)`` for the span it ends (`douglas_peucker._Spans`); distances are computed with the
same float operations as the numpy reference (the complex reciprocal as numpy divides, the
same products), except that vertices are compared by squared distance, so it keeps the same
vertices: tests compare the two on random paths (tests/geometry/test_dp_kernel.py).

The loop costs ``O(n log n)`` scalar steps where the numpy reference makes a dozen passes over
the points per tree level. numba is imported, and the loop compiled (or loaded from numba's
cache beside this module, or its user cache when that is read-only), the first time a path
needs simplifying, not on import: a process that never simplifies never pays numba's import
(about 100 MB of mostly shared pages). On a 2-vCPU machine that first simplification takes
about 0.6 s with the cache and about 4 s when it compiles. `available()` says whether numba imports;
without it the numpy reference is used.

Tolerance
---------
numpy's complex multiply and ``abs`` may use fused multiply-adds or their own ``hypot``
(depending on the CPU's SIMD), and a squared distance rounds differently from a ``hypot``, so a
distance here can differ from the reference's in its last bits. The kept vertices are the
same unless two candidates are that close to a tie (either is then a correct choice); the
reported errors agree to about 1e-15 relative, far inside the
micrometre the metre bound allows for float error (`tools.geometry.error_bound`), which is
computed from whatever the kernel kept and so stays an upper bound.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Callable
from typing import Any

import numpy as np

_TINY_DEG = 1e-12  # as in douglas_peucker: a planar distance below this counts as 0


@functools.cache
def _compiled() -> Callable[..., Any] | None:
    """The compiled `_kernel`, or None when numba cannot be imported. It is compiled (or
    loaded from numba's cache) here, on a tiny path; where no cache location is writable it is
    compiled again without caching rather than failing."""
    try:
        from numba import njit
    except ImportError:  # numba is a dependency; the numpy reference still works without it
        return None
    global _farthest
    tiny = np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 0.0]), np.array([0, 2])
    for cache in (True, False):
        _farthest = njit(cache=cache, nogil=True)(_PY_FARTHEST)
        kernel = njit(cache=cache, nogil=True)(_PY_KERNEL)
        try:
            kernel(tiny[0], tiny[1], tiny[0], tiny[1], tiny[2], 1)
        except Exception:  # e.g. numba's "cannot cache function": no writable cache directory
            if not cache:
                raise
            continue
        return kernel
    return None  # pragma: no cover - the loop returns or raises


def available() -> bool:
    """Whether the compiled kernel can be used (numba imports)."""
    return _compiled() is not None


def _farthest(zr, zi, er, ei, s, e):
    """The first vertex of ``[s, e)`` farthest from the segment ``s -> e``, and that distance."""
    ar, ai = zr[s], zi[s]
    cr, ci = er[e] - ar, ei[e] - ai
    length = math.hypot(cr, ci)
    if length > 0.0:  # 1 / chord, as numpy divides complex numbers (Smith's method)
        if abs(cr) >= abs(ci):
            rat = ci / cr
            scl = 1.0 / (cr + ci * rat)
            ir, ii = scl, (0.0 - rat) * scl
        else:
            rat = cr / ci
            scl = 1.0 / (ci + cr * rat)
            ir, ii = rat * scl, (0.0 * rat - 1.0) * scl
        limit = 1.0
    else:  # a zero-length chord: the distance is to its start
        ir, ii, limit, length = 1.0, 0.0, 0.0, 1.0
    best, far = -1.0, s
    for i in range(s, e):  # squared distances: one square root per segment, not per vertex
        wr, wi = zr[i] - ar, zi[i] - ai
        ur, ui = wr * ir - wi * ii, wr * ii + wi * ir
        t = min(max(ur, 0.0), limit)
        q = (ur - t) * (ur - t) + ui * ui
        if q > best:
            best, far = q, i
    dist = math.sqrt(best) * length
    return far, (0.0 if dist < _TINY_DEG else dist)


def _kernel(zr, zi, er, ei, init, pops):
    n = zr.size
    kept = np.zeros(n, dtype=np.bool_)
    seg_err = np.zeros(n)
    heap = [(0.0, np.int64(0), np.int64(0), np.int64(0))]
    heap.pop()
    for j in range(init.size):
        kept[init[j]] = True
    for j in range(init.size - 1):
        s, e = init[j], init[j + 1]
        far, dist = _farthest(zr, zi, er, ei, s, e)
        seg_err[s] = dist
        if dist > 0.0:
            heap.append((-dist, s, e, far))
    heapq.heapify(heap)
    for _ in range(pops):
        if not heap:
            break
        _, s, e, far = heapq.heappop(heap)
        kept[far] = True
        for a, b in ((s, far), (far, e)):
            child, dist = _farthest(zr, zi, er, ei, a, b)
            seg_err[a] = dist
            if dist > 0.0:
                heapq.heappush(heap, (-dist, a, b, child))
    return kept, seg_err


_PY_FARTHEST, _PY_KERNEL = _farthest, _kernel  # the Python sources numba compiles


def priority_dp_kernel(
    zr: np.ndarray, zi: np.ndarray, er: np.ndarray, ei: np.ndarray, init: np.ndarray, pops: int
) -> tuple[np.ndarray, np.ndarray]:
    """Kept vertex indices (sorted) and each kept segment's error, in degrees of latitude."""
    kernel = _compiled()
    if kernel is None:
        raise RuntimeError("numba is not installed; use douglas_peucker.priority_dp_reference")
    zr, zi, er, ei = (np.ascontiguousarray(a, dtype=np.float64) for a in (zr, zi, er, ei))  # one specialisation
    mask, err = kernel(zr, zi, er, ei, init.astype(np.int64), int(pops))
    kept = np.flatnonzero(mask)
    return kept, err[kept[:-1]]
