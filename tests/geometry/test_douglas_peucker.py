"""`priority_dp` keeps what the numpy reference keeps, to the bit (tools/geometry/douglas_peucker.py).

`priority_dp` runs the compiled kernel's priority queue (tools/geometry/_kernel.c); the reference
grows the same Douglas-Peucker tree a level at a time in numpy. Each vertex's distance is
computed with the same float operations (tests/geometry/test_kernel.py pins numpy's), so the kept
vertices and the reported errors are equal, not close, on every path: unrounded ones, rounded
ones with repeated vertices (zero-length chords), and zigzags, where every vertex ties and the
first of the tied must win.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.geometry.test_simplify import SLACK_M, true_error_m, walks, zigzag
from tools.geometry.compiled import kernel
from tools.geometry.douglas_peucker import priority_dp, priority_dp_reference
from tools.geometry.positions import check_positions
from tools.geometry.simplify import cap_geometry
from tools.geometry.sphere import unwrap_longitudes

NONE = np.empty(0, dtype=np.int64)

pytestmark = pytest.mark.skipif(kernel is None, reason="the compiled kernel is not built (no C compiler)")


def both(xy: np.ndarray, budget: int, required: np.ndarray = NONE) -> None:
    lon = unwrap_longitudes(xy[:, 0])
    kept, seg_err = priority_dp(lon, xy[:, 1], budget, required)
    ref_kept, ref_err = priority_dp_reference(lon, xy[:, 1], budget, required)
    assert kept.tolist() == ref_kept.tolist()
    assert seg_err.tobytes() == ref_err.tobytes()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    walk=walks(min_size=12, max_size=3000, decimals=None) | walks(min_size=12, max_size=3000, decimals=4),
    budget=st.integers(2, 400),
    data=st.data(),
)
def test_priority_dp_keeps_what_the_reference_keeps(walk, budget, data):
    xy = check_positions(walk.tolist())
    if len(xy) <= budget:
        return
    required = np.unique(np.asarray(data.draw(st.lists(st.integers(0, len(xy) - 1), max_size=5)), dtype=np.int64))
    both(xy, budget, required)


def road(n: int, seed: int) -> np.ndarray:
    """A road-like line: a random walk of 40-130 m steps with a slowly turning heading."""
    rng = np.random.default_rng(seed)
    heading = np.cumsum(rng.normal(0.0, 0.08, n - 1))
    step = rng.uniform(40.0, 130.0, n - 1) / 111_195.0
    lat = 52.37 + np.concatenate(([0.0], np.cumsum(np.sin(heading) * step)))
    lon = 4.9 + np.concatenate(([0.0], np.cumsum(np.cos(heading) * step / np.cos(np.radians(lat[1:])))))
    return np.stack((lon, lat), axis=1)


@pytest.mark.parametrize(("n", "budget"), [(30_000, 1000), (30_000, 100), (12_000, 5000), (60_000, 1000)])
def test_long_road_like_lines_keep_what_the_reference_keeps(n, budget):
    both(road(n, n + budget), budget)


@pytest.mark.parametrize(("n", "budget"), [(2_001, 1000), (5_000, 1000), (50_000, 1000), (20_000, 300)])
def test_zigzags_keep_what_the_reference_keeps(n, budget):
    both(zigzag(n), budget)


@pytest.mark.parametrize("n", [2_001, 5_000])
def test_on_exact_ties_the_bound_still_holds(n):
    line = zigzag(n)
    geometry, report = cap_geometry({"type": "LineString", "coordinates": line.tolist()}, cap=1000)
    assert report.points == 1000
    assert true_error_m(line, np.array(geometry["coordinates"])) <= report.max_error_m + SLACK_M


def test_two_tied_vertices_far_apart_the_first_is_farthest():
    n = 1280
    lat = np.zeros(n)
    lat[[101, 962]] = 0.5  # the same distance from the chord, far apart
    xy = np.stack((np.arange(n) / 1000, lat), axis=1)
    assert priority_dp(xy[:, 0], xy[:, 1], 3, NONE)[0].tolist() == [0, 101, n - 1]
    both(xy, 3)


@pytest.mark.parametrize("budget", [5, 12, 300])
def test_closed_rings_whose_first_chord_has_no_length_keep_what_the_reference_keeps(budget):
    """A ring's first span starts and ends on one point: its distances are to that point."""
    angle = np.linspace(0.0, 2 * math.pi, 6000)
    radius = 0.2 * (1 + 0.3 * np.sin(7 * angle) + 0.05 * np.random.default_rng(budget).uniform(-1, 1, angle.size))
    ring = np.stack((4.9 + radius * np.cos(angle), 52.3 + radius * np.sin(angle)), axis=1)
    ring[-1] = ring[0]
    both(ring, budget)


def test_a_ring_keeps_its_vertex_farthest_from_its_start_when_the_start_is_its_own_chord():
    """East along the equator, a step north, back west, up a spur and down to the start: the far
    east corner is farthest from the start (0.80 degrees), though within 0.05 of the segment a
    non-zero chord eastwards would be; the spur's tip (0.30) must not hide it."""
    legs = [
        ((0, 0), (0.8, 0), 1000),
        ((0.8, 0), (0.8, 0.05), 100),
        ((0.8, 0.05), (0, 0.05), 1000),
        ((0, 0.05), (0, 0.3), 500),
        ((0, 0.3), (0, 0), 500),
    ]
    ring = np.vstack([np.linspace(a, b, k, endpoint=False) for a, b, k in legs] + [[[0.0, 0.0]]])
    both(ring, 3)
    kept, _ = priority_dp(ring[:, 0], ring[:, 1], 3, NONE)
    assert ring[kept[1]].tolist() == [0.8, 0.05]
