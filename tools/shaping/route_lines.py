"""Route lines inside app data: found, read, and written back simplified.

A *route* is any object with a `legs` list whose items hold `points` lists of
`{"latitude", "longitude"}` objects: a Calculate Route answer's `routes[i]`, or a route the
dynamic map computed. Its *line* is the legs' points joined in order, a point shared by two
legs (a leg starting where the previous one ended) counted once, as tools.shaping.geometry
joins them; TomTom's vertex indexes (`startPointIndex`, `endPointIndex`, `pointIndex`,
anywhere in the route outside the points) count along that line.

`RouteLine.rebuilt(kept)` is the route with only the line's vertices `kept` (sorted indexes,
which must include `required`: every vertex an index points at, and the first and last point
of every leg), rounded to 5 decimals (about 1 m), and every index renumbered so that it points
at the same coordinates as before. The original is never changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

INDEX_KEYS = frozenset({"startPointIndex", "endPointIndex", "pointIndex"})
"""Keys whose integer value is a vertex index along the route's line."""

_LON, _LAT = itemgetter("longitude"), itemgetter("latitude")


@dataclass(frozen=True, slots=True)
class RouteLine:
    """One route of the app data and its line."""

    route: dict[str, Any]
    xy: np.ndarray
    """(n, 2) float64 [longitude, latitude] of the line's vertices."""
    leg_spans: np.ndarray
    """(legs, 2): the first and last line vertex of each leg, inclusive (last < first: no points)."""
    required: np.ndarray
    """Sorted vertex indexes that must survive: indexes pointed at, and each leg's first and last."""

    @property
    def size(self) -> int:
        return len(self.xy)

    def rebuilt(self, kept: np.ndarray) -> dict[str, Any]:
        """A copy of the route with only the vertices `kept`, rounded, and its indexes renumbered."""
        moved = dict(zip(self.required.tolist(), np.searchsorted(kept, self.required).tolist(), strict=True))
        route = {k: _renumbered(v, moved) for k, v in self.route.items() if k != "legs"}
        route["legs"] = [
            {
                **{k: _renumbered(v, moved) for k, v in leg.items() if k != "points"},
                "points": point_objects(self.xy[kept[(kept >= first) & (kept <= last)]]),
            }
            for leg, (first, last) in zip(self.route["legs"], self.leg_spans.tolist(), strict=True)
        ]
        return route


def point_objects(xy: np.ndarray) -> list[dict[str, float]]:
    """TomTom's point objects for (n, 2) [lon, lat] positions, rounded to 5 decimals."""
    return [{"latitude": lat, "longitude": lon} for lon, lat in (np.round(xy, 5) + 0.0).tolist()]


def find_routes(value: Any) -> Iterator[RouteLine]:
    """Every route in `value` whose points can be read (others are left alone), depth first."""
    if isinstance(value, dict):
        legs = value.get("legs")
        if isinstance(legs, list) and legs and all(isinstance(leg, dict) for leg in legs):
            line = _read_route(value, legs)
            if line is not None:
                yield line
                return
        for item in value.values():
            yield from find_routes(item)
    elif isinstance(value, list):
        for item in value:
            yield from find_routes(item)


def _read_route(route: dict[str, Any], legs: list[dict[str, Any]]) -> RouteLine | None:
    try:
        lines = [_leg_xy(leg["points"]) for leg in legs]
    except (KeyError, TypeError, ValueError):
        return None
    parts: list[np.ndarray] = []
    spans: list[tuple[int, int]] = []
    end = -1
    for line in lines:
        shared = bool(parts) and len(line) > 0 and end >= 0 and np.array_equal(line[0], parts[-1][-1])
        start = end if shared else end + 1
        part = line[1:] if shared else line
        if len(part):
            parts.append(part)
        end = start + len(line) - 1
        spans.append((start, end))
    if not parts:
        return None
    xy = np.concatenate(parts)
    if len(xy) < 2 or not np.isfinite(xy).all() or (np.abs(xy) > (180.0, 90.0)).any():
        return None
    leg_spans = np.array(spans, dtype=np.int64)
    ends = leg_spans[leg_spans[:, 1] >= leg_spans[:, 0]].ravel()
    pointed = [i for i in _route_indexes(route) if 0 <= i < len(xy)]
    required = np.unique(np.concatenate((ends, np.asarray(pointed, dtype=np.int64))))
    return RouteLine(route=route, xy=xy, leg_spans=leg_spans, required=required)


def _leg_xy(points: list[dict[str, Any]]) -> np.ndarray:
    lon = np.fromiter(map(_LON, points), np.float64, count=len(points))
    lat = np.fromiter(map(_LAT, points), np.float64, count=len(points))
    return np.column_stack((lon, lat))


def _route_indexes(route: dict[str, Any]) -> Iterator[int]:
    """Every vertex index in a route, outside its legs' points."""
    for key, item in route.items():
        if key == "legs":
            for leg in item:
                yield from _indexes({k: v for k, v in leg.items() if k != "points"})
        else:
            yield from _indexes({key: item})


def _indexes(value: Any) -> Iterator[int]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in INDEX_KEYS and type(item) is int:
                yield item
            else:
                yield from _indexes(item)
    elif isinstance(value, list):
        for item in value:
            yield from _indexes(item)


def _renumbered(value: Any, moved: dict[int, int]) -> Any:
    """A copy of `value` with every vertex index in `moved` replaced by its new place."""
    if isinstance(value, dict):
        return {
            key: moved.get(item, item) if key in INDEX_KEYS and type(item) is int else _renumbered(item, moved)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_renumbered(item, moved) for item in value]
    return value
