"""Long Calculate Route answers made up deterministically, for fitting tests and bench/.

No real long route is public, so these imitate one: a line from A to B that wanders at several
scales (tens of kilometres down to tens of metres, like roads do), points unevenly spaced about
80 m apart, 5 decimals as TomTom sends them, and the sections that point into the line
(travel mode, countries, traffic, tolls), plus one progress point every 250 vertices.

The three sizes of ADR 0008: 8,240 points (Amsterdam to Berlin), 20,571 (Amsterdam to Madrid,
through Paris: two legs) and 39,414 (Lisbon to Warsaw).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

AMSTERDAM, BERLIN = (4.9041, 52.3676), (13.405, 52.52)
PARIS, MADRID = (2.3522, 48.8566), (-3.7038, 40.4168)
LISBON, WARSAW = (-9.1393, 38.7223), (21.0122, 52.2297)

ROUTES = {
    8_240: ((AMSTERDAM, BERLIN), 1),
    20_571: ((AMSTERDAM, PARIS, MADRID), 2),
    39_414: ((LISBON, WARSAW), 3),
}
"""Point count -> (stops, seed)."""

M_PER_DEG = 111_195.0


def _leg_line(a: tuple[float, float], b: tuple[float, float], points: int, rng: np.random.Generator) -> np.ndarray:
    """(points, 2) [lon, lat] from a to b, wandering sideways, unevenly spaced, 5 decimals."""
    steps = rng.lognormal(mean=0.0, sigma=0.6, size=points - 1)
    t = np.concatenate(([0.0], np.cumsum(steps) / steps.sum()))
    cos_lat = math.cos(math.radians((a[1] + b[1]) / 2))
    dx, dy = (b[0] - a[0]) * cos_lat * M_PER_DEG, (b[1] - a[1]) * M_PER_DEG
    length = math.hypot(dx, dy)
    normal = np.array([-dy, dx]) / length
    offset = np.zeros_like(t)
    for amplitude_m, cycles in ((length * 0.04, 2), (3_000, 35), (400, 300), (40, 2_500)):
        phase = rng.uniform(0, 2 * math.pi)
        offset += amplitude_m * np.sin(2 * math.pi * cycles * t + phase) * np.sin(math.pi * t)
    east = t * dx + offset * normal[0]
    north = t * dy + offset * normal[1]
    lon = a[0] + east / (cos_lat * M_PER_DEG)
    lat = a[1] + north / M_PER_DEG
    return np.round(np.column_stack((lon, lat)), 5)


def route_answer(points: int) -> dict[str, Any]:
    """A Calculate Route answer whose one route's line has `points` points (one of `ROUTES`)."""
    stops, seed = ROUTES[points]
    rng = np.random.default_rng(seed)
    legs_count = len(stops) - 1
    joined = points + legs_count - 1  # a leg starts with the point the previous one ended on
    sizes = [joined // legs_count + (1 if i < joined % legs_count else 0) for i in range(legs_count)]
    legs, lines = [], []
    for (a, b), size in zip(itertools.pairwise(stops), sizes, strict=True):
        line = _leg_line(a, b, size, rng)
        lines.append(line)
        legs.append(
            {
                "summary": {"lengthInMeters": int(size * 80), "travelTimeInSeconds": int(size * 3.2)},
                "points": [{"latitude": float(lat), "longitude": float(lon)} for lon, lat in line.tolist()],
            }
        )
    last = points - 1
    sections: list[dict[str, Any]] = [
        {"startPointIndex": 0, "endPointIndex": last, "sectionType": "TRAVEL_MODE", "travelMode": "car"}
    ]
    borders = np.sort(rng.choice(np.arange(200, last - 200), size=4, replace=False))
    for start, end, country in zip([0, *borders], [*borders, last], ["PRT", "ESP", "FRA", "DEU", "POL"], strict=True):
        sections.append(
            {"startPointIndex": int(start), "endPointIndex": int(end), "sectionType": "COUNTRY", "countryCode": country}
        )
    for start in range(150, last - 300, 700):
        end = start + int(rng.integers(10, 250))
        sections.append(
            {
                "startPointIndex": start,
                "endPointIndex": end,
                "sectionType": "TRAFFIC",
                "simpleCategory": "JAM",
                "magnitudeOfDelay": int(rng.integers(1, 4)),
                "delayInSeconds": int(rng.integers(30, 900)),
                "effectiveSpeedInKmh": int(rng.integers(5, 60)),
            }
        )
    for start in range(900, last - 900, 5_000):
        sections.append({"startPointIndex": start, "endPointIndex": start + 600, "sectionType": "TOLL_ROAD"})
    progress = [
        {"pointIndex": i, "travelTimeInSeconds": int(i * 3.2), "distanceInMeters": i * 80}
        for i in [*range(0, last, 250), last]
    ]
    summary = {
        "lengthInMeters": points * 80,
        "travelTimeInSeconds": int(points * 3.2),
        "trafficDelayInSeconds": 840,
        "trafficLengthInMeters": 12_000,
        "departureTime": "2026-11-29T09:00:00+01:00",
        "arrivalTime": "2026-11-30T21:00:00+01:00",
    }
    route = {"summary": summary, "legs": legs, "sections": sections, "progress": progress}
    return {"formatVersion": "0.0.12", "routes": [route]}


def line_of(answer: dict[str, Any], route: int = 0) -> list[tuple[float, float]]:
    """The route's line as (lon, lat) pairs, what indexes count along: the legs joined, a leg's
    first point left out when it is where the previous leg ended."""
    line: list[tuple[float, float]] = []
    for leg in answer["routes"][route]["legs"]:
        points = [(p["longitude"], p["latitude"]) for p in leg["points"]]
        line.extend(points[1:] if line and points and points[0] == line[-1] else points)
    return line
