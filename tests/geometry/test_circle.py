"""The circle drawn for an area search: closed, counter-clockwise, every vertex on the circle."""

import doctest
import itertools
import math

import pytest

from tools.geometry import circle
from tools.geometry.circle import CIRCLE_VERTICES, circle_ring
from tools.geometry.sphere import EARTH_RADIUS_M


def metres(a, b):
    (lon1, lat1), (lon2, lat2) = (map(math.radians, p) for p in (a, b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(h))


def signed_area(ring):
    return sum(x1 * y2 - x2 * y1 for (x1, y1), (x2, y2) in itertools.pairwise(ring)) / 2


def test_the_module_examples_hold():
    assert doctest.testmod(circle).failed == 0


@pytest.mark.parametrize(("center", "radius"), [([4.9041, 52.3676], 1000), ([-70.6, -33.4], 25_000), ([10, 80], 5)])
def test_a_closed_counter_clockwise_ring_on_the_circle(center, radius):
    ring = circle_ring(center, radius)
    assert len(ring) == CIRCLE_VERTICES + 1 and ring[0] == ring[-1]
    assert signed_area(ring) > 0  # counter-clockwise, as RFC 7946 wants an exterior ring
    assert all(math.isclose(metres(center, point), radius, rel_tol=1e-6) for point in ring)


def test_longitudes_wrap_at_the_antimeridian():
    ring = circle_ring([179.99, 0], 10_000)
    assert all(-180 <= lon <= 180 for lon, _ in ring)
    assert any(lon < 0 for lon, _ in ring) and any(lon > 0 for lon, _ in ring)
