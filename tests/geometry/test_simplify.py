"""Tests for tools.geometry.simplify: the vertex cap, its error bound and its input checks.

Distances are checked against geodesy written independently of the module: bearings and
Napier's rules for the great-circle reading of a segment, and haversine minimised along the
segment for the straight longitude/latitude reading.
"""

from __future__ import annotations

import doctest
import heapq
import itertools
import json
import math
import re

import numpy as np
import pytest
import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.geometry import douglas_peucker, error_bound, paths, polygons, positions, simplify, sphere
from tools.geometry.positions import MalformedGeometry, check_positions, round_positions
from tools.geometry.simplify import VERTEX_CAP, Simplification, cap_geometry, simplify_indices

R = 6_371_008.8
SLACK_M = 1e-6
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- independent geodesy --------------------------------------------------------------------


def haversine_m(lon1, lat1, lon2, lat2):
    p1, p2 = np.radians(lat1), np.radians(lat2)
    h = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(np.radians(lon2 - lon1) / 2) ** 2
    return 2 * R * np.arcsin(np.minimum(1.0, np.sqrt(h)))


def bearing(lon1, lat1, lon2, lat2):
    p1, p2, dl = np.radians(lat1), np.radians(lat2), np.radians(lon2 - lon1)
    return np.arctan2(np.sin(dl) * np.cos(p2), np.cos(p1) * np.sin(p2) - np.sin(p1) * np.cos(p2) * np.cos(dl))


def arc_distance_m(p, a, b):
    """Distance from points p to great-circle arcs a -> b (arrays of [lon, lat]), via the
    cross-track distance and the along-track distance from Napier's rules."""
    d13 = haversine_m(a[:, 0], a[:, 1], p[:, 0], p[:, 1]) / R
    d12 = haversine_m(a[:, 0], a[:, 1], b[:, 0], b[:, 1]) / R
    turn = bearing(a[:, 0], a[:, 1], p[:, 0], p[:, 1]) - bearing(a[:, 0], a[:, 1], b[:, 0], b[:, 1])
    across = np.arcsin(np.clip(np.sin(d13) * np.sin(turn), -1.0, 1.0))
    along = np.arctan2(np.sin(d13) * np.cos(turn), np.cos(d13))  # tan(along) = tan(d13) cos(turn)
    ends = np.minimum(d13, haversine_m(b[:, 0], b[:, 1], p[:, 0], p[:, 1]) / R)
    inside = (along >= 0) & (along <= d12) & (d12 > 0)
    return np.where(inside, np.abs(across), ends) * R


def lonlat_distance_m(p, a, b):
    """Distance from points p to the straight lon/lat segments a -> b (the short way in
    longitude): haversine minimised over the segment, on a grid then by ternary search."""
    dlon = (b[:, 0] - a[:, 0] + 180.0) % 360.0 - 180.0

    def at(t):
        return haversine_m(p[:, 0], p[:, 1], a[:, 0] + t * dlon, a[:, 1] + t * (b[:, 1] - a[:, 1]))

    grid = np.linspace(0.0, 1.0, 65)
    values = np.stack([at(np.full(len(p), t)) for t in grid])
    best = values.argmin(axis=0)
    lo, hi = grid[np.maximum(best - 1, 0)], grid[np.minimum(best + 1, 64)]
    for _ in range(60):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        left = at(m1) < at(m2)
        lo, hi = np.where(left, lo, m1), np.where(left, m2, hi)
    return np.minimum(values.min(axis=0), at((lo + hi) / 2))


def match(rounded, returned):
    """Indices of the returned positions in the rounded input, each matched as early as it can
    be after the previous one; IndexError when the output is not a subsequence of the input."""
    at, out = 0, []
    for position in returned:
        while not np.array_equal(rounded[at], position):
            at += 1
        out.append(at)
        at += 1
    return np.array(out)


def true_error_m(original, returned):
    """Largest distance from an input vertex to the returned segment spanning it, under either
    reading of a segment. Rounding can merge input vertices, so a returned vertex may match any
    of several input vertices: each input vertex is measured against every segment that may
    span it, and the nearest counts (never more than the distance to the true one)."""
    rounded = np.round(original, 5)
    assert np.array_equal(returned[0], rounded[0]) and np.array_equal(returned[-1], rounded[-1])
    first = match(rounded, returned)
    last = len(rounded) - 1 - match(rounded[::-1], returned[::-1])[::-1]
    j = np.arange(len(original))
    high = np.clip(np.searchsorted(first, j, side="right") - 1, 0, len(returned) - 2)
    low = np.clip(np.searchsorted(last[1:], j, side="left"), 0, len(returned) - 2)
    best = np.full((2, len(j)), np.inf)
    for offset in range(int((high - low).max()) + 1):
        k = np.minimum(low + offset, high)
        a, b = returned[k], returned[k + 1]
        best = np.minimum(best, [arc_distance_m(original, a, b), lonlat_distance_m(original, a, b)])
    return float(best.max())


# --- generated geometries -------------------------------------------------------------------


@st.composite
def walks(draw, min_size=3, max_size=400, decimals=6):
    """A random walk [lon, lat] with steps from metres to tens of kilometres, sometimes across
    the antimeridian, sometimes with repeated vertices; rounded to ``decimals`` if given."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(min_size, max_size))
    step_deg = 10.0 ** draw(st.floats(-4.5, -0.5))
    start = [draw(st.floats(-180, 180)), draw(st.floats(-75, 75))]
    turn = draw(st.floats(0.05, 3.0))
    heading = np.cumsum(rng.normal(0.0, turn, n - 1))
    steps = np.stack((np.cos(heading), np.sin(heading)), axis=1) * rng.uniform(0.2, 1.0, (n - 1, 1)) * step_deg
    walk = np.vstack(([start], start + np.cumsum(steps, axis=0)))
    walk[:, 1] = np.clip(walk[:, 1], -89.0, 89.0)
    walk[:, 0] = (walk[:, 0] + 180.0) % 360.0 - 180.0
    if draw(st.booleans()):
        walk = np.repeat(walk, rng.integers(1, 3, n), axis=0)[: max(n, 2)]
    return walk if decimals is None else np.round(walk, decimals)


@st.composite
def star_polygons(draw):
    """A valid star-shaped ring (radial noise around a centre), sometimes with a hole."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(20, 300))
    centre = np.array([draw(st.floats(-170, 170)), draw(st.floats(-70, 70))])
    radius = 10.0 ** draw(st.floats(-3.0, -0.5))
    angles = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    r = radius * (1.0 + 0.3 * rng.uniform(-1.0, 1.0, n))
    shell = centre + np.stack((np.cos(angles), np.sin(angles)), axis=1) * r[:, None]
    rings = [np.vstack((shell, shell[:1]))]
    if draw(st.booleans()):
        hole = centre + 0.3 * radius * np.stack((np.cos(-angles), np.sin(-angles)), axis=1)
        rings.append(np.vstack((hole, hole[:1])))
    return {"type": "Polygon", "coordinates": [np.round(ring, 6).tolist() for ring in rings]}


def line(coords):
    return {"type": "LineString", "coordinates": np.asarray(coords).tolist()}


# --- properties -----------------------------------------------------------------------------


@FAST
@given(walk=walks(), cap=st.integers(2, 80))
def test_capped_line_keeps_the_cap_the_endpoints_and_the_order(walk, cap):
    capped, report = cap_geometry(line(walk), cap=cap)
    out = np.array(capped["coordinates"])
    assert len(out) <= max(cap, 2)
    rounded = np.round(walk, 5)
    match(rounded, out)  # a subsequence of the rounded input
    assert np.array_equal(out[0], rounded[0]) and np.array_equal(out[-1], rounded[-1])
    if len(walk) > cap:
        assert report == Simplification(len(walk), len(out), report.max_error_m)
    else:
        assert report is None


@FAST
@given(walk=walks(min_size=81, max_size=300), cap=st.integers(2, 80))
def test_max_error_bounds_the_independently_measured_error(walk, cap):
    capped, report = cap_geometry(line(walk), cap=cap)
    assert report.points == len(capped["coordinates"]) <= cap
    assert true_error_m(walk, np.array(capped["coordinates"])) <= report.max_error_m + SLACK_M


@FAST
@given(walk=walks(min_size=10), budget=st.integers(2, 80))
def test_simplify_indices_error_bounds_the_unrounded_error(walk, budget):
    xy = check_positions(walk.tolist())
    kept, error_m = simplify_indices(xy, budget)
    assert kept[0] == 0 and kept[-1] == len(xy) - 1 and (np.diff(kept) > 0).all()
    assert len(kept) <= budget or (len(xy) <= budget and len(kept) == len(xy))
    seg = np.clip(np.searchsorted(kept, np.arange(len(xy)), side="right") - 1, 0, len(kept) - 2)
    a, b = xy[kept[seg]], xy[kept[seg + 1]]
    assert max(arc_distance_m(xy, a, b).max(), lonlat_distance_m(xy, a, b).max()) <= error_m + SLACK_M


@FAST
@given(walk=walks(), cap=st.integers(2, 80))
def test_capping_is_idempotent(walk, cap):
    once, _ = cap_geometry(line(walk), cap=cap)
    twice, report = cap_geometry(once, cap=cap)
    assert twice == once and report is None


@FAST
@given(polygon=star_polygons(), cap=st.integers(8, 120))
def test_valid_polygons_stay_valid(polygon, cap):
    capped, report = cap_geometry(polygon, cap=cap)
    rings = capped["coordinates"]
    assert shapely.is_valid(shapely.Polygon(rings[0], rings[1:]))
    assert all(ring[0] == ring[-1] and len(ring) >= 4 for ring in rings)
    points = sum(map(len, rings))
    if report is not None:
        assert report.points == points
        assert (points > cap) == report.cap_exceeded_for_validity
        for original, returned in zip(polygon["coordinates"], rings, strict=True):
            assert true_error_m(np.array(original), np.array(returned)) <= report.max_error_m + SLACK_M


@FAST
@given(walk=walks(min_size=30, max_size=300, decimals=None), budget=st.integers(2, 60))
def test_selection_is_the_priority_queue_rule(walk, budget):
    """Unrounded coordinates: no exact ties, whose order the rule leaves open."""
    xy = check_positions(walk.tolist())
    expected = reference_dp(xy, budget)
    assert simplify_indices(xy, budget)[0].tolist() == expected


def reference_dp(xy, budget, required=()):
    """The rule, written plainly: anchors, then a heap that keeps popping the segment whose
    farthest vertex is farthest (planar, in each anchor span's own equirectangular projection,
    distances under 1e-12 degrees taken as 0), until the budget or no vertex is off its segment."""
    n = len(xy)
    if n <= budget:
        return list(range(n))
    lon, lat = np.unwrap(xy[:, 0], period=360.0), xy[:, 1]
    anchors = min(64, budget // 8)
    kept = {0, n - 1, *required, *(math.floor(k * (n - 1) / anchors + 0.5) for k in range(1, anchors))}
    bounds = sorted(kept)
    heap = []

    def push(i, j, scale):
        if j - i > 1:
            p = np.stack((lon[i + 1 : j] * scale, lat[i + 1 : j]), axis=1)
            a, b = np.array([lon[i] * scale, lat[i]]), np.array([lon[j] * scale, lat[j]])
            d = b - a
            t = np.clip((p - a) @ d / (d @ d), 0.0, 1.0) if d @ d > 0 else np.zeros(len(p))
            dist = np.linalg.norm(p - a - t[:, None] * d, axis=1)
            dist[dist < 1e-12] = 0.0  # float noise, e.g. a copy of an endpoint: on the segment
            heapq.heappush(heap, (-dist.max(), i, j, i + 1 + int(dist.argmax()), scale))

    for i, j in itertools.pairwise(bounds):
        low, high = lat[i : j + 1].min(), lat[i : j + 1].max()
        push(i, j, math.cos(math.radians(min(max(low, 0.0), high))))
    while len(kept) < budget and heap:
        d, i, j, far, scale = heapq.heappop(heap)
        if d == 0:
            break
        kept.add(far)
        push(i, far, scale)
        push(far, j, scale)
    return sorted(kept)


# --- examples -------------------------------------------------------------------------------


ANGLES = np.linspace(0, 2 * math.pi, 3000)


def gaussian_walk(rng, n, origin=(5.0, 50.0)):
    return np.cumsum(rng.normal(0.0, 1e-3, (n, 2)), axis=0) + np.asarray(origin)


def zigzag(n, lon0=4.0, lat0=52.0):
    return np.array([[lon0 + i * 1e-4, lat0 + (3e-4 if i % 2 else 0.0)] for i in range(n)])


@pytest.mark.parametrize(
    "module",
    [douglas_peucker, error_bound, paths, polygons, positions, simplify, sphere],
    ids=lambda module: module.__name__,
)
def test_module_examples(module):
    result = doctest.testmod(module)
    assert result.attempted and not result.failed


def test_below_the_cap_only_rounds_and_drops_consecutive_duplicates():
    coords = [[4.900001, 52.370004], [4.9, 52.37], [4.9, 52.37], [5.123456789, -0.000001]]
    capped, report = cap_geometry(line(coords))
    assert report is None
    assert capped == {"type": "LineString", "coordinates": [[4.9, 52.37], [5.12346, 0.0]]}


def test_output_json_has_at_most_five_decimals():
    rng = np.random.default_rng(5)
    walk = gaussian_walk(rng, 3000, (4.9, 52.3))
    capped, report = cap_geometry(line(walk))
    text = json.dumps(capped)
    assert report is not None and report.points == VERTEX_CAP
    assert not re.search(r"\d\.\d{6}", text) and "-0.0," not in text
    assert all(round(v, 5) == v for position in capped["coordinates"] for v in position)


def test_antimeridian_line_is_simplified_the_short_way():
    walk = np.stack((np.linspace(179.0, 181.0, 2001), 0.5 + 0.01 * np.sin(np.linspace(0, 6, 2001))), axis=1)
    walk[:, 0] = (walk[:, 0] + 180.0) % 360.0 - 180.0
    capped, report = cap_geometry(line(walk), cap=50)
    out = np.array(capped["coordinates"])
    assert report.points <= 50 and report.max_error_m < 100
    assert (np.abs(out[:, 0]) >= 179.0).all()  # original longitudes, no unwrapped 180+ values
    assert true_error_m(walk, out) <= report.max_error_m


def test_duplicates_and_zero_length_segments_above_the_cap():
    walk = np.repeat(zigzag(600), 3, axis=0)
    capped, report = cap_geometry(line(walk), cap=100)
    out = np.array(capped["coordinates"])
    assert report.points == len(out) <= 100
    assert (np.abs(np.diff(out, axis=0)).sum(axis=1) > 0).all()
    assert true_error_m(walk, out) <= report.max_error_m


def test_all_identical_points_keep_a_two_point_line():
    capped, report = cap_geometry(line([[4.9, 52.3]] * 50), cap=10)
    assert capped["coordinates"] == [[4.9, 52.3], [4.9, 52.3]]
    assert report.points == 2 and report.max_error_m <= 1


@pytest.mark.parametrize("coords", [[[4.9, 52.3]], [[4.9, 52.3], [4.9, 52.3]], [[4.9, 52.3], [5.0, 52.4]]])
def test_one_and_two_point_lines_are_returned_rounded(coords):
    capped, report = cap_geometry(line(coords), cap=2)
    assert capped["coordinates"] == coords and report is None
    capped, report = cap_geometry({"type": "MultiLineString", "coordinates": [coords] * 3}, cap=2)
    assert capped["coordinates"] == [coords] * 3 and report.points == 3 * len(coords)


def test_unclosed_ring_is_closed():
    ring = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
    capped, _ = cap_geometry({"type": "Polygon", "coordinates": [ring]})
    assert capped["coordinates"] == [[*ring, ring[0]]]


def test_required_indices_are_kept():
    walk = gaussian_walk(np.random.default_rng(4), 2000)
    required = np.array([3, 777, 1500])
    kept, _ = simplify_indices(walk, 40, required=required)
    assert set(required) <= set(kept.tolist()) and len(kept) == 40
    assert kept.tolist() == reference_dp(walk, 40, required.tolist())


def test_required_indices_out_of_range_are_refused():
    with pytest.raises(ValueError, match="required"):
        simplify_indices(zigzag(50), 10, required=[50])


def test_multilinestring_shares_the_budget_by_vertex_count():
    rng = np.random.default_rng(1)
    lines = [gaussian_walk(rng, size) for size in (3000, 1000)]
    capped, report = cap_geometry({"type": "MultiLineString", "coordinates": [x.tolist() for x in lines]})
    assert [len(x) for x in capped["coordinates"]] == [750, 250]
    assert report == Simplification(4000, 1000, report.max_error_m)


def test_short_paths_at_their_minimum_still_fit_the_cap():
    rng = np.random.default_rng(2)
    big = gaussian_walk(rng, 3000)
    small = [[[5.0 + i, 40.0], [5.1 + i, 40.1], [5.2 + i, 40.0]] for i in range(10)]
    capped, report = cap_geometry({"type": "MultiLineString", "coordinates": [big.tolist(), *small]})
    assert [len(x) for x in capped["coordinates"]] == [980] + [2] * 10
    assert report.points == 1000


def test_polygon_with_a_hole_stays_valid_and_the_hole_inside():
    shell = np.stack((5 + np.cos(ANGLES), 50 + 0.6 * np.sin(ANGLES)), axis=1)
    hole = np.stack((5 + 0.5 * np.cos(-ANGLES[::3]), 50 + 0.3 * np.sin(-ANGLES[::3])), axis=1)
    shell[-1], hole[-1] = shell[0], hole[0]
    capped, report = cap_geometry({"type": "Polygon", "coordinates": [shell.tolist(), hole.tolist()]}, cap=200)
    out_shell, out_hole = capped["coordinates"]
    assert shapely.Polygon(out_shell, [out_hole]).is_valid
    assert shapely.Polygon(out_shell).contains(shapely.Polygon(out_hole))
    assert [len(out_shell), len(out_hole)] == [150, 50] and report.points == 200


def test_polygon_that_would_turn_invalid_gets_more_vertices_and_says_so():
    shell = np.stack((np.cos(ANGLES), np.sin(ANGLES)), axis=1)
    hole = 0.99 * np.stack((np.cos(0.05 - ANGLES[::10]), np.sin(0.05 - ANGLES[::10])), axis=1)
    shell[-1], hole[-1] = shell[0], hole[0]
    assert not shapely.Polygon(simplify_ring(shell, 16), [simplify_ring(hole, 4)]).is_valid  # the plain cut
    capped, report = cap_geometry({"type": "Polygon", "coordinates": [shell.tolist(), hole.tolist()]}, cap=20)
    rings = capped["coordinates"]
    assert shapely.Polygon(rings[0], rings[1:]).is_valid
    assert report.cap_exceeded_for_validity and report.points == sum(map(len, rings)) > 20
    assert report.as_dict()["cap_exceeded_for_validity"] is True
    assert true_error_m(shell, np.array(rings[0])) <= report.max_error_m


def simplify_ring(ring, budget):
    return ring[simplify_indices(ring, budget)[0]]


def test_report_as_dict():
    assert Simplification(10, 5, 3).as_dict() == {"original_points": 10, "points": 5, "max_error_m": 3}


def test_multipolygon_and_points():
    square = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]]
    far = [[x + 5.0, y] for x, y in square]
    capped, report = cap_geometry({"type": "MultiPolygon", "coordinates": [[square], [far]]})
    assert capped["coordinates"] == [[square], [far]] and report is None
    assert cap_geometry({"type": "Point", "coordinates": [4.9000004, 52.3, 7.0]}) == (
        {"type": "Point", "coordinates": [4.9, 52.3]},
        None,
    )
    points = {"type": "MultiPoint", "coordinates": [[1, 2]] * 2000, "bbox": [1, 2, 1, 2]}
    expected = {"type": "MultiPoint", "coordinates": [[1.0, 2.0]] * 2000, "bbox": [1, 2, 1, 2]}
    assert cap_geometry(points) == (expected, None)


def test_empty_members_are_kept_empty():
    ring = np.stack((np.cos(ANGLES), np.sin(ANGLES)), axis=1)
    ring[-1] = ring[0]
    capped, report = cap_geometry({"type": "MultiPolygon", "coordinates": [[], [ring.tolist()]]}, cap=50)
    assert capped["coordinates"][0] == [] and len(capped["coordinates"][1][0]) == report.points <= 50
    capped, report = cap_geometry({"type": "MultiLineString", "coordinates": [[], ring.tolist()]}, cap=50)
    assert capped["coordinates"][0] == [] and report.points <= 50
    assert cap_geometry({"type": "LineString", "coordinates": []}) == ({"type": "LineString", "coordinates": []}, None)


def test_round_positions():
    assert round_positions(np.array([[-0.000001, 1.234565001], [179.999996, -90.0]])) == [
        [0.0, 1.23457],
        [180.0, -90.0],
    ]


def test_check_positions_accepts_altitudes_arrays_and_mixed_widths():
    assert check_positions([[1, 2, 3], [4, 5]]).tolist() == [[1.0, 2.0], [4.0, 5.0]]
    assert check_positions(np.array([[1, 2, 3]])).tolist() == [[1.0, 2.0]]
    assert check_positions(((1.5, -2.5),)).tolist() == [[1.5, -2.5]]
    assert check_positions([]).shape == (0, 2)


@pytest.mark.parametrize(
    ("coords", "message"),
    [
        ([[4.9, math.nan]], "position 0 .*NaN or infinite"),
        ([[4.9, 52.0], [math.inf, 52.0]], "position 1 .*NaN or infinite"),
        ([[4.9, 52.0, math.nan]], "position 0 .*NaN or infinite"),
        ([[4.9, 52.0], [4.9, 95.0]], r"position 1 \[4.9, 95.0\]: latitude"),
        ([[-180.5, 52.0]], "position 0 .*longitude"),
        ([["4.9", "52.3"]], "position 0 holds '4.9', not a number"),
        ([[4.9, None]], "position 0 holds None"),
        ([[4.9, 52.0], "ab"], "position 1 is not an array of numbers: 'ab'"),
        ([[4.9, 52.0], 7], "position 1 is not an array"),
        ([[4.9]], "position 0 has 1 values"),
        ([[1, 2, 3, 4]], "position 0 has 4 values"),
        ([[[4.9, 52.0], [5.0, 52.0]]], "position 0 has 2 values|position 0 holds"),
        ([[2**2000, 1]], "too large"),
        ("LINESTRING(1 2, 3 4)", "expected an array of positions"),
        (np.array([["a", "b"]]), "numeric array"),
        (np.zeros((3, 4)), "numeric array"),
    ],
)
def test_malformed_positions_are_named(coords, message):
    with pytest.raises(MalformedGeometry, match=message):
        check_positions(coords)
    if not isinstance(coords, str | np.ndarray):
        with pytest.raises(MalformedGeometry):
            cap_geometry({"type": "LineString", "coordinates": coords})


@pytest.mark.parametrize(
    ("geometry", "message"),
    [
        ([], "a geometry is a JSON object"),
        ({"type": "Circle", "coordinates": [1, 2]}, "unsupported geometry type 'Circle'"),
        ({"type": "MultiLineString", "coordinates": [[1.0, 2.0]]}, "position 0 is not an array"),
        ({"type": "MultiPolygon", "coordinates": [[[0, 0], [1, 0]]]}, "position 0 is not an array"),
        ({"type": "Polygon", "coordinates": [[[0, 0], [1, 1]]]}, "ring 0 has 3 positions"),
        ({"type": "LineString", "coordinates": None}, "expected an array"),
        ({"type": "Polygon", "coordinates": 5}, "Polygon coordinates must be an array"),
    ],
)
def test_malformed_geometries_are_named(geometry, message):
    with pytest.raises(MalformedGeometry, match=message):
        cap_geometry(geometry)
    assert issubclass(MalformedGeometry, ValueError)


def test_long_line_bound_holds_over_thousands_of_kilometres():
    rng = np.random.default_rng(3)
    lon = np.linspace(-10.0, 60.0, 6000)
    lat = np.clip(40.0 + np.cumsum(rng.normal(0, 0.01, lon.size)), -89, 89)
    walk = np.stack((lon, lat), axis=1)
    capped, report = cap_geometry(line(walk), cap=150)
    assert true_error_m(walk, np.array(capped["coordinates"])) <= report.max_error_m
