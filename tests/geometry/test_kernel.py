"""The compiled kernel (tools/geometry/_kernel.c) against the numpy code it stands in for.

The kernel computes each distance with the float operations numpy's loops use, fused
multiply-adds spelled out. That holds where numpy's complex multiply and absolute value fuse
them too (x86-64 with AVX2 or AVX-512, arm64): the first tests pin it, so that on a machine
where it fails the cause is named here rather than as a tie broken differently elsewhere.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tools.geometry import douglas_peucker, error_bound, positions
from tools.geometry.compiled import kernel
from tools.geometry.douglas_peucker import _projected, _start, priority_dp, priority_dp_reference
from tools.geometry.positions import check_positions
from tools.geometry.simplify import cap_geometry

pytestmark = pytest.mark.skipif(kernel is None, reason="the compiled kernel is not built (no C compiler)")

DATA = Path(__file__).resolve().parent.parent / "data"


def fma(x: float, y: float, z: float) -> float:
    """x * y + z rounded once."""
    return float(Fraction(x) * Fraction(y) + Fraction(z))


def values(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.integers(-8, 3, n)
    return rng.normal(size=n) * scale + 1j * rng.normal(size=n) * scale


def test_numpy_multiplies_complex_numbers_with_a_fused_real_part():
    a, b = values(2000, 1), values(2000, 2)
    product = a * b
    expected = [
        complex(fma(x.real, y.real, -(x.imag * y.imag)), fma(x.real, y.imag, x.imag * y.real))
        for x, y in zip(a.tolist(), b.tolist(), strict=True)
    ]
    assert product.tolist() == expected


def test_numpy_measures_complex_numbers_as_larger_times_a_fused_root():
    z = values(2000, 3)
    x, y = np.abs(z.real), np.abs(z.imag)
    larger, smaller = np.maximum(x, y), np.minimum(x, y)
    ratio = smaller / larger
    expected = [float(np.sqrt(fma(r, r, 1.0))) * big for r, big in zip(ratio.tolist(), larger.tolist(), strict=True)]
    assert np.abs(z).tolist() == expected


def test_numpy_inverts_a_chord_by_smiths_division():
    c = values(2000, 4)
    re, im = c.real, c.imag
    wide = np.abs(re) >= np.abs(im)
    rat = np.where(wide, im / re, re / im)
    scale = 1.0 / np.where(wide, re + im * rat, im + re * rat)
    expected = np.where(wide, (1.0 + 0.0 * rat) * scale, (1.0 * rat + 0.0) * scale) + 1j * np.where(
        wide, (0.0 - 1.0 * rat) * scale, (0.0 * rat - 1.0) * scale
    )
    assert (1.0 / c).tobytes() == expected.tobytes()


def lines() -> dict[str, np.ndarray]:
    """A recorded TomTom route's line and seeded walks, rounded and not."""
    route = json.loads((DATA / "route.json").read_text())
    points = [p for leg in route["routes"][0]["legs"] for p in leg["points"]]
    rng = np.random.default_rng(11)
    walk = np.cumsum(rng.normal(0.0, 1e-3, (20_000, 2)), axis=0) + np.array([5.0, 50.0])
    return {
        "route": np.array([[p["longitude"], p["latitude"]] for p in points]),
        "walk": walk,
        "rounded walk": np.round(walk, 4),
    }


@pytest.mark.parametrize("budget", [2, 9, 100, 1000])
def test_the_kernel_keeps_what_numpy_keeps(budget):
    none = np.empty(0, dtype=np.int64)
    for name, xy in lines().items():
        if len(xy) <= budget:
            continue
        kept, seg_err = priority_dp(xy[:, 0], xy[:, 1], budget, none)
        ref_kept, ref_err = priority_dp_reference(xy[:, 0], xy[:, 1], budget, none)
        assert kept.tolist() == ref_kept.tolist(), name
        assert seg_err.tobytes() == ref_err.tobytes(), name


def test_without_the_kernel_the_numpy_search_and_reading_give_the_same_feature(monkeypatch):
    rng = np.random.default_rng(5)
    walk = np.cumsum(rng.normal(0.0, 1e-3, (5000, 2)), axis=0) + np.array([4.9, 52.3])
    line = {"type": "LineString", "coordinates": walk.tolist()}
    compiled = cap_geometry(line, cap=300)
    monkeypatch.setattr(douglas_peucker, "kernel", None)
    monkeypatch.setattr(positions, "kernel", None)
    assert cap_geometry(line, cap=300) == compiled


@pytest.mark.parametrize("n", [1, 2, 1000, 70_000])
@pytest.mark.parametrize("width", [2, 3])
def test_lists_of_floats_and_ints_are_read_as_the_values_are(n, width):
    rng = np.random.default_rng(n + width)
    table = np.stack((rng.uniform(-180, 180, n), rng.uniform(-90, 90, n), rng.uniform(-1e3, 1e4, n)), axis=1)
    coords = table[:, :width].tolist()
    coords[0] = [int(value) for value in coords[0]]  # an int reads as the float it equals
    coords[-1] = tuple(coords[-1])
    buffer, read_width, valid = kernel.read_positions(coords)
    assert read_width == width and valid
    assert bytes(buffer) == positions._table(coords).tobytes()
    assert check_positions(coords).tobytes() == positions._table(coords)[:, :2].tobytes()


OTHER = {
    "mixed widths": [[1.0, 2.0], [1.0, 2.0, 3.0]],
    "a bool": [[True, 2.0]],
    "a float subclass": [[np.float64(1.5), 2.5]],
    "an int too large": [[1.0, 2.0]] * 15 + [[2**1100, 2.0]],
    "a string": [[1.0, 2.0], "ab"],
    "one value": [[1.0]],
    "four values": [[1.0, 2.0, 3.0, 4.0]],
    "None": [[1.0, None]],
    "an array": [np.array([1.0, 2.0])],
    "empty": [],
}


@pytest.mark.parametrize("coords", OTHER.values(), ids=OTHER.keys())
def test_anything_else_is_left_to_the_value_by_value_reading(coords):
    assert kernel.read_positions(coords) is None


@pytest.mark.parametrize(
    "coords",
    [
        [[180.0, 90.0], [-180.5, 0.0]],
        [[0.0, -90.1]],
        [[0.0, math.nan]],
        [[math.inf, 0.0]],
        [[0.0, 0.0, math.nan]],
        [[0.0, 0.0], [0.0, 0.0, -math.inf]],
    ],
    ids=["longitude", "latitude", "NaN", "infinite", "NaN altitude", "infinite altitude"],
)
def test_values_out_of_range_are_flagged(coords):
    read = kernel.read_positions(coords)
    if len({len(position) for position in coords}) > 1:
        assert read is None  # mixed widths
    else:
        assert read is not None and read[2] is False
    with pytest.raises(positions.MalformedGeometry):
        check_positions(coords)


def test_the_search_refuses_inconsistent_arrays():
    lon, lat = np.arange(10.0), np.zeros(10)
    init, pops = _start(10, 4, np.empty(0, dtype=np.int64))
    z, end = _projected(lon, lat, init)
    kept, seg_err = np.empty(init.size + pops, dtype=np.int64), np.empty(init.size + pops - 1)
    with pytest.raises(ValueError, match="inconsistent array sizes"):
        kernel.search(z, end, init, pops, kept[:-1], seg_err)
    with pytest.raises(ValueError, match="increasing indices"):
        kernel.search(z, end, init[::-1].copy(), pops, kept, seg_err)
    with pytest.raises(ValueError, match="increasing indices"):
        kernel.search(z[:5], end, init, pops, kept, seg_err)
    with pytest.raises(BufferError):
        kernel.search(z, end, init, pops, kept, b"read-only")
    with pytest.raises(ValueError, match="z: a buffer of 16-byte items expected"):
        kernel.search(z.view(np.float64)[:-1].copy(), end, init, pops, kept, seg_err)


def test_the_bounds_refuse_inconsistent_arrays():
    lon, lat, kept = np.arange(10.0), np.zeros(10), np.array([0, 4, 9])
    with pytest.raises(ValueError, match="gaps: inconsistent array sizes"):
        kernel.gaps(lon, lat[:-1].copy(), np.empty(9))
    with pytest.raises(ValueError, match="out: a buffer of 8-byte items expected"):
        kernel.gaps(lon, lat, bytearray(9 * 8 + 1))
    segs, gap, out = np.array([0, 1]), np.zeros(2), np.empty(2)
    rlon, rlat = lon[kept], lat[kept]
    kernel.vertex_bounds(lon, lat, kept, rlon, rlat, segs, gap, 0.0, out)
    for bad_kept, bad_segs in ((kept[::-1].copy(), segs), (np.array([0, 4, 10]), segs), (kept, np.array([0, 2]))):
        with pytest.raises(ValueError, match="vertex_bounds: inconsistent arrays"):
            kernel.vertex_bounds(lon, lat, bad_kept, rlon, rlat, bad_segs, gap, 0.0, out)


def walk_lines(seed: int, count: int) -> list[np.ndarray]:
    """Seeded walks of every scale: a street, a country, half a continent, across the antimeridian."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        step = 10.0 ** rng.uniform(-5, -0.5)
        origin = (rng.uniform(-179, 179), rng.uniform(-80, 80))
        line = np.cumsum(rng.normal(0.0, step, (int(rng.integers(50, 4000)), 2)), axis=0) + origin
        line[:, 1] = np.clip(line[:, 1], -89.9, 89.9)
        if k % 4 == 0:
            line[:, 0] = np.unwrap(np.mod(line[:, 0] + 180.0, 360.0) - 180.0, period=360.0)
        out.append(line)
    return out


def test_the_kernels_error_bounds_are_numpys_within_rounding(monkeypatch):
    """The C library's trigonometry is not numpy's, so the bounds may differ in the last bits:
    each segment's gap and each vertex bound agree to 1e-9 relative, the reported whole metres
    are the same."""
    lines = walk_lines(7, 24)
    compiled = [cap_geometry({"type": "LineString", "coordinates": line.tolist()}, cap=200) for line in lines]
    gaps = [error_bound.gc_gap_m(line[:, 0], line[:, 1]) for line in lines]
    monkeypatch.setattr(error_bound, "kernel", None)
    for line, (geometry, report), gap in zip(lines, compiled, gaps, strict=True):
        assert np.allclose(gap, error_bound.gc_gap_m(line[:, 0], line[:, 1]), rtol=1e-9, atol=1e-9)
        assert cap_geometry({"type": "LineString", "coordinates": line.tolist()}, cap=200) == (geometry, report)


@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])
def test_a_segment_rounded_to_one_point_bounds_its_vertices_by_their_distance_to_it(compiled, monkeypatch):
    """A loop whose two kept ends round to the same position: the vertex between is 0.001 degree
    of latitude (111 m) from that point, not 0 from a segment of no length."""
    if not compiled:
        monkeypatch.setattr(error_bound, "kernel", None)
    lon, lat = np.array([4.9, 4.9, 4.900001]), np.array([52.3, 52.301, 52.3])
    rounded_line = np.array([[4.9, 52.3], [4.9, 52.3]])
    bound = error_bound._vertex_bounds_m(
        lon, lat, np.array([0, 2]), rounded_line[:, 0], rounded_line[:, 1], np.array([0]), np.zeros(1), 0.0
    )
    assert bound[0] == pytest.approx(111.195, abs=1e-3)
