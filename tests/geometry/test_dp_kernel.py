"""The compiled Douglas-Peucker kernel keeps what the numpy reference keeps (tools/geometry/dp_kernel.py).

Both run the same priority-queue rule; they may differ only in the last bits of a distance (the
reference's numpy complex arithmetic may fuse multiply-adds), so on unrounded random paths,
where no two candidates tie that closely, the kept vertices are the same and the errors agree
to 1e-12 relative. Where exact ties do occur (a zigzag), either choice is correct and the metre
bound must still hold.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.geometry.test_simplify import SLACK_M, true_error_m, walks, zigzag
from tools.geometry import dp_kernel
from tools.geometry.douglas_peucker import priority_dp, priority_dp_reference
from tools.geometry.positions import check_positions
from tools.geometry.simplify import cap_geometry
from tools.geometry.sphere import unwrap_longitudes

pytestmark = pytest.mark.skipif(not dp_kernel.available(), reason="numba is not installed")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(walk=walks(min_size=12, max_size=600, decimals=None), budget=st.integers(2, 200), data=st.data())
def test_the_kernel_keeps_what_the_reference_keeps(walk, budget, data):
    xy = check_positions(walk.tolist())
    if len(xy) <= budget:
        return
    required = np.unique(np.asarray(data.draw(st.lists(st.integers(0, len(xy) - 1), max_size=5)), dtype=np.int64))
    lon = unwrap_longitudes(xy[:, 0])
    kept, seg_err = priority_dp(lon, xy[:, 1], budget, required)
    ref_kept, ref_err = priority_dp_reference(lon, xy[:, 1], budget, required)
    assert kept.tolist() == ref_kept.tolist()
    np.testing.assert_allclose(seg_err, ref_err, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("n", [2_001, 5_000])
def test_on_exact_ties_the_bound_still_holds(n):
    line = zigzag(n)
    geometry, report = cap_geometry({"type": "LineString", "coordinates": line.tolist()}, cap=1000)
    assert report.points == 1000
    assert true_error_m(line, np.array(geometry["coordinates"])) <= report.max_error_m + SLACK_M
