"""Compact shape of a Calculate Reachable Range answer, and its polygon for `geometry`.

Both backends answer `{"reachableRange": {"center": {latitude, longitude}, "boundary": [...]}}`,
the boundary a ring of `{latitude, longitude}` points. Compact keeps the center's point
coordinates, the budget under its join key (`budget_min` or `budget_km`, given by the tool),
and a summary of the area: its bounding box and how many boundary points TomTom sent. The
polygon's coordinates appear only in `geometry`, as one Polygon whose only property is the
same budget key.
"""

from __future__ import annotations

from typing import Any

from core.errors import ErrorCode, ToolError
from tools.shaping.geometry import feature
from tools.shaping.points import lon_lat
from tools.shaping.shape import ANY, compile_spec, expect

Budget = dict[str, int | float]
"""One join key and its value, e.g. `{"budget_min": 30}`."""

RANGE_ANSWER = compile_spec({"reachableRange": {"center": ANY, "boundary": [ANY]}})
"""A reachable range answer as shaping reads it; each point is checked by `lon_lat`."""


def _range(body: dict[str, Any]) -> dict[str, Any]:
    expect(body, RANGE_ANSWER)
    reach = body.get("reachableRange")
    if not isinstance(reach, dict) or "center" not in reach:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered without a reachable range.")
    return reach


def boundary(body: dict[str, Any]) -> list[list[float]]:
    """The boundary ring as `[longitude, latitude]` positions, in TomTom's order."""
    ring = [lon_lat(point) for point in _range(body).get("boundary") or []]
    if len(ring) < 3:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with a reachable range of fewer than three points.")
    return ring


def compact_range(body: dict[str, Any], budget: Budget) -> dict[str, Any]:
    ring = boundary(body)
    lons, lats = [p[0] for p in ring], [p[1] for p in ring]
    return {
        "center": lon_lat(_range(body)["center"]),
        **budget,
        "boundingBox": [min(lons), min(lats), max(lons), max(lats)],
        "boundaryPoints": len(ring),
    }


def range_features(body: dict[str, Any], budget: Budget) -> list[dict[str, Any]]:
    """One Polygon for the budget, its properties the budget's join key (and any simplification)."""
    return [feature({"type": "Polygon", "coordinates": [boundary(body)]}, dict(budget))]
