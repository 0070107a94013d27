"""App data: encoded, and fitted into the room a tool result leaves for it.

The decision is docs/adr/0008-app-data-in-the-result.md; the wire shape is docs/widgets.md.

- `encode(value)`: compact JSON, gzipped, base64-encoded; `decode` reverses it.
- `fit(app_data, room, refetchable=...)`: the encoded app data in at most `room` characters,
  or None. Refetchable data (what a caller gave tomtom-data-viz) is never altered. Otherwise
  the stages are: as is; route lines rounded to 5 decimals (about 1 m); route lines simplified
  with the anchored Douglas-Peucker (tools.geometry.simplify), keeping every vertex an index
  points at and renumbering the indexes (tools.shaping.route_lines).
- How fitted app data travels in a tool result (the `_meta` key, the result limit) is the
  protocol layer's: protocol.appdata.

Simplification searches a vertex budget instead of a tolerance: it estimates the encoded
characters per kept point, simplifies once, measures, and corrects the budget by the measured
ratio (twice at most in practice), then keeps the fitting attempt that kept the most points.
"""

from __future__ import annotations

import base64
import gzip
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from tools.geometry.simplify import Simplification, simplify_indices
from tools.shaping.route_lines import RouteLine, find_routes, point_objects

ROUNDING_ERROR_M = 0.8
"""Rounding a position to 5 decimals moves it by at most 0.79 m (half of 1e-5 degree each way)."""

GZIP_LEVEL = 4
"""Measured on route JSON: as small as levels 5-6 within 1%, several times faster than 7-9."""
THINNING_COST = 0.085
"""A line thinned to a share f of its points costs about (1 + 0.085 ln(1/f)) times as many
compressed bytes per point as the whole line (measured on routes of 8,240 to 39,414 points)."""
_NEVER_SHRINKS = 30
"""JSON more than this many times the room is not compressed to find out: gzip does not shrink
map data that much (a data-viz file of tens of megabytes would cost a second of CPU)."""
_SAMPLE_POINTS = 2048
_MAX_ATTEMPTS = 6
_AIM = 0.97
"""Budgets aim at this share of the room, so that most first attempts fit."""
_FULL_ENOUGH = 0.9
"""An attempt that fills this share of the room is kept without trying a larger budget."""


def encode(value: Any) -> str:
    """base64(gzip(compact JSON)): the form app data travels in."""
    return _b64(_gzip(orjson.dumps(value)))


def decode(text: str) -> Any:
    """The app data an `encode`d text carries."""
    return orjson.loads(gzip.decompress(base64.b64decode(text, validate=True)))


def _gzip(raw: bytes) -> bytes:
    return gzip.compress(raw, compresslevel=GZIP_LEVEL, mtime=0)


def _b64(packed: bytes) -> str:
    return base64.b64encode(packed).decode("ascii")


def _b64_len(size: int) -> int:
    return 4 * math.ceil(size / 3)


@dataclass(frozen=True, slots=True)
class Fitted:
    """The outcome of fitting app data into the result.

    `encoded` is None when it could not fit. `raw_bytes` is the size of the JSON that was
    encoded (the last attempt's when it did not fit); `simplification` reports what rounding
    and simplification did to the route lines (None: left as they were).
    """

    encoded: str | None
    raw_bytes: int
    simplification: Simplification | None = None


def fit(app_data: Any, room: int, *, refetchable: bool = False) -> Fitted:
    """Encode `app_data` into at most `room` characters, altering only route lines."""
    routes = [] if refetchable else list(find_routes(app_data))
    if not routes:
        raw = orjson.dumps(app_data)
        if len(raw) > room * _NEVER_SHRINKS:
            return Fitted(None, len(raw))
        encoded = _b64(_gzip(raw))
        return Fitted(encoded if len(encoded) <= room else None, len(raw))
    return _Fitter(app_data, routes, room).run()


class _Fitter:
    """Fits app data whose route lines may be rounded and simplified.

    Sizes are in compressed bytes until the end (`room` characters of base64 hold
    `room * 3 // 4` bytes); the skeleton is the app data without its routes' points.
    """

    def __init__(self, app_data: Any, routes: list[RouteLine], room: int) -> None:
        self.app_data = app_data
        self.routes = routes
        self.room = room
        self.room_bytes = room * 3 // 4
        self.points = sum(r.size for r in routes)
        self.last_raw = self.last_packed = 0

    def run(self) -> Fitted:
        skeleton, per_point = self._measure()
        if _b64_len(int(skeleton + per_point * self.points)) <= self.room * 1.1:
            every = [np.arange(r.size) for r in self.routes]
            if all(_has_5_decimals(r.xy) for r in self.routes):  # rounding changes nothing
                as_is = self._attempt(every)
                if as_is is not None:
                    return Fitted(*as_is)
            else:
                exact = orjson.dumps(self.app_data)
                encoded = _b64(_gzip(exact))
                if len(encoded) <= self.room:
                    return Fitted(encoded, len(exact))
                rounded = self._attempt(every)
                if rounded is not None:
                    return Fitted(*rounded, self._report(self.points, ROUNDING_ERROR_M))
        return self._simplified(skeleton, per_point)

    def _measure(self) -> tuple[float, float]:
        """Compressed bytes of the skeleton, and per point of the whole lines (from a sample)."""
        longest = max(self.routes, key=lambda r: r.size)
        start = max(0, longest.size // 2 - _SAMPLE_POINTS // 2)
        sample = longest.xy[start : start + _SAMPLE_POINTS]
        per_point = len(_gzip(orjson.dumps(point_objects(sample)))) / len(sample)
        skeleton = len(_gzip(self._json([np.empty(0, np.int64)] * len(self.routes))))
        return skeleton, per_point

    def _first_budget(self, lines_room: float, per_point: float) -> int:
        """The budget whose thinned lines should fill `lines_room` bytes (THINNING_COST)."""
        budget = lines_room / per_point
        for _ in range(3):
            share = min(1.0, max(budget, 1.0) / self.points)
            budget = lines_room / (per_point * (1 + THINNING_COST * math.log(1 / share)))
        return int(budget)

    def _simplified(self, skeleton: float, per_point: float) -> Fitted:
        needed = sum(len(r.required) for r in self.routes) + 2 * len(self.routes)
        budget = min(self.points - 1, self._first_budget((self.room_bytes - skeleton) * _AIM, per_point))
        best: tuple[str, int, int, float] | None = None
        tried: set[int] = set()
        for _ in range(_MAX_ATTEMPTS):
            budget = max(budget, needed)  # the fewest vertices the indexes allow: try them before giving up
            if budget in tried:
                break
            tried.add(budget)
            kept, error = self._simplify(budget)
            attempt = self._attempt(kept)
            points = sum(len(k) for k in kept)
            if attempt is not None and (best is None or points > best[2]):
                best = (attempt[0], attempt[1], points, error)
            if attempt is not None and (self.last_packed >= self.room_bytes * _FULL_ENOUGH or points >= self.points):
                break
            lines = max(1.0, self.last_packed - skeleton)
            budget = min(self.points - 1, int(budget * (self.room_bytes - skeleton) * _AIM / lines))
        if best is None:
            return Fitted(None, self.last_raw)
        encoded, raw, points, error = best
        return Fitted(encoded, raw, self._report(points, error + ROUNDING_ERROR_M))

    def _simplify(self, budget: int) -> tuple[list[np.ndarray], float]:
        """Each route simplified to its share of `budget` (by its point count)."""
        kept, error = [], 0.0
        for route in self.routes:
            share = max(len(route.required) + 2, budget * route.size // self.points)
            indices, route_error = simplify_indices(route.xy, share, required=route.required)
            kept.append(indices)
            error = max(error, route_error)
        return kept, error

    def _attempt(self, kept: list[np.ndarray]) -> tuple[str, int] | None:
        """The app data with each route's line reduced to `kept` and rounded, if it fits."""
        raw = self._json(kept)
        packed = _gzip(raw)
        self.last_raw, self.last_packed = len(raw), len(packed)
        return (_b64(packed), len(raw)) if _b64_len(len(packed)) <= self.room else None

    def _json(self, kept: list[np.ndarray]) -> bytes:
        """The app data's JSON with each route's line reduced to `kept` and rounded."""
        replaced = {id(route.route): route.rebuilt(indices) for route, indices in zip(self.routes, kept, strict=True)}
        return orjson.dumps(_substituted(self.app_data, replaced))

    def _report(self, points: int, error: float) -> Simplification:
        return Simplification(original_points=self.points, points=points, max_error_m=math.ceil(error))


def _has_5_decimals(xy: np.ndarray) -> bool:
    """Whether every coordinate is already what rounding to 5 decimals would write."""
    return bool(np.array_equal(np.rint(xy * 1e5) / 1e5, xy))


def _substituted(value: Any, replaced: dict[int, dict[str, Any]]) -> Any:
    """`value` with the objects in `replaced` (by identity) swapped; other branches shared."""
    if id(value) in replaced:
        return replaced[id(value)]
    if isinstance(value, dict):
        return {k: _substituted(v, replaced) for k, v in value.items()}
    if isinstance(value, list):
        return [_substituted(v, replaced) for v in value]
    return value
